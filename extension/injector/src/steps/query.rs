//! Finding a step's elements: its selector rendered, the element it names (or ELEMENT_NOT_FOUND),
//! and the `wait` step's wait for one to appear or go (moved out of `steps.rs` as it was).

use super::*;

impl<'d, D: PageDom> Run<'d, D> {
    /// The element `selector` (a template) finds in `scope` now, or ELEMENT_NOT_FOUND.
    /// Absent `selector`: the scope element itself (the document element at the top).
    pub(super) fn element(
        &self,
        scope: Option<&D::Node>,
        selector: Option<&str>,
        label: &str,
    ) -> Result<D::Node, WireError> {
        match selector {
            Some(selector) => {
                let selector = self.selector(selector, label)?;
                self.find(scope, &selector, label)
            }
            None => Ok(scope.cloned().unwrap_or_else(|| self.dom.root())),
        }
    }

    /// The element a step acts on (see [`Run::element`]) and its name for errors: the selector,
    /// or the element's description when the step acts on its scope.
    pub(super) fn target(
        &self,
        scope: Option<&D::Node>,
        selector: Option<&str>,
        label: &str,
    ) -> Result<(D::Node, String), WireError> {
        let node = self.element(scope, selector, label)?;
        let who = match selector {
            Some(selector) => format!("`{}`", self.selector(selector, label)?),
            None => input::describe(self.dom, &node),
        };
        Ok((node, who))
    }

    /// How long an action waits for its covered element to come free: [`COVERED_PATIENCE_MS`], or
    /// what is left of the call.
    pub(super) fn patience(&self) -> f64 {
        (self.deadline - self.dom.now_ms()).clamp(0.0, COVERED_PATIENCE_MS)
    }

    /// Sets `names` to `null`, so a branch or loop that did not run leaves them defined.
    pub(super) fn clear(&mut self, names: &[&str]) {
        for name in names {
            self.vars.insert((*name).to_owned(), Value::Null);
        }
    }

    /// Waits for a DOM change (at most `left_ms`, at most [`POLL_MS`]), unless cancelled.
    pub(super) async fn pause(&self, left_ms: f64, label: &str) -> Result<(), WireError> {
        if self.cancelled.get() {
            return Err(fail(
                ErrorCode::Cancelled,
                label,
                "the call was cancelled while waiting",
            ));
        }
        self.dom.settle(left_ms.min(POLL_MS)).await;
        Ok(())
    }

    pub(super) fn selector(&self, template: &str, label: &str) -> Result<String, WireError> {
        template::render_selector(template, &self.vars).map_err(|e| template_error(label, e))
    }

    /// `template` rendered as text with the call's variables (a value to type, a text to find).
    pub(super) fn text(&self, template: &str, label: &str) -> Result<String, WireError> {
        template::render_text(template, &self.vars).map_err(|e| template_error(label, e))
    }

    pub(super) fn query(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<Option<D::Node>, WireError> {
        // `:scope` is the scope element itself (a page tool acting on the element it found).
        if let (":scope", Some(scope)) = (selector, scope) {
            return Ok(Some(scope.clone()));
        }
        match Locator::parse(selector) {
            Ok(Locator::Css(css)) => self
                .dom
                .query(scope, &css)
                .map_err(|why| bad_selector(label, selector, &why)),
            _ => Ok(self.query_all(scope, selector, label)?.into_iter().next()),
        }
    }

    /// The elements `selector` (CSS or a locator, `bridge::locator`) names inside `scope`.
    pub(super) fn query_all(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<Vec<D::Node>, WireError> {
        let locator =
            Locator::parse(selector).map_err(|why| bad_selector(label, selector, &why))?;
        locate::query_all(self.dom, scope, &locator)
            .map_err(|why| bad_selector(label, selector, &why))
    }

    pub(super) fn find(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<D::Node, WireError> {
        self.query(scope, selector, label)?.ok_or_else(|| {
            fail(
                ErrorCode::ElementNotFound,
                label,
                bridge::step_failure::no_element(selector),
            )
        })
    }

    pub(super) async fn wait(
        &mut self,
        scope: Option<&D::Node>,
        selector: &str,
        until: WaitUntil,
        timeout_ms: Option<u64>,
        label: &str,
    ) -> Result<(), WireError> {
        let start = self.dom.now_ms();
        let own_deadline = timeout_ms.map(|t| start + t as f64);
        let deadline = own_deadline.map_or(self.deadline, |d| d.min(self.deadline));
        loop {
            let satisfied = match until {
                WaitUntil::Attached => self.query(scope, selector, label)?.is_some(),
                WaitUntil::Gone => self.query(scope, selector, label)?.is_none(),
                WaitUntil::Visible => self
                    .query_all(scope, selector, label)?
                    .iter()
                    .any(|n| self.dom.is_visible(n)),
            };
            if satisfied {
                return Ok(());
            }
            let now = self.dom.now_ms();
            if now >= deadline {
                let state = match until {
                    WaitUntil::Visible => "visible",
                    WaitUntil::Attached => "in the page",
                    WaitUntil::Gone => "gone",
                };
                return Err(fail(
                    ErrorCode::Timeout,
                    label,
                    bridge::step_failure::still_not(selector, state, now - start),
                ));
            }
            self.pause(deadline - now, label).await?;
        }
    }
}
