//! The step interpreter: runs a tool's declarative steps against a [`Dom`] within the call's
//! deadline, honouring cancellation, and names the failing step (`steps[1].steps[0] (click)`),
//! its selector and the reason in every error.

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;

use bridge::adapter::{
    Condition, FetchBody, Field, Loop, OptionChoice, Read, Step, TextMatch, ToolDef, WaitUntil,
    assigned_names,
};
use bridge::fetch::{self, MAX_RESPONSE_BYTES};
use bridge::locator::Locator;
use bridge::template::{self, TemplateError, Vars};
use bridge::{ErrorCode, WireError};
use serde_json::{Map, Value};

use crate::dom::{FetchFailure, Leaving};
use crate::input::{self, FillCheck, Refusal};
use crate::page::{PageDom, locate};
use bridge::dialog::DialogAnswer;
pub use perform::{Act, act_on};

/// Longest pause between two checks of a waited-for condition when the DOM does not change
/// (visibility can change through CSS alone).
const POLL_MS: f64 = 50.0;

/// How long a click or hover waits for a covered element to come free (an animation ending)
/// before it answers NOT_ACTIONABLE.
pub const COVERED_PATIENCE_MS: f64 = 1000.0;

/// How long a submitted form (its `submit` event not cancelled) has to start its navigation
/// before the step counts as staying on the page.
const SUBMIT_START_MS: f64 = 1000.0;

/// How a call's steps in this page ended.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The call's result (`null` without `return`).
    Finished(Value),
    /// The steps are done, and the last action set off the loading of another page (`url`):
    /// the call is answered with `value` once that page has committed.
    Landing {
        value: Value,
        /// The step that set the navigation off.
        step: String,
        url: String,
        timeout_ms: u64,
    },
    /// A `navigate` step (load `url`), or an action that set another page loading (`url` is
    /// `None`): then run the steps from `resume_at` on in the new page.
    Navigate {
        url: Option<String>,
        resume_at: usize,
        vars: Vars,
        timeout_ms: u64,
        /// The step that leads to the next page.
        step: String,
    },
}

/// Runs `tool` with `args` (already checked), from the top-level step `resume_at` on (0 for a
/// new call; after a navigation, the step after `navigate`, with the variables so far).
pub async fn run_tool<D: PageDom>(
    dom: &D,
    tool: &ToolDef,
    args: Vars,
    resume_at: usize,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Outcome, WireError> {
    let mut args = args;
    for name in tool.argument_names() {
        args.entry(name).or_insert(Value::Null);
    }
    let mut run = Run::new(dom, args, timeout_ms, cancelled);
    for (i, step) in tool.steps.iter().enumerate().skip(resume_at) {
        let label = format!("steps[{i}] ({})", step.kind());
        if let Step::Navigate { url } = step {
            let url =
                template::render_url(url, &run.vars).map_err(|e| template_error(&label, e))?;
            if !bridge::pattern::is_navigable(&url) {
                return Err(fail(
                    ErrorCode::AdapterError,
                    &label,
                    format!(
                        "{url:?} is not a page a tool may navigate to (http(s) or relative only)"
                    ),
                ));
            }
            return Ok(Outcome::Navigate {
                url: Some(url),
                resume_at: i + 1,
                timeout_ms: run.time_left(),
                vars: run.vars,
                step: label,
            });
        }
        let acts = step.acts_on_page();
        if acts {
            dom.watch_leaving();
        }
        if let Some(value) = run
            .steps(std::slice::from_ref(step), None, "steps".to_owned(), i)
            .await?
        {
            return Ok(Outcome::Finished(value));
        }
        if !acts {
            continue;
        }
        let Some(url) = run.leaving(step.navigates(), &label).await? else {
            continue;
        };
        // The page is going away: what is left runs in the next page, but a `return` (which
        // reads only variables) answers from here, once the next page has committed.
        return Ok(match tool.steps.get(i + 1) {
            None => Outcome::Landing {
                value: Value::Null,
                step: label,
                url,
                timeout_ms: run.time_left(),
            },
            Some(last @ Step::Return { .. }) => Outcome::Landing {
                value: run
                    .steps(std::slice::from_ref(last), None, "steps".to_owned(), i + 1)
                    .await
                    .map_err(WireError::maybe_performed)?
                    .unwrap_or(Value::Null),
                step: label,
                url,
                timeout_ms: run.time_left(),
            },
            Some(_) => Outcome::Navigate {
                url: None,
                resume_at: i + 1,
                timeout_ms: run.time_left(),
                vars: run.vars,
                step: label,
            },
        });
    }
    Ok(Outcome::Finished(Value::Null))
}

struct Run<'d, D: PageDom> {
    dom: &'d D,
    deadline: f64,
    timeout_ms: u64,
    cancelled: &'d Cell<bool>,
    vars: Vars,
    /// The text input `fill` focused and the value it had then: as in Chrome, Enter commits
    /// (fires `change`) only when the value differs.
    focus_value: Option<(D::Node, String)>,
    /// What the last action left to check once the page settled: a fill the page must take
    /// (the step's label, the element's name, the check).
    after_settle: Option<(String, String, FillCheck<D>)>,
    /// Set when an action was refused because its element left the page before anything was
    /// dispatched to it (`Refusal::Detached` is only ever decided before input): the step may
    /// find its element again, once.
    detached: Cell<bool>,
}

/// One round of a `for_each`: the scope its steps run in, and (over `items`) the item.
type Round<N> = (Option<N>, Option<Value>);

type StepsFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Value>, WireError>> + 'a>>;

fn fail(code: ErrorCode, label: &str, why: impl std::fmt::Display) -> WireError {
    WireError::new(code, format!("{label}: {why}"))
}

fn template_error(label: &str, e: TemplateError) -> WireError {
    fail(ErrorCode::AdapterError, label, e)
}

impl<'d, D: PageDom> Run<'d, D> {
    fn new(dom: &'d D, vars: Vars, timeout_ms: u64, cancelled: &'d Cell<bool>) -> Self {
        Run {
            dom,
            deadline: dom.now_ms() + timeout_ms as f64,
            timeout_ms,
            cancelled,
            vars,
            focus_value: None,
            after_settle: None,
            detached: Cell::new(false),
        }
    }

    fn time_left(&self) -> u64 {
        (self.deadline - self.dom.now_ms()).max(0.0) as u64
    }

    /// After top-level action `label`: where the page is going when it set another page
    /// loading. A form submitted gets a moment to start its navigation; a step declared to
    /// navigate waits for one until the call's deadline, and fails saying the action may have
    /// been performed when none starts.
    async fn leaving(&mut self, declared: bool, label: &str) -> Result<Option<String>, WireError> {
        let submit_limit = self.dom.now_ms() + SUBMIT_START_MS;
        loop {
            let leaving = self.dom.leaving();
            let limit = match leaving {
                Leaving::To(url) => return Ok(Some(url)),
                Leaving::Staying if !declared => return Ok(None),
                Leaving::Submitting if !declared => submit_limit.min(self.deadline),
                Leaving::Staying | Leaving::Submitting => self.deadline,
            };
            let now = self.dom.now_ms();
            if now >= limit {
                if !declared {
                    return Ok(None);
                }
                return Err(fail(
                    ErrorCode::Timeout,
                    label,
                    format!(
                        "is declared to lead to a new page, but none started loading within the call's {} ms",
                        self.timeout_ms
                    ),
                )
                .maybe_performed());
            }
            self.dom.leaving_changed(limit - now).await;
        }
    }
    /// Runs `steps` in `scope`; `Some(value)` when a `return` ended the call.
    fn steps<'a>(
        &'a mut self,
        steps: &'a [Step],
        scope: Option<D::Node>,
        prefix: String,
        first: usize,
    ) -> StepsFuture<'a>
    where
        'd: 'a,
    {
        Box::pin(async move {
            for (i, step) in steps.iter().enumerate() {
                let path = format!("{prefix}[{}]", first + i);
                let label = format!("{path} ({})", step.kind());
                self.may_start(&label, matches!(step, Step::Return { .. }))?;
                let mut outcome = self.step(step, scope.as_ref(), &path, &label).await;
                if outcome.is_err()
                    && self.detached.take()
                    && let Some(scope) = self.found_again(step, scope.as_ref(), &label)
                {
                    // Refused before any input reached the old element: acting on its
                    // replacement dispatches once, as a person who looks again does.
                    outcome = self.step(step, scope.as_ref(), &path, &label).await;
                    self.detached.set(false);
                }
                if let Some(value) = outcome? {
                    return Ok(Some(value));
                }
                if step.acts_on_page() {
                    self.settle_after().await?;
                }
            }
            Ok(None)
        })
    }

    /// Whether the step `label` may start: not once the call was cancelled, nor past its
    /// deadline (but a `return`, which only reads variables).
    fn may_start(&self, label: &str, returns: bool) -> Result<(), WireError> {
        if self.cancelled.get() {
            return Err(fail(
                ErrorCode::Cancelled,
                label,
                "the call was cancelled before this step",
            ));
        }
        if !returns && self.dom.now_ms() >= self.deadline {
            return Err(fail(
                ErrorCode::Timeout,
                label,
                format!("the call's {} ms ran out before this step", self.timeout_ms),
            ));
        }
        Ok(())
    }

    /// After an action: the page settles (at least a microtask checkpoint), then an edit is
    /// checked to have stuck. A page already leaving is not waited for: a fast one would be gone
    /// before the call could say where it went.
    async fn settle_after(&mut self) -> Result<(), WireError> {
        if matches!(self.dom.leaving(), Leaving::To(_)) {
            return Ok(());
        }
        crate::page::profile::span("checkpoint", self.dom.checkpoint()).await;
        match self.after_settle.take() {
            Some((label, who, check)) => check
                .verify(self.dom)
                .await
                .map_err(|r| refused(&label, &who, r)),
            None => Ok(()),
        }
    }

    async fn step(
        &mut self,
        step: &Step,
        scope: Option<&D::Node>,
        path: &str,
        label: &str,
    ) -> Result<Option<Value>, WireError> {
        match step {
            Step::Wait {
                selector,
                until,
                timeout_ms,
            } => {
                let selector = self.selector(selector, label)?;
                self.wait(scope, &selector, *until, *timeout_ms, label)
                    .await?;
            }
            Step::Click { selector, .. } | Step::Dblclick { selector } => {
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                let clicks = if matches!(step, Step::Dblclick { .. }) {
                    2
                } else {
                    1
                };
                self.perform(&node, &who, &Act::Click(clicks), label)
                    .await?;
            }
            Step::Hover { selector } => {
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                self.perform(&node, &who, &Act::Hover, label).await?;
            }
            Step::ScrollIntoView { selector } => {
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                self.perform(&node, &who, &Act::Scroll, label).await?;
            }
            Step::Blur { selector } => {
                let node = match (selector, scope) {
                    (None, None) => match self.dom.active_element() {
                        Some(node) => node,
                        None => return Ok(None),
                    },
                    _ => self.element(scope, selector.as_deref(), label)?,
                };
                self.commit_if_changed(&node);
                self.focus_value = None;
                self.dom.blur(&node);
            }
            Step::Select { selector, option } => {
                let (node, who) = self.target(scope, Some(selector), label)?;
                let (wanted, by_text) = match option {
                    OptionChoice::Value(value) => (value, false),
                    OptionChoice::Label(text) => (text, true),
                };
                let wanted = self.text(wanted, label)?;
                let act = Act::Select {
                    wanted: &wanted,
                    by_text,
                };
                self.perform(&node, &who, &act, label).await?;
            }
            Step::Check { selector } | Step::Uncheck { selector } => {
                let wanted = matches!(step, Step::Check { .. });
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                self.perform(&node, &who, &Act::Check(wanted), label)
                    .await?;
            }
            Step::Fill { selector, value } => {
                let selector = self.selector(selector, label)?;
                let value = self.text(value, label)?;
                let node = self.find(scope, &selector, label)?;
                let who = format!("`{selector}`");
                self.perform(&node, &who, &Act::Fill(&value), label).await?;
            }
            Step::Clear { selector } => {
                let selector = self.selector(selector, label)?;
                let node = self.find(scope, &selector, label)?;
                let who = format!("`{selector}`");
                self.perform(&node, &who, &Act::Fill(""), label).await?;
            }
            Step::Type {
                selector,
                value,
                at,
                nth,
            } => {
                let selector = self.selector(selector, label)?;
                let text = self.text(value, label)?;
                let caret = match at {
                    Some(at) => Some(self.caret(at, *nth, label)?),
                    None => None,
                };
                let node = self.find(scope, &selector, label)?;
                let act = Act::Type {
                    text: &text,
                    at: caret.as_ref(),
                };
                self.perform(&node, &format!("`{selector}`"), &act, label)
                    .await?;
            }
            Step::Caret { selector, at, nth } => {
                let selector = self.selector(selector, label)?;
                let caret = self.caret(at, *nth, label)?;
                let node = self.find(scope, &selector, label)?;
                self.perform(&node, &format!("`{selector}`"), &Act::Caret(&caret), label)
                    .await?;
            }
            Step::SelectText {
                selector,
                value,
                nth,
            } => {
                let selector = self.selector(selector, label)?;
                let which = match value {
                    Some(value) => Some(bridge::page_ops::TextAt {
                        text: self.text(value, label)?,
                        nth: occurrence(*nth),
                    }),
                    None => None,
                };
                let node = self.find(scope, &selector, label)?;
                let act = Act::SelectText(which.as_ref());
                self.perform(&node, &format!("`{selector}`"), &act, label)
                    .await?;
            }
            Step::Drag { selector, to } => {
                let selector = self.selector(selector, label)?;
                let to = self.selector(to, label)?;
                let node = self.find(scope, &selector, label)?;
                let onto = self.find(scope, &to, label)?;
                self.perform(&node, &format!("`{selector}`"), &Act::Drag(onto), label)
                    .await?;
            }
            Step::Press { selector, key, .. } => {
                let chord = bridge::keys::parse_chord(key)
                    .map_err(|e| fail(ErrorCode::AdapterError, label, e))?;
                match selector {
                    Some(selector) => {
                        let selector = self.selector(selector, label)?;
                        let node = self.find(scope, &selector, label)?;
                        let act = Act::Press { chord: &chord, key };
                        self.perform(&node, &format!("`{selector}`"), &act, label)
                            .await?;
                    }
                    None => {
                        let node = self.dom.active_element().unwrap_or_else(|| self.dom.root());
                        self.keys(&node, &chord, key, label).await?;
                    }
                }
            }
            Step::Upload { selector, files } => {
                let names = files::names(&self.vars, files, label)?;
                let (node, who) = self.target(scope, Some(selector), label)?;
                self.perform(&node, &who, &Act::Upload(&names), label)
                    .await?;
            }
            Step::Read {
                selector,
                read,
                into,
                optional,
            } => {
                let value = match selector {
                    Some(selector) => {
                        let selector = self.selector(selector, label)?;
                        if *read == Read::Count {
                            self.count(scope, &selector, label)?
                        } else {
                            let node = self.query(scope, &selector, label)?;
                            if node.is_none() && !optional && !read.answers_when_missing() {
                                return Err(fail(
                                    ErrorCode::ElementNotFound,
                                    label,
                                    bridge::step_failure::no_element(&selector),
                                ));
                            }
                            self.read(node.as_ref(), read)
                        }
                    }
                    None => {
                        let node = scope.cloned().unwrap_or_else(|| self.dom.root());
                        self.read(Some(&node), read)
                    }
                };
                self.vars.insert(into.clone(), value);
            }
            Step::Extract {
                selector,
                fields,
                into,
            } => {
                let selector = self.selector(selector, label)?;
                let items = self.query_all(scope, &selector, label)?;
                let mut records = Vec::with_capacity(items.len());
                for item in &items {
                    let mut record = Map::new();
                    for (name, field) in fields {
                        record.insert(name.clone(), self.field(item, field, label)?);
                    }
                    records.push(Value::Object(record));
                }
                self.vars.insert(into.clone(), Value::Array(records));
            }
            Step::Within {
                selector,
                text_selector,
                read,
                text,
                timeout_ms,
                steps,
            } => {
                let selector = self.selector(selector, label)?;
                let text_selector = match text_selector {
                    Some(ts) => Some(self.selector(ts, label)?),
                    None => None,
                };
                let (wanted, contains) = match text {
                    TextMatch::Equals(text) => (text, false),
                    TextMatch::Contains(text) => (text, true),
                };
                let wanted = self.text(wanted, label)?;
                let start = self.dom.now_ms();
                let deadline = timeout_ms.map_or(start, |t| (start + t as f64).min(self.deadline));
                loop {
                    let candidates = self.query_all(scope, &selector, label)?;
                    for candidate in &candidates {
                        let text_node = match &text_selector {
                            Some(ts) => self.query(Some(candidate), ts, label)?,
                            None => Some(candidate.clone()),
                        };
                        let matched = text_node.is_some_and(|n| {
                            let text = template::value_to_text(&self.read(Some(&n), read));
                            if contains {
                                text.contains(wanted.as_str())
                            } else {
                                text == wanted
                            }
                        });
                        if matched {
                            return self
                                .steps(steps, Some(candidate.clone()), format!("{path}.steps"), 0)
                                .await;
                        }
                    }
                    let now = self.dom.now_ms();
                    if now >= deadline {
                        let whose = match &text_selector {
                            Some(ts) => format!("whose `{ts}` text"),
                            None => "whose text".to_owned(),
                        };
                        let how = if contains { "contains" } else { "equals" };
                        let after = match timeout_ms {
                            Some(_) => format!(" after {} ms", (now - start).round()),
                            None => String::new(),
                        };
                        return Err(fail(
                            ErrorCode::ElementNotFound,
                            label,
                            format!(
                                "no `{selector}` {whose} {how} {wanted:?} ({} candidates){after}",
                                candidates.len()
                            ),
                        ));
                    }
                    self.pause(deadline - now, label).await?;
                }
            }
            Step::ForEach { over, steps, into } => {
                let (rounds, item_var): (Vec<Round<D::Node>>, _) = match over {
                    Loop::Items { items, item_var } => (
                        self.items(items, label)?
                            .into_iter()
                            .map(|item| (scope.cloned(), Some(item)))
                            .collect(),
                        Some(item_var.as_str()),
                    ),
                    Loop::Elements { selector } => {
                        let selector = self.selector(selector, label)?;
                        let elements = self.query_all(scope, &selector, label)?;
                        (
                            elements.into_iter().map(|e| (Some(e), None)).collect(),
                            None,
                        )
                    }
                };
                let over_items = item_var.is_some();
                let names = assigned_names(steps);
                self.clear(&names);
                let mut records = Vec::new();
                let total = rounds.len();
                let round_name = if over_items { "item" } else { "match" };
                for (n, (round_scope, item)) in rounds.into_iter().enumerate() {
                    let mut record = Map::new();
                    if let (Some(name), Some(item)) = (item_var, item) {
                        record.insert(name.to_owned(), item.clone());
                        self.vars.insert(name.to_owned(), item);
                    }
                    let prefix = format!("{path}.steps");
                    let outcome =
                        self.steps(steps, round_scope, prefix, 0)
                            .await
                            .map_err(|mut e| {
                                e.message
                                    .push_str(&format!(" (in {round_name} {} of {total})", n + 1));
                                e
                            })?;
                    if let Some(value) = outcome {
                        return Ok(Some(value));
                    }
                    if into.is_some() {
                        record.extend(names.iter().map(|name| {
                            (
                                name.to_string(),
                                self.vars.get(*name).cloned().unwrap_or(Value::Null),
                            )
                        }));
                        records.push(Value::Object(record));
                    }
                }
                if let Some(name) = item_var {
                    // The item is the loop's own: validation keeps it unknown after the loop.
                    self.vars.remove(name);
                }
                if let Some(into) = into {
                    self.vars.insert(into.clone(), Value::Array(records));
                }
            }
            Step::If {
                condition,
                then,
                otherwise,
            } => {
                let present = match condition {
                    Condition::Element(selector) => {
                        let selector = self.selector(selector, label)?;
                        self.query(scope, &selector, label)?.is_some()
                    }
                    Condition::Var(var) => match self.vars.get(var) {
                        None | Some(Value::Null | Value::Bool(false)) => false,
                        Some(Value::String(s)) => !s.is_empty(),
                        Some(Value::Array(a)) => !a.is_empty(),
                        Some(_) => true,
                    },
                };
                self.clear(&assigned_names(then));
                self.clear(&assigned_names(otherwise));
                let (branch, name) = if present {
                    (then, "then")
                } else {
                    (otherwise, "else")
                };
                return self
                    .steps(branch, scope.cloned(), format!("{path}.{name}"), 0)
                    .await;
            }
            Step::Frame { selector, steps } => {
                let frame = self.element(scope, Some(selector), label)?;
                let root = self.dom.frame_root(&frame).ok_or_else(|| {
                    fail(
                        ErrorCode::AdapterError,
                        label,
                        "the element is not a same-origin <iframe> with a loaded document",
                    )
                })?;
                return self
                    .steps(steps, Some(root), format!("{path}.steps"), 0)
                    .await;
            }
            Step::Navigate { .. } => {
                return Err(fail(
                    ErrorCode::AdapterError,
                    label,
                    "navigate must be a top-level step",
                ));
            }
            Step::Return { value } => {
                return template::render_value(value, &self.vars)
                    .map(Some)
                    .map_err(|e| template_error(label, e));
            }
            Step::Fail { message } => {
                let message = self.text(message, label)?;
                return Err(fail(ErrorCode::Refused, label, message));
            }
            Step::Dialog { answer } => {
                let answer = match answer {
                    DialogAnswer::Accept { text: Some(text) } => DialogAnswer::Accept {
                        text: Some(self.text(text, label)?),
                    },
                    other => other.clone(),
                };
                self.dom.answer_next_dialog(&answer);
            }
            Step::Fetch {
                url,
                into,
                body,
                timeout_ms,
            } => {
                let value = self.fetch(url, body, *timeout_ms, label).await?;
                self.vars.insert(into.clone(), value);
            }
        }
        Ok(None)
    }

    /// An action refused because its element was no longer in the page (re-rendered between
    /// being found and being acted on): the scope to run the step again in, when the element is
    /// there again — a selector that finds an element now, or a page tool's scope element that
    /// the page replaced by an equivalent one. `None`: the refusal stands.
    fn found_again(
        &self,
        step: &Step,
        scope: Option<&D::Node>,
        label: &str,
    ) -> Option<Option<D::Node>> {
        let selector = match step {
            Step::Click { selector, .. }
            | Step::Dblclick { selector }
            | Step::Hover { selector }
            | Step::Check { selector }
            | Step::Uncheck { selector } => selector.as_deref(),
            Step::Press {
                selector: Some(selector),
                ..
            } => Some(selector.as_str()),
            Step::Fill { selector, .. }
            | Step::Clear { selector }
            | Step::Type { selector, .. }
            | Step::Caret { selector, .. }
            | Step::SelectText { selector, .. }
            | Step::Select { selector, .. }
            | Step::Drag { selector, .. } => Some(selector.as_str()),
            // Steps that hold other steps retried theirs themselves; the others refuse no element
            // as gone (a press without a selector goes to the focused element, an upload's
            // element is checked by `files`).
            Step::Press { selector: None, .. }
            | Step::Upload { .. }
            | Step::Wait { .. }
            | Step::ScrollIntoView { .. }
            | Step::Blur { .. }
            | Step::Read { .. }
            | Step::Extract { .. }
            | Step::Within { .. }
            | Step::ForEach { .. }
            | Step::If { .. }
            | Step::Frame { .. }
            | Step::Navigate { .. }
            | Step::Return { .. }
            | Step::Fail { .. }
            | Step::Dialog { .. }
            | Step::Fetch { .. } => return None,
        };
        match selector.map(|s| self.selector(s, label)) {
            Some(Ok(selector)) if selector != ":scope" => {
                // The step finds its element again itself, in the same scope.
                let present = self.query(scope, &selector, label).ok().flatten();
                present
                    .is_some_and(|node| self.dom.is_connected(&node))
                    .then(|| scope.cloned())
            }
            // A step on its scope element: the scope is the step's own to find again.
            Some(Ok(_)) | Some(Err(_)) | None => None,
        }
    }

    /// An action's refusal as the step's error; notes one that found its element gone.
    fn refused(&self, label: &str, who: &str, refusal: Refusal) -> WireError {
        if refusal == Refusal::Detached {
            self.detached.set(true);
        }
        refused(label, who, refusal)
    }

    /// The chord's key events (see [`input::press`]); the default action of Enter on a text
    /// input whose value changed since `fill` focused it is the `change` Chrome fires natively
    /// (TodoMVC's vanillajs adds a todo on `change`, its React variant on keydown), then implicit
    /// submission of its form.
    fn press(&mut self, node: &D::Node, chord: &bridge::keys::Chord) {
        let enter_in_text_input = chord.key.key == "Enter" && self.dom.is_text_input(node);
        let dom = self.dom;
        let shift = chord
            .resolved_modifiers(dom.platform())
            .contains(&bridge::keys::Modifier::Shift);
        // A printable key types into the focused field: the browser's default action, which
        // synthetic keys do not get.
        let typed = input::typed_by(chord, shift);
        input::press(dom, node, chord, || {
            if enter_in_text_input {
                self.commit_if_changed(node);
                dom.submit_implicitly(node);
            } else if let Some(typed) = &typed {
                input::key_types(dom, node, typed);
            }
        });
    }

    /// A `type` or `caret` step's `at` (a template) as a caret place.
    fn caret(
        &self,
        at: &str,
        nth: Option<u64>,
        label: &str,
    ) -> Result<bridge::page_ops::Caret, WireError> {
        let at = self.text(at, label)?;
        Ok(bridge::page_ops::Caret::parse(&at, occurrence(nth)))
    }

    /// Fires `change` on `node` when `fill` focused it and its value changed since (what the
    /// browser does on Enter in a text input and when a field loses the focus).
    fn commit_if_changed(&mut self, node: &D::Node) {
        let now = self.dom.value(node).unwrap_or_default();
        if let Some((focused, before)) = &mut self.focus_value
            && self.dom.same(focused, node)
            && *before != now
        {
            *before = now;
            self.dom.dispatch_change(node);
        }
    }
}

/// A step's `nth` (from 1; the first when absent).
fn occurrence(nth: Option<u64>) -> usize {
    nth.map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn refusal_code(refusal: &Refusal) -> ErrorCode {
    match refusal {
        Refusal::NotEditable => ErrorCode::AdapterError,
        Refusal::NoEffect(_) => ErrorCode::NoEffect,
        Refusal::NoSuchText(_) => ErrorCode::ElementNotFound,
        Refusal::Unsupported(_) => ErrorCode::InvalidArgs,
        Refusal::Trusted(error) => error.code,
        Refusal::Detached
        | Refusal::Disabled
        | Refusal::ReadOnly
        | Refusal::Covered { .. }
        | Refusal::OutOfView { .. } => ErrorCode::NotActionable,
    }
}

/// An action the element could not take (or did not take), named.
fn refused(label: &str, who: &str, refusal: Refusal) -> WireError {
    fail(refusal_code(&refusal), label, format!("{who} {refusal}"))
}

fn bad_selector(label: &str, selector: &str, why: &str) -> WireError {
    fail(
        ErrorCode::AdapterError,
        label,
        format!("invalid selector `{selector}`: {why}"),
    )
}

mod fetch_step;
mod files;
mod perform;
mod query;
mod read;

#[cfg(test)]
use read::url_part;

#[cfg(test)]
mod fetch_tests;
#[cfg(test)]
mod files_tests;
#[cfg(test)]
mod leaving_tests;
#[cfg(test)]
mod refind_tests;
#[cfg(test)]
mod tests;
