//! The gate every page tool passes: [`Permission::authorize`] lets a call act on an origin only
//! once the user allowed it. An origin without a grant is asked about through MCP elicitation when
//! the client declared it can ask its user; otherwise (or when the client cannot ask after all) the
//! call fails at once with `PERMISSION_REQUIRED`, whose text says exactly how the user allows it.
//! `--allow-all-origins` (automation, tests) allows page tools everywhere, never trusted input.
//! The grants themselves are `grants.rs`'s.

use std::time::Duration;

use bridge::{ErrorCode, WireError};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

pub use crate::grants::Need;
use crate::grants::{Grants, GrantsError};

/// How long the user has to answer the question.
const ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The one boolean of the question's form.
const ALLOW_FIELD: &str = "allow";

/// What the gate let a call through with: how its input reaches the page, decided with the
/// permission from the same read of the grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    /// The user turned trusted input on for the origin: input goes through Chrome's debugger.
    pub trusted_input: bool,
}

pub struct Permission {
    grants: Grants,
    allow_all_origins: bool,
    /// One question at a time: a second call for the same origin waits for the first answer
    /// instead of asking twice.
    asking: tokio::sync::Mutex<()>,
}

impl Permission {
    pub fn new(grants: Grants, allow_all_origins: bool) -> Permission {
        Permission {
            grants,
            allow_all_origins,
            asking: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether `need` is allowed on `origin` now, without asking.
    pub fn allowed(&self, origin: &str, need: Need) -> bool {
        self.check(origin, need).is_some()
    }

    /// What the user allowed on `origin` now, when it covers `need`: one read of the grants.
    fn check(&self, origin: &str, need: Need) -> Option<Allowed> {
        // The gate's origin is a page's, serialized by `Origin`: anything else has no grant.
        let grant = bridge::Origin::parse(origin)
            .ok()
            .and_then(|origin| self.grants.of(&origin));
        let trusted_input = grant.as_ref().is_some_and(|g| g.allows(Need::TrustedInput));
        let allowed = (self.allow_all_origins && need == Need::PageTools)
            || grant.is_some_and(|g| g.allows(need));
        allowed.then_some(Allowed { trusted_input })
    }

    /// What the user allowed on `origin` when it covers `need`, asking them (through `peer`) if
    /// they have not been asked and the client can ask; else `PERMISSION_REQUIRED` saying how to
    /// allow it.
    pub async fn authorize(
        &self,
        peer: &Peer<RoleServer>,
        origin: &str,
        need: Need,
    ) -> Result<Allowed, WireError> {
        if let Some(allowed) = self.check(origin, need) {
            return Ok(allowed);
        }
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Err(required(origin, need, None));
        }
        let _turn = self.asking.lock().await;
        if let Some(allowed) = self.check(origin, need) {
            return Ok(allowed);
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question(origin, need),
            requested_schema: form(need),
        };
        let answer = match peer
            .create_elicitation_with_timeout(params, Some(ASK_TIMEOUT))
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                tracing::info!(error = %e, origin, "the client could not ask its user");
                return Err(required(origin, need, None));
            }
        };
        let allowed = match answer.action {
            ElicitationAction::Accept => {
                answer.content.as_ref().and_then(|c| c.get(ALLOW_FIELD))
                    != Some(&Value::Bool(false))
            }
            // Decline, Cancel, and whatever later protocol versions add: not a yes.
            _ => false,
        };
        if !allowed {
            tracing::info!(origin, ?need, "the user declined");
            return Err(required(origin, need, Some("the user declined when asked")));
        }
        bridge::Origin::parse(origin)
            .map_err(GrantsError::from)
            .and_then(|origin| self.grants.allow(&origin, need))
            .map_err(|e: GrantsError| WireError::new(ErrorCode::Internal, e.to_string()))?;
        tracing::info!(origin, ?need, "the user allowed");
        // A yes to page tools allows them alone (a revoke took trusted input with them).
        Ok(Allowed {
            trusted_input: need == Need::TrustedInput,
        })
    }

    /// After an action the page did not take (`no_effect`) on `origin` without trusted input:
    /// asks the user whether to turn it on, when the client can ask. A yes is recorded and the
    /// error says to call again (the action had no effect, so doing it again is safe; the caller
    /// decides); otherwise the error is returned as it was (it already names the setting).
    pub async fn offer_trusted_input(
        &self,
        peer: &Peer<RoleServer>,
        origin: &str,
        mut no_effect: WireError,
    ) -> WireError {
        let can_ask = peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form);
        if !can_ask || self.allowed(origin, Need::TrustedInput) {
            return no_effect;
        }
        if self
            .authorize(peer, origin, Need::TrustedInput)
            .await
            .is_ok()
        {
            no_effect = crate::hub::text::trusted_input_turned_on(no_effect, origin);
        }
        no_effect
    }
}

/// The question the user reads.
fn question(origin: &str, need: Need) -> String {
    match need {
        Need::PageTools => format!(
            "Allow the assistant to read and act on {origin} in your browser, with your \
             logins there (page tools: read, click, type, screenshots)? Tabwire remembers \
             your yes; revoke it any time with `tabwire revoke {origin}`."
        ),
        Need::TrustedInput => format!(
            "Allow trusted input on {origin}? Some pages ignore synthetic clicks and keys; with \
             trusted input Tabwire acts through Chrome's debugger, and Chrome shows a \
             \"Tabwire started debugging this browser\" bar while it does. Revoke it any time \
             with `tabwire revoke --trusted-input {origin}`."
        ),
    }
}

fn form(need: Need) -> ElicitationSchema {
    let title = match need {
        Need::PageTools => "Allow page tools on this site",
        Need::TrustedInput => "Allow trusted input on this site",
    };
    ElicitationSchema::builder()
        .optional_bool(ALLOW_FIELD, true)
        .description(title)
        .build()
        .expect("a one-boolean form is a valid elicitation schema")
}

/// `PERMISSION_REQUIRED` for `need` on `origin`: what is missing and the two ways to allow it.
pub fn required(origin: &str, need: Need, why: Option<&str>) -> WireError {
    let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
    let message = match need {
        Need::PageTools => format!(
            "page tools are not allowed on {origin}{why}. Ask the user to allow them by \
             running `tabwire allow {origin}` (it takes effect at once), then call again."
        ),
        Need::TrustedInput => format!(
            "trusted input is off on {origin}{why}. Ask the user to turn it on by running \
             `tabwire allow --trusted-input {origin}` (it takes effect at once), then call again."
        ),
    };
    WireError::new(ErrorCode::PermissionRequired, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_error;

    #[test]
    fn the_error_says_how_to_allow() {
        let error = required("https://a.example", Need::PageTools, None);
        let how = "`tabwire allow https://a.example`";
        assert_error(&error, ErrorCode::PermissionRequired, how);
        let error = required("https://a.example", Need::TrustedInput, Some("declined"));
        assert!(
            error
                .message
                .contains("`tabwire allow --trusted-input https://a.example`")
        );
        assert!(error.message.contains("(declined)"));
    }

    #[test]
    fn allow_all_origins_allows_page_tools_only() {
        let dir = tempfile::tempdir().unwrap();
        let permission = Permission::new(Grants::new(dir.path().join("grants.json")), true);
        assert!(permission.allowed("https://a.example", Need::PageTools));
        assert!(!permission.allowed("https://a.example", Need::TrustedInput));
        let strict = Permission::new(Grants::new(dir.path().join("grants.json")), false);
        assert!(!strict.allowed("https://a.example", Need::PageTools));
    }

    #[test]
    fn the_gates_answer_carries_the_trusted_input_grant() {
        let dir = tempfile::tempdir().unwrap();
        let grants = Grants::new(dir.path().join("grants.json"));
        let permission = Permission::new(grants.clone(), false);
        let origin = "https://a.example";
        let allowed = |trusted_input| Some(Allowed { trusted_input });
        assert_eq!(permission.check(origin, Need::PageTools), None);
        // Page tools first, then trusted input: the page tools' answer carries the second grant.
        for (grant, trusted_input) in [(Need::PageTools, false), (Need::TrustedInput, true)] {
            grants
                .allow(&bridge::Origin::parse(origin).unwrap(), grant)
                .unwrap();
            let answer = permission.check(origin, Need::PageTools);
            assert_eq!(answer, allowed(trusted_input), "after {grant:?}");
        }
        assert_eq!(permission.check(origin, Need::TrustedInput), allowed(true));
        // --allow-all-origins never turns trusted input on by itself.
        let all = Permission::new(grants, true);
        assert_eq!(
            all.check("https://b.example", Need::PageTools),
            allowed(false)
        );
        assert_eq!(all.check(origin, Need::PageTools), allowed(true));
    }

    #[test]
    fn the_question_explains_the_debugging_bar_for_trusted_input() {
        assert!(question("https://a.example", Need::TrustedInput).contains("debugging"));
        let schema = serde_json::to_value(form(Need::PageTools)).unwrap();
        assert_eq!(schema["properties"][ALLOW_FIELD]["type"], "boolean");
    }
}
