//! How a failed adapter step names the element it no longer finds, decided once: the injector
//! writes its error this way ([`no_element`], [`still_not`]), and the server reads the step and
//! the locator back ([`StepFailure::of`]) to tell the model that the site may have changed and
//! page tools still work there, and for `tabwire adapters test`'s table.

use crate::{ErrorCode, WireError};

/// `<label>: no element matches `<locator>``: the message of a step whose element is missing.
pub fn no_element(locator: &str) -> String {
    format!("no element matches `{locator}`")
}

/// The message of a `wait` step whose element never reached `state` ("visible", "in the page",
/// "gone") within `ms`.
pub fn still_not(locator: &str, state: &str, ms: f64) -> String {
    format!("`{locator}` was still not {state} after {} ms", ms.round())
}

/// The step (`steps[2] (click)`) and the locator a failed call names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFailure {
    pub step: String,
    pub locator: String,
}

impl StepFailure {
    /// The step and locator of an `ELEMENT_NOT_FOUND` or `TIMEOUT` error written by
    /// [`no_element`] or [`still_not`]; `None` for every other error.
    pub fn of(error: &WireError) -> Option<StepFailure> {
        if !matches!(error.code, ErrorCode::ElementNotFound | ErrorCode::Timeout) {
            return None;
        }
        let (step, why) = error.message.split_once("): ")?;
        let locator = match why.strip_prefix("no element matches `") {
            Some(rest) => rest.strip_suffix('`')?,
            None => {
                let rest = why.strip_prefix('`')?;
                let end = rest.rfind("` was still not ")?;
                &rest[..end]
            }
        };
        Some(StepFailure {
            step: format!("{step})"),
            locator: locator.to_owned(),
        })
    }

    /// What the model is told after such an error.
    pub fn hint(&self) -> String {
        format!(
            ". The locator `{}` of {} no longer matches this page (the site may have changed); \
             page tools still work here: page_find or page_snapshot finds the element and its \
             robust locator, to finish the task and to save a fixed adapter with site_save.",
            self.locator, self.step
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: ErrorCode, message: String) -> WireError {
        WireError::new(code, message)
    }

    #[test]
    fn the_step_and_locator_are_read_back_from_what_the_injector_writes() {
        let missing = error(
            ErrorCode::ElementNotFound,
            format!(
                "steps[1].steps[0] (click): {}",
                no_element("role=button[name=\"Send `now`\"]")
            ),
        );
        assert_eq!(
            StepFailure::of(&missing),
            Some(StepFailure {
                step: "steps[1].steps[0] (click)".into(),
                locator: "role=button[name=\"Send `now`\"]".into(),
            })
        );
        let waited = error(
            ErrorCode::Timeout,
            format!(
                "steps[0] (wait): {}",
                still_not("#list .item", "visible", 1999.6)
            ),
        );
        let failure = StepFailure::of(&waited).unwrap();
        assert_eq!(failure.locator, "#list .item");
        assert_eq!(failure.step, "steps[0] (wait)");
        assert!(failure.hint().contains("page tools still work here"));
    }

    #[test]
    fn other_errors_name_no_locator() {
        for (code, message) in [
            (
                ErrorCode::Timeout,
                "steps[2] (click): the call's 100 ms ran out before this step",
            ),
            (
                ErrorCode::Refused,
                "steps[0] (fail): no element matches `x`",
            ),
            (
                ErrorCode::ElementNotFound,
                "steps[0] (select): no option with text \"L\"",
            ),
        ] {
            assert_eq!(
                StepFailure::of(&error(code, message.into())),
                None,
                "{message}"
            );
        }
    }
}
