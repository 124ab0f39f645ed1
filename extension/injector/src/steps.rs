//! The step interpreter: runs a tool's declarative steps against a [`Dom`] within the call's
//! deadline, honouring cancellation, and names the failing step (`steps[1].steps[0] (click)`),
//! its selector and the reason in every error.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;

use bridge::adapter::{Field, Read, ResponseKind, Step, ToolDef, WaitUntil, assigned_names};
use bridge::fetch::{self, MAX_RESPONSE_BYTES};
use bridge::template::{self, TemplateError, Vars};
use bridge::{ErrorCode, WireError};
use serde_json::{Map, Value};

use crate::dom::{Dom, FetchFailure};
use crate::input::{self, FillCheck, Refusal};

/// Longest pause between two checks of a waited-for condition when the DOM does not change
/// (visibility can change through CSS alone).
const POLL_MS: f64 = 50.0;

/// How long a click or hover waits for a covered element to come free (an animation ending)
/// before it answers NOT_ACTIONABLE.
const COVERED_PATIENCE_MS: f64 = 1000.0;

/// How a call's steps in this page ended.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The call's result (`null` without `return`).
    Finished(Value),
    /// A `navigate` step: load `url`, then run the steps from `resume_at` on in the new page.
    Navigate {
        url: String,
        resume_at: usize,
        vars: Vars,
        timeout_ms: u64,
    },
}

/// Runs `tool` with `args` (already checked), from the top-level step `resume_at` on (0 for a
/// new call; after a navigation, the step after `navigate`, with the variables so far).
pub async fn run_tool<D: Dom>(
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
    let mut run = Run {
        dom,
        deadline: dom.now_ms() + timeout_ms as f64,
        timeout_ms,
        cancelled,
        vars: args,
        focus_value: None,
        after_settle: None,
    };
    for (i, step) in tool.steps.iter().enumerate().skip(resume_at) {
        if let Step::Navigate { url } = step {
            let label = format!("steps[{i}] (navigate)");
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
            let left = (run.deadline - dom.now_ms()).max(0.0) as u64;
            return Ok(Outcome::Navigate {
                url,
                resume_at: i + 1,
                vars: run.vars,
                timeout_ms: left,
            });
        }
        if let Some(value) = run
            .steps(std::slice::from_ref(step), None, "steps".to_owned(), i)
            .await?
        {
            return Ok(Outcome::Finished(value));
        }
    }
    Ok(Outcome::Finished(Value::Null))
}

struct Run<'d, D: Dom> {
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
}

type StepsFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Value>, WireError>> + 'a>>;

fn fail(code: ErrorCode, label: &str, why: impl std::fmt::Display) -> WireError {
    WireError::new(code, format!("{label}: {why}"))
}

fn template_error(label: &str, e: TemplateError) -> WireError {
    fail(ErrorCode::AdapterError, label, e)
}

impl<'d, D: Dom> Run<'d, D> {
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
                if self.cancelled.get() {
                    return Err(fail(
                        ErrorCode::Cancelled,
                        &label,
                        "the call was cancelled before this step",
                    ));
                }
                if !matches!(step, Step::Return { .. }) && self.dom.now_ms() >= self.deadline {
                    return Err(fail(
                        ErrorCode::Timeout,
                        &label,
                        format!("the call's {} ms ran out before this step", self.timeout_ms),
                    ));
                }
                if let Some(value) = self.step(step, scope.as_ref(), &path, &label).await? {
                    return Ok(Some(value));
                }
                if step.acts_on_page() {
                    self.dom.checkpoint().await;
                    if let Some((label, who, check)) = self.after_settle.take() {
                        check
                            .verify(self.dom)
                            .await
                            .map_err(|r| refused(&label, &who, r))?;
                    }
                }
            }
            Ok(None)
        })
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
            Step::Click { selector } | Step::Dblclick { selector } => {
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                let clicks = if matches!(step, Step::Dblclick { .. }) {
                    2
                } else {
                    1
                };
                input::click(self.dom, &node, clicks, self.patience())
                    .await
                    .map_err(|r| refused(label, &who, r))?;
            }
            Step::Hover { selector } => {
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                input::hover(self.dom, &node, self.patience())
                    .await
                    .map_err(|r| refused(label, &who, r))?;
            }
            Step::ScrollIntoView { selector } => {
                self.dom
                    .scroll_into_view(&self.element(scope, selector.as_deref(), label)?)
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
            Step::Select {
                selector,
                value,
                label: by_label,
            } => {
                let (node, who) = self.target(scope, Some(selector), label)?;
                let (wanted, by_text) = either(value, by_label, label, "needs a value or a label")?;
                let wanted = template::render_text(wanted, &self.vars)
                    .map_err(|e| template_error(label, e))?;
                let options = self.dom.options(&node).ok_or_else(|| {
                    fail(
                        ErrorCode::AdapterError,
                        label,
                        "the element is not a <select>",
                    )
                })?;
                let index = options
                    .iter()
                    .position(|(v, t)| if by_text { t == &wanted } else { v == &wanted })
                    .ok_or_else(|| {
                        let listed: Vec<&str> = options
                            .iter()
                            .map(|(v, t)| if by_text { t.as_str() } else { v.as_str() })
                            .collect();
                        fail(
                            ErrorCode::ElementNotFound,
                            label,
                            format!(
                                "no option with {} {wanted:?} (there are: {})",
                                if by_text { "text" } else { "value" },
                                listed.join(", ")
                            ),
                        )
                    })?;
                if !self.dom.is_connected(&node) {
                    return Err(refused(label, &who, Refusal::Detached));
                }
                if self.dom.is_disabled(&node) {
                    return Err(refused(label, &who, Refusal::Disabled));
                }
                self.dom.set_selected_index(&node, index);
                self.dom.dispatch_select_input(&node);
                self.dom.dispatch_change(&node);
                if self.dom.prop(&node, "selectedIndex").as_f64() != Some(index as f64) {
                    return Err(refused(
                        label,
                        &who,
                        Refusal::NoEffect(format!(
                            "did not keep the option {wanted:?}: the page chose another"
                        )),
                    ));
                }
            }
            Step::Check { selector } | Step::Uncheck { selector } => {
                let wanted = matches!(step, Step::Check { .. });
                let (node, who) = self.target(scope, selector.as_deref(), label)?;
                if self.dom.prop(&node, "checked") != Value::Bool(wanted) {
                    input::click(self.dom, &node, 1, self.patience())
                        .await
                        .map_err(|r| refused(label, &who, r))?;
                    if self.dom.prop(&node, "checked") != Value::Bool(wanted) {
                        let why = format!(
                            "is still {}checked after a click (is it a checkbox the page lets change?)",
                            if wanted { "un" } else { "" }
                        );
                        return Err(refused(label, &who, Refusal::NoEffect(why)));
                    }
                }
            }
            Step::Fill { selector, value } => {
                let selector = self.selector(selector, label)?;
                let value = template::render_text(value, &self.vars)
                    .map_err(|e| template_error(label, e))?;
                let node = self.find(scope, &selector, label)?;
                self.fill(&node, &format!("`{selector}`"), &value, label)
                    .await?;
            }
            Step::Clear { selector } => {
                let selector = self.selector(selector, label)?;
                let node = self.find(scope, &selector, label)?;
                self.fill(&node, &format!("`{selector}`"), "", label)
                    .await?;
            }
            Step::Press { selector, key } => {
                let chord = bridge::keys::parse_chord(key)
                    .map_err(|e| fail(ErrorCode::AdapterError, label, e))?;
                let node = match selector {
                    Some(selector) => {
                        let selector = self.selector(selector, label)?;
                        let node = self.find(scope, &selector, label)?;
                        if !self.dom.is_connected(&node) {
                            return Err(refused(
                                label,
                                &format!("`{selector}`"),
                                Refusal::Detached,
                            ));
                        }
                        // Keys go to the focused element: a person focuses the field first.
                        if !self.dom.has_focus(&node) {
                            self.dom.focus(&node);
                        }
                        node
                    }
                    None => self.dom.active_element().unwrap_or_else(|| self.dom.root()),
                };
                self.press(&node, &chord);
            }
            Step::Read {
                selector,
                read,
                into,
                optional,
            } => {
                let node = match selector {
                    Some(selector) => {
                        let selector = self.selector(selector, label)?;
                        let node = self.query(scope, &selector, label)?;
                        if node.is_none() && !optional && !matches!(read, Read::Exists) {
                            return Err(fail(
                                ErrorCode::ElementNotFound,
                                label,
                                format!("no element matches `{selector}`"),
                            ));
                        }
                        node
                    }
                    None => Some(scope.cloned().unwrap_or_else(|| self.dom.root())),
                };
                let value = self.read(node.as_ref(), read);
                self.vars.insert(into.clone(), value);
            }
            Step::Extract {
                selector,
                fields,
                into,
            } => {
                let selector = self.selector(selector, label)?;
                let items = self
                    .dom
                    .query_all(scope, &selector)
                    .map_err(|why| bad_selector(label, &selector, &why))?;
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
                text_equals,
                text_contains,
                timeout_ms,
                steps,
            } => {
                let selector = self.selector(selector, label)?;
                let text_selector = match text_selector {
                    Some(ts) => Some(self.selector(ts, label)?),
                    None => None,
                };
                let (wanted, contains) = either(
                    text_equals,
                    text_contains,
                    label,
                    "needs text_equals or text_contains",
                )?;
                let wanted = template::render_text(wanted, &self.vars)
                    .map_err(|e| template_error(label, e))?;
                let start = self.dom.now_ms();
                let deadline = timeout_ms.map_or(start, |t| (start + t as f64).min(self.deadline));
                loop {
                    let candidates = self
                        .dom
                        .query_all(scope, &selector)
                        .map_err(|why| bad_selector(label, &selector, &why))?;
                    for candidate in &candidates {
                        let text_node = match &text_selector {
                            Some(ts) => self
                                .dom
                                .query(Some(candidate), ts)
                                .map_err(|why| bad_selector(label, ts, &why))?,
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
            Step::ForEach {
                selector,
                items,
                item_var,
                steps,
                into,
            } => {
                let (source, over_items) =
                    either(selector, items, label, "needs a selector or items")?;
                // Each round: the scope its steps run in, and (over `items`) the item bound to `as`.
                let rounds: Vec<(Option<D::Node>, Option<Value>)> = if over_items {
                    self.items(source, label)?
                        .into_iter()
                        .map(|item| (scope.cloned(), Some(item)))
                        .collect()
                } else {
                    let selector = self.selector(source, label)?;
                    self.dom
                        .query_all(scope, &selector)
                        .map_err(|why| bad_selector(label, &selector, &why))?
                        .into_iter()
                        .map(|element| (Some(element), None))
                        .collect()
                };
                let item_var = match (over_items, item_var) {
                    (true, None) => {
                        return Err(fail(
                            ErrorCode::AdapterError,
                            label,
                            "needs `as` with items",
                        ));
                    }
                    (true, Some(name)) => Some(name.as_str()),
                    (false, _) => None,
                };
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
                selector,
                var,
                then,
                otherwise,
            } => {
                let present = match (selector, var) {
                    (Some(selector), _) => {
                        let selector = self.selector(selector, label)?;
                        self.query(scope, &selector, label)?.is_some()
                    }
                    (None, Some(var)) => match self.vars.get(var) {
                        None | Some(Value::Null | Value::Bool(false)) => false,
                        Some(Value::String(s)) => !s.is_empty(),
                        Some(Value::Array(a)) => !a.is_empty(),
                        Some(_) => true,
                    },
                    (None, None) => false,
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
            Step::Fetch {
                url,
                into,
                response,
                timeout_ms,
                records,
                fields,
            } => {
                let value = self
                    .fetch(url, *response, *timeout_ms, records, fields, label)
                    .await?;
                self.vars.insert(into.clone(), value);
            }
        }
        Ok(None)
    }

    /// A `fetch` step: GET the rendered path, within its deadline and until cancelled, and
    /// turn a good answer into the step's value. Every failure names the request.
    async fn fetch(
        &self,
        url: &str,
        response: ResponseKind,
        timeout_ms: Option<u64>,
        records: &Option<String>,
        fields: &Option<BTreeMap<String, String>>,
        label: &str,
    ) -> Result<Value, WireError> {
        let path = template::render_url(url, &self.vars).map_err(|e| template_error(label, e))?;
        fetch::check_rendered_path(&path)
            .map_err(|why| fail(ErrorCode::InvalidArgs, label, format!("GET {why}")))?;
        let request = format!("GET {path}");
        let accept = match response {
            ResponseKind::Json => "application/json",
            ResponseKind::Text => "text/plain, */*;q=0.5",
        };
        let start = self.dom.now_ms();
        let deadline = timeout_ms.map_or(self.deadline, |t| (start + t as f64).min(self.deadline));
        let answer = {
            // Dropping the request (timeout, cancellation) aborts it.
            let mut pending = pin!(self.dom.fetch(&path, accept, MAX_RESPONSE_BYTES));
            loop {
                let now = self.dom.now_ms();
                if now >= deadline {
                    return Err(fail(
                        ErrorCode::Timeout,
                        label,
                        format!(
                            "{request} did not answer within {} ms",
                            (now - start).round()
                        ),
                    ));
                }
                if self.cancelled.get() {
                    return Err(fail(
                        ErrorCode::Cancelled,
                        label,
                        format!("the call was cancelled while waiting for {request}"),
                    ));
                }
                let mut tick = pin!(self.dom.settle((deadline - now).min(POLL_MS)));
                let done = poll_fn(|cx| match pending.as_mut().poll(cx) {
                    Poll::Ready(answer) => Poll::Ready(Some(answer)),
                    Poll::Pending => tick.as_mut().poll(cx).map(|()| None),
                })
                .await;
                if let Some(answer) = done {
                    break answer;
                }
            }
        };
        let answer = answer.map_err(|failure| match failure {
            FetchFailure::Network(why) => fail(
                ErrorCode::AdapterError,
                label,
                format!("{request} failed: {why}"),
            ),
            FetchFailure::TooLarge => fail(
                ErrorCode::TooLarge,
                label,
                format!(
                    "{request}: the response is larger than {} MiB",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                ),
            ),
        })?;
        if !(200..300).contains(&answer.status) {
            let body = String::from_utf8_lossy(&answer.body);
            let excerpt: String = body.trim().chars().take(200).collect();
            return Err(fail(
                ErrorCode::AdapterError,
                label,
                format!(
                    "{request} answered HTTP {} {}{}",
                    answer.status,
                    answer.status_text,
                    if excerpt.is_empty() {
                        String::new()
                    } else {
                        format!(": {excerpt}")
                    }
                ),
            ));
        }
        let body = match response {
            ResponseKind::Text => {
                return Ok(Value::String(
                    String::from_utf8_lossy(&answer.body).into_owned(),
                ));
            }
            ResponseKind::Json => serde_json::from_slice::<Value>(&answer.body).map_err(|e| {
                let content_type = if answer.content_type.is_empty() {
                    "no Content-Type"
                } else {
                    answer.content_type.as_str()
                };
                fail(
                    ErrorCode::AdapterError,
                    label,
                    format!("{request} answered no JSON ({content_type}): {e}"),
                )
            })?,
        };
        match fields {
            Some(fields) => fetch::project(&body, records.as_deref().unwrap_or(""), fields)
                .map_err(|why| fail(ErrorCode::AdapterError, label, format!("{request}: {why}"))),
            None => Ok(body),
        }
    }

    /// The element `selector` (a template) finds in `scope` now, or ELEMENT_NOT_FOUND.
    /// Absent `selector`: the scope element itself (the document element at the top).
    fn element(
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
    fn target(
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
    fn patience(&self) -> f64 {
        (self.deadline - self.dom.now_ms()).clamp(0.0, COVERED_PATIENCE_MS)
    }

    /// Sets `names` to `null`, so a branch or loop that did not run leaves them defined.
    fn clear(&mut self, names: &[&str]) {
        for name in names {
            self.vars.insert((*name).to_owned(), Value::Null);
        }
    }

    /// Waits for a DOM change (at most `left_ms`, at most [`POLL_MS`]), unless cancelled.
    async fn pause(&self, left_ms: f64, label: &str) -> Result<(), WireError> {
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

    fn selector(&self, template: &str, label: &str) -> Result<String, WireError> {
        template::render_selector(template, &self.vars).map_err(|e| template_error(label, e))
    }

    fn query(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<Option<D::Node>, WireError> {
        self.dom
            .query(scope, selector)
            .map_err(|why| bad_selector(label, selector, &why))
    }

    fn find(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<D::Node, WireError> {
        self.query(scope, selector, label)?.ok_or_else(|| {
            fail(
                ErrorCode::ElementNotFound,
                label,
                format!("no element matches `{selector}`"),
            )
        })
    }

    async fn wait(
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
                    .dom
                    .query_all(scope, selector)
                    .map_err(|why| bad_selector(label, selector, &why))?
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
                    format!(
                        "`{selector}` was still not {state} after {} ms",
                        (now - start).round()
                    ),
                ));
            }
            self.pause(deadline - now, label).await?;
        }
    }

    /// The chord's key events (see [`input::press`]); the default action of Enter on a text
    /// input whose value changed since `fill` focused it is the `change` Chrome fires natively
    /// (TodoMVC's vanillajs adds a todo on `change`, its React variant on keydown), then implicit
    /// submission of its form.
    fn press(&mut self, node: &D::Node, chord: &bridge::keys::Chord) {
        let enter_in_text_input = chord.key.key == "Enter" && self.dom.is_text_input(node);
        let dom = self.dom;
        input::press(dom, node, chord, || {
            if enter_in_text_input {
                self.commit_if_changed(node);
                dom.submit_implicitly(node);
            }
        });
    }

    /// Types `value` into `node` (see [`input::fill`]); the page must take it, checked after it
    /// settled. `who` names the element in errors.
    async fn fill(
        &mut self,
        node: &D::Node,
        who: &str,
        value: &str,
        label: &str,
    ) -> Result<(), WireError> {
        if let Some(before) = self.dom.value(node) {
            self.focus_value = Some((node.clone(), before));
        }
        let check = input::fill(self.dom, node, value)
            .await
            .map_err(|r| refused(label, who, r))?;
        self.after_settle = Some((label.to_owned(), who.to_owned(), check));
        Ok(())
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

    fn read(&self, node: Option<&D::Node>, read: &Read) -> Value {
        let Some(node) = node else {
            return match read {
                Read::Exists => Value::Bool(false),
                _ => Value::Null,
            };
        };
        match read {
            Read::Text => Value::String(self.dom.text(node).trim().to_owned()),
            Read::OwnText => Value::String(self.dom.own_text(node).trim().to_owned()),
            Read::Value => self.dom.value(node).map_or(Value::Null, Value::String),
            Read::Exists => Value::Bool(true),
            Read::Attr(name) => self.dom.attr(node, name).map_or(Value::Null, Value::String),
            Read::Prop(name) => self.dom.prop(node, name),
            Read::HasClass(name) => Value::Bool(self.dom.has_class(node, name)),
        }
    }

    /// The array a `for_each` over `items` (one variable, validated) runs through; `null`, an
    /// optional argument left out, is none. Arguments are arrays already (`check_args`), so
    /// anything else is the adapter's mistake.
    fn items(&self, items: &str, label: &str) -> Result<Vec<Value>, WireError> {
        let value = template::render_value(&Value::String(items.to_owned()), &self.vars)
            .map_err(|e| template_error(label, e))?;
        let kind = match value {
            Value::Array(items) => return Ok(items),
            Value::Null => return Ok(Vec::new()),
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Object(_) => "an object",
        };
        Err(fail(
            ErrorCode::AdapterError,
            label,
            format!("`items` {items} is {kind}, expected an array"),
        ))
    }

    fn field(&self, item: &D::Node, field: &Field, label: &str) -> Result<Value, WireError> {
        let node = match &field.selector {
            Some(selector) => {
                let selector = self.selector(selector, label)?;
                self.query(Some(item), &selector, label)?
            }
            None => Some(item.clone()),
        };
        Ok(match (&node, &field.read) {
            (None, Read::HasClass(_)) => Value::Bool(false),
            _ => self.read(node.as_ref(), &field.read),
        })
    }
}

/// The set one of an either-or pair of options (validation allows exactly one; the first wins),
/// and whether it is the second.
fn either<'a>(
    first: &'a Option<String>,
    second: &'a Option<String>,
    label: &str,
    needs: &str,
) -> Result<(&'a String, bool), WireError> {
    match (first, second) {
        (Some(v), _) => Ok((v, false)),
        (None, Some(v)) => Ok((v, true)),
        (None, None) => Err(fail(ErrorCode::AdapterError, label, needs)),
    }
}

/// An action the element could not take (or did not take), named.
fn refused(label: &str, who: &str, refusal: Refusal) -> WireError {
    let code = match refusal {
        Refusal::NotEditable => ErrorCode::AdapterError,
        Refusal::NoEffect(_) => ErrorCode::NoEffect,
        Refusal::Detached
        | Refusal::Disabled
        | Refusal::ReadOnly
        | Refusal::Covered { .. }
        | Refusal::OutOfView { .. } => ErrorCode::NotActionable,
    };
    fail(code, label, format!("{who} {refusal}"))
}

fn bad_selector(label: &str, selector: &str, why: &str) -> WireError {
    fail(
        ErrorCode::AdapterError,
        label,
        format!("invalid selector `{selector}`: {why}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_dom::{FakeDom, FakeNode, block_on};
    use crate::tools::check_args;
    use serde_json::json;

    /// A call that must finish in this page.
    async fn run_value<D: Dom>(
        dom: &D,
        tool: &ToolDef,
        args: Vars,
        timeout_ms: u64,
        cancelled: &Cell<bool>,
    ) -> Result<Value, WireError> {
        match run_tool(dom, tool, args, 0, timeout_ms, cancelled).await? {
            Outcome::Finished(value) => Ok(value),
            other => panic!("the call did not finish: {other:?}"),
        }
    }

    #[test]
    fn navigate_never_loads_another_scheme_than_http_s() {
        // Arguments are percent-encoded, but an adapter can still spell a scheme around one.
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "t", "description": "d",
            "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}},
            "steps": [{"step": "navigate", "url": "{{x}}script:alert(1)"}]
        }))
        .unwrap();
        let args = json!({"x": "java"}).as_object().cloned().unwrap();
        let failed = block_on(run_tool(
            &todomvc(&[]),
            &tool,
            args,
            0,
            1000,
            &Cell::new(false),
        ))
        .unwrap_err();
        assert_eq!(failed.code, ErrorCode::AdapterError);
        assert!(
            failed.message.contains("not a page a tool may navigate to"),
            "{failed}"
        );
    }

    #[test]
    fn navigate_hands_over_the_rest_of_the_call() {
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "t", "description": "d",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "steps": [
                {"step": "read", "selector": "label", "into": "before"},
                {"step": "navigate", "url": "results.html?q={{q}}"},
                {"step": "read", "selector": "label", "into": "after"},
                {"step": "return", "value": ["{{q}}", "{{before}}", "{{after}}"]}
            ]
        }))
        .unwrap();
        let dom = todomvc(&[("a", false)]);
        let args = json!({"q": "x y&z"}).as_object().cloned().unwrap();
        let outcome = block_on(run_tool(&dom, &tool, args, 0, 1000, &Cell::new(false))).unwrap();
        let Outcome::Navigate {
            url,
            resume_at,
            vars,
            timeout_ms,
        } = outcome
        else {
            panic!("{outcome:?}")
        };
        assert_eq!(url, "results.html?q=x%20y%26z");
        assert_eq!((resume_at, timeout_ms), (2, 1000));
        assert_eq!(vars["before"], "a");

        // The next page: its DOM, the variables so far, from the step after `navigate`.
        let next = todomvc(&[("b", false)]);
        let outcome = block_on(run_tool(
            &next,
            &tool,
            vars,
            resume_at,
            1000,
            &Cell::new(false),
        ));
        assert_eq!(
            outcome.unwrap(),
            Outcome::Finished(json!(["x y&z", "a", "b"]))
        );
        // Errors after the navigation keep the step's real index.
        let empty = todomvc(&[]);
        let vars = json!({"q": "", "before": "a"})
            .as_object()
            .cloned()
            .unwrap();
        let err = block_on(run_tool(&empty, &tool, vars, 2, 1000, &Cell::new(false))).unwrap_err();
        assert_eq!(err.message, "steps[2] (read): no element matches `label`");
    }

    const INPUT: &str = "#new-todo, .new-todo";
    const LIST: &str = "#todo-list, .todo-list";
    const ITEMS: &str = "#todo-list > li, .todo-list > li";

    /// TodoMVC's markup: the root, the input (1), the list (2), and one item per title.
    fn todomvc(items: &[(&str, bool)]) -> FakeDom {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        dom.add(FakeNode {
            selectors: vec![INPUT],
            value: Some(String::new()),
            visible: true,
            text_input: true,
            ..Default::default()
        });
        let list = dom.add(FakeNode {
            selectors: vec![LIST],
            visible: true,
            ..Default::default()
        });
        for (title, done) in items {
            let li = dom.add(FakeNode {
                parent: Some(list),
                selectors: vec![ITEMS],
                classes: if *done { vec!["completed"] } else { vec![] },
                visible: true,
                ..Default::default()
            });
            dom.add(FakeNode {
                parent: Some(li),
                selectors: vec![".toggle"],
                visible: true,
                ..Default::default()
            });
            dom.add(FakeNode {
                parent: Some(li),
                selectors: vec!["label"],
                text: format!("  {title} "),
                visible: true,
                ..Default::default()
            });
        }
        dom
    }

    /// The `click` events, with their targets.
    fn clicks(dom: &FakeDom) -> Vec<String> {
        dom.events
            .borrow()
            .iter()
            .filter(|e| e.starts_with("click "))
            .cloned()
            .collect()
    }

    fn adhoc(steps: Value) -> ToolDef {
        serde_json::from_value(json!({"name": "t", "description": "d", "steps": steps})).unwrap()
    }

    fn run_adhoc(
        dom: &FakeDom,
        steps: Value,
        args: Value,
        timeout_ms: u64,
    ) -> Result<Value, WireError> {
        let tool = adhoc(steps);
        block_on(run_value(
            dom,
            &tool,
            args.as_object().cloned().unwrap_or_default(),
            timeout_ms,
            &Cell::new(false),
        ))
    }

    #[test]
    fn add_todo_types_and_commits_like_a_user() {
        let dom = todomvc(&[]);
        let add_todo = json!([
            {"step": "wait", "selector": INPUT},
            {"step": "fill", "selector": INPUT, "value": "{{title}}"},
            {"step": "press", "selector": INPUT, "key": "Enter"},
            {"step": "return", "value": {"added": "{{title}}"}}
        ]);
        let result = run_adhoc(&dom, add_todo, json!({"title": "Buy milk"}), 1000).unwrap();
        assert_eq!(result, json!({"added": "Buy milk"}));
        assert_eq!(dom.nodes.borrow()[1].value.as_deref(), Some("Buy milk"));
        assert_eq!(
            *dom.events.borrow(),
            [
                "focus 1",
                "beforeinput 1 insertText Buy milk",
                "input 1 insertText Buy milk",
                "keydown 1 Enter 13 Enter",
                "keypress 1 Enter 13 Enter",
                "change 1",
                "implicit submission 1",
                "keyup 1 Enter 13 Enter"
            ]
        );
        // The page ran its queued work after the fill (a framework's model update) and the press.
        assert_eq!(dom.checkpoints.get(), 2);
    }

    #[test]
    fn enter_commits_only_changed_values_and_respects_cancelled_keydown() {
        let dom = todomvc(&[]);
        let steps = json!([
            {"step": "fill", "selector": INPUT, "value": ""},
            {"step": "press", "selector": INPUT, "key": "Enter"}
        ]);
        run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        assert!(!dom.events.borrow().iter().any(|e| e.starts_with("change")));

        let dom = todomvc(&[]);
        dom.cancel.borrow_mut().push("keydown");
        run_adhoc(
            &dom,
            json!([{"step": "fill", "selector": INPUT, "value": "x"}, {"step": "press", "key": "Enter"}]),
            json!({}),
            1000,
        )
        .unwrap();
        let events = dom.events.borrow();
        assert!(
            !events
                .iter()
                .any(|e| e.starts_with("change") || e.starts_with("keypress")),
            "{events:?}"
        );
        assert!(
            events.contains(&"keyup 1 Enter 13 Enter".to_owned()),
            "press without selector hits the focused input"
        );
    }

    fn list_todos(dom: &FakeDom) -> Value {
        let steps = json!([
            {"step": "extract", "selector": ITEMS, "into": "todos",
             "fields": {"title": {"selector": "label"}, "completed": {"read": "has_class:completed"}}},
            {"step": "return", "value": "{{todos}}"}
        ]);
        run_adhoc(dom, steps, json!({}), 1000).unwrap()
    }

    fn toggle_todo(dom: &FakeDom, title: &str) -> Result<Value, WireError> {
        let steps = json!([
            {"step": "wait", "selector": INPUT, "until": "attached"},
            {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "{{title}}",
             "steps": [
               {"step": "click", "selector": ".toggle"},
               {"step": "read", "read": "has_class:completed", "into": "completed"}
             ]},
            {"step": "return", "value": {"title": "{{title}}", "completed": "{{completed}}"}}
        ]);
        run_adhoc(dom, steps, json!({"title": title}), 1000)
    }

    #[test]
    fn list_todos_extracts_records() {
        let dom = todomvc(&[("a", false), ("b", true)]);
        let result = list_todos(&dom);
        assert_eq!(
            result,
            json!([{"title": "a", "completed": false}, {"title": "b", "completed": true}])
        );
        // A missing field element reads as null (and has_class as false).
        dom.nodes.borrow_mut()[5].attached = false; // the first item's label
        let result = list_todos(&dom);
        assert_eq!(result[0], json!({"title": null, "completed": false}));
    }

    #[test]
    fn toggle_picks_the_item_by_its_label() {
        let dom = todomvc(&[("a", false), ("b", false)]);
        let result = toggle_todo(&dom, "b").unwrap();
        assert_eq!(result, json!({"title": "b", "completed": true}));
        assert!(dom.has_class(&6, "completed"));
        assert!(!dom.has_class(&3, "completed"));

        let err = toggle_todo(&dom, "zzz").unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            err.message,
            format!(
                "steps[1] (within): no `{ITEMS}` whose `label` text equals \"zzz\" (2 candidates)"
            )
        );
    }

    #[test]
    fn errors_name_the_step_path_and_selector() {
        let dom = todomvc(&[("a", false)]);
        let steps = json!([
            {"step": "within", "selector": ITEMS, "text_equals": "a", "text_selector": "label",
             "steps": [{"step": "click", "selector": ".nope"}]}
        ]);
        let err = run_adhoc(&dom, steps, json!({}), 1000).unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            err.message,
            "steps[0].steps[0] (click): no element matches `.nope`"
        );

        let err = run_adhoc(
            &dom,
            json!([{"step": "click", "selector": "a!!"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(
            err.message
                .starts_with("steps[0] (click): invalid selector `a!!`"),
            "{err}"
        );

        let err = run_adhoc(
            &dom,
            json!([{"step": "return", "value": "{{ghost}}"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(err.message.contains("ghost"), "{err}");

        let err = run_adhoc(
            &dom,
            json!([{"step": "fill", "selector": LIST, "value": "x"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(err.message.contains("not an input"), "{err}");
    }

    #[test]
    fn reads_of_every_kind() {
        let dom = todomvc(&[("a", true)]);
        let steps = json!([
            {"step": "read", "selector": "label", "into": "text"},
            {"step": "read", "selector": INPUT, "read": "value", "into": "value"},
            {"step": "read", "selector": ".missing", "read": "exists", "into": "exists"},
            {"step": "read", "selector": ".missing", "optional": true, "into": "optional"},
            {"step": "read", "selector": ITEMS, "read": "attr:id", "into": "attr"},
            {"step": "read", "selector": ITEMS, "read": "attr:nope", "into": "no_attr"},
            {"step": "read", "selector": ITEMS, "read": "prop:checked", "into": "prop"},
            {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "a",
             "steps": [{"step": "read", "read": "has_class:completed", "into": "scoped"}]},
            {"step": "return", "value": {"all": ["{{text}}", "{{value}}", "{{exists}}", "{{optional}}", "{{attr}}",
                                                 "{{no_attr}}", "{{prop}}", "{{scoped}}"]}}
        ]);
        let result = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        assert_eq!(
            result,
            json!({"all": ["a", "", false, null, "n3", null, true, true]})
        );

        let err = run_adhoc(
            &dom,
            json!([{"step": "read", "selector": ".missing", "into": "x"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            run_adhoc(
                &dom,
                json!([{"step": "click", "selector": "label"}]),
                json!({}),
                1000
            )
            .unwrap(),
            Value::Null
        );
    }

    #[test]
    fn waits_poll_until_the_dom_changes_or_time_runs_out() {
        let dom = todomvc(&[]);
        dom.nodes.borrow_mut()[1].visible = false;
        *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
            if dom.now.get() >= 200.0 {
                dom.nodes.borrow_mut()[1].visible = true;
            }
        }));
        run_adhoc(
            &dom,
            json!([{"step": "wait", "selector": INPUT}]),
            json!({}),
            1000,
        )
        .unwrap();
        assert!((200.0..260.0).contains(&dom.now.get()), "{}", dom.now.get());

        let dom = todomvc(&[]);
        let err = run_adhoc(
            &dom,
            json!([{"step": "wait", "selector": INPUT, "until": "gone", "timeout_ms": 300}]),
            json!({}),
            5000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Timeout);
        assert_eq!(
            err.message,
            format!("steps[0] (wait): `{INPUT}` was still not gone after 300 ms")
        );

        // The call's own deadline bounds a wait without timeout_ms.
        let dom = todomvc(&[]);
        let err = run_adhoc(
            &dom,
            json!([{"step": "wait", "selector": ".later", "until": "attached"}]),
            json!({}),
            120,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Timeout);
        assert_eq!(dom.now.get(), 120.0);
    }

    #[test]
    fn cancellation_stops_the_call() {
        let dom = todomvc(&[]);
        let tool = adhoc(json!([{"step": "wait", "selector": ".never", "until": "attached"}]));
        let cancelled = Cell::new(false);
        *dom.on_settle.borrow_mut() = Some(Box::new(|_: &FakeDom| {}));
        let err = block_on(async {
            cancelled.set(true);
            run_value(&dom, &tool, Vars::new(), 5000, &cancelled).await
        })
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
        assert!(err.message.starts_with("steps[0] (wait)"), "{err}");
    }
    /// A form: a select (1), a checkbox (2), an iframe (3) whose root (4) holds a textarea (5),
    /// and a field (6) with own text.
    fn form() -> FakeDom {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        dom.add(FakeNode {
            selectors: vec!["select"],
            options: vec![("r", "Red"), ("g", "Green")],
            value: Some("r".into()),
            ..Default::default()
        });
        dom.add(FakeNode {
            selectors: vec!["#agree"],
            checked: Some(false),
            ..Default::default()
        });
        dom.add(FakeNode {
            selectors: vec!["iframe"],
            frame_root: Some(4),
            ..Default::default()
        });
        dom.add(FakeNode::default());
        dom.add(FakeNode {
            parent: Some(4),
            selectors: vec!["textarea"],
            value: Some(String::new()),
            ..Default::default()
        });
        dom.add(FakeNode {
            selectors: vec![".title"],
            text: "Invoice 42 To: bob".into(),
            own_text: Some(" Invoice 42 ".into()),
            ..Default::default()
        });
        dom
    }

    #[test]
    fn select_picks_by_value_or_label() {
        let dom = form();
        run_adhoc(
            &dom,
            json!([{"step": "select", "selector": "select", "label": "{{colour}}"}]),
            json!({"colour": "Green"}),
            1000,
        )
        .unwrap();
        assert_eq!(dom.nodes.borrow()[1].selected, Some(1));
        assert_eq!(*dom.events.borrow(), ["input 1", "change 1"]);
        run_adhoc(
            &dom,
            json!([{"step": "select", "selector": "select", "value": "r"}]),
            json!({}),
            1000,
        )
        .unwrap();
        assert_eq!(dom.nodes.borrow()[1].selected, Some(0));
        let err = run_adhoc(
            &dom,
            json!([{"step": "select", "selector": "select", "value": "blue"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            err.message,
            "steps[0] (select): no option with value \"blue\" (there are: r, g)"
        );
        let err = run_adhoc(
            &dom,
            json!([{"step": "select", "selector": "#agree", "value": "x"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert!(err.message.contains("not a <select>"), "{err}");
    }

    #[test]
    fn check_and_uncheck_click_only_when_needed() {
        let dom = form();
        let check = json!([{"step": "check", "selector": "#agree"}]);
        run_adhoc(&dom, check.clone(), json!({}), 1000).unwrap();
        run_adhoc(&dom, check, json!({}), 1000).unwrap();
        assert_eq!(dom.nodes.borrow()[2].checked, Some(true));
        assert_eq!(clicks(&dom), ["click 2"], "the second check clicks nothing");
        run_adhoc(
            &dom,
            json!([{"step": "uncheck", "selector": "#agree"}]),
            json!({}),
            1000,
        )
        .unwrap();
        assert_eq!(dom.nodes.borrow()[2].checked, Some(false));
        // Something a click does not check.
        let err = run_adhoc(
            &dom,
            json!([{"step": "check", "selector": ".title"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::NoEffect);
        assert_eq!(
            err.message,
            "steps[0] (check): `.title` is still unchecked after a click (is it a checkbox the page lets change?)"
        );
    }

    #[test]
    fn pointer_steps_fire_their_events_on_the_scope_or_selector() {
        let dom = todomvc(&[("a", false)]);
        let steps = json!([
            {"step": "within", "selector": ITEMS, "text_selector": "label", "text_equals": "a", "steps": [
                {"step": "hover"},
                {"step": "dblclick", "selector": "label"},
                {"step": "scroll_into_view", "selector": ".toggle"},
                {"step": "click"}
            ]}
        ]);
        run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        let targets: Vec<String> = dom
            .events
            .borrow()
            .iter()
            .filter(|e| {
                ["pointerover ", "dblclick ", "scroll ", "click "]
                    .iter()
                    .any(|kind| e.starts_with(kind))
            })
            .cloned()
            .collect();
        assert_eq!(
            targets,
            [
                "pointerover 3",
                "pointerover 5",
                "click 5",
                "click 5",
                "dblclick 5",
                "scroll 4",
                "pointerover 3",
                "click 3"
            ]
        );
    }

    #[test]
    fn actions_a_page_could_not_take_fail_with_typed_errors_naming_the_element() {
        let dom = todomvc(&[("a", false)]);
        // The toggle (4) is covered by the input (1) at its centre.
        dom.nodes.borrow_mut()[4].centre = Some((20.0, 30.0));
        dom.nodes.borrow_mut()[4].covered_by = Some(1);
        let err = run_adhoc(
            &dom,
            json!([{"step": "click", "selector": ".toggle"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::NotActionable);
        assert_eq!(
            dom.now.get(),
            1000.0,
            "a covered element is waited for, 1 s at most"
        );
        assert_eq!(
            err.message,
            "steps[0] (click): `.toggle` is covered by <div id=\"n1\">, which is at its centre (20, 30): a person's click would land there"
        );
        // A fill the page does not keep is found out after the page settled.
        let dom = todomvc(&[]);
        dom.rejects_values.set(true);
        let err = run_adhoc(
            &dom,
            json!([{"step": "fill", "selector": INPUT, "value": "x"}, {"step": "press", "key": "Enter"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::NoEffect);
        assert_eq!(
            err.message,
            format!("steps[0] (fill): `{INPUT}` kept its value \"\": the page did not take \"x\"")
        );
        assert_eq!(dom.checkpoints.get(), 1, "checked after the page settled");
        assert!(!dom.events.borrow().iter().any(|e| e.starts_with("keydown")));
        // A bad chord (only possible in an adapter the validator never saw) is the adapter's.
        let err = run_adhoc(
            &dom,
            json!([{"step": "press", "key": "Hyper+x"}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(
            err.message.starts_with("steps[0] (press): \"Hyper\""),
            "{err}"
        );
    }

    #[test]
    fn blur_commits_a_changed_value_once() {
        let dom = todomvc(&[]);
        let steps = json!([
            {"step": "fill", "selector": INPUT, "value": "x"},
            {"step": "blur", "selector": INPUT},
            {"step": "blur"}
        ]);
        run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        assert_eq!(
            *dom.events.borrow(),
            [
                "focus 1",
                "beforeinput 1 insertText x",
                "input 1 insertText x",
                "change 1",
                "blur 1"
            ],
            "the second blur has no focused element"
        );
    }

    #[test]
    fn for_each_runs_per_match_and_collects_what_it_read() {
        let dom = todomvc(&[("a", true), ("b", false)]);
        let steps = json!([
            {"step": "for_each", "selector": ITEMS, "into": "rows", "steps": [
                {"step": "read", "selector": "label", "into": "title"},
                {"step": "if", "selector": ".toggle", "then": [
                    {"step": "read", "read": "has_class:completed", "into": "done"}
                ]}
            ]},
            {"step": "return", "value": "{{rows}}"}
        ]);
        let rows = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        assert_eq!(
            rows,
            json!([{"title": "a", "done": true}, {"title": "b", "done": false}])
        );

        // No match: an empty list, and the body's variables are defined (null).
        let dom = todomvc(&[]);
        let steps = json!([
            {"step": "for_each", "selector": ITEMS, "into": "rows", "steps": [
                {"step": "read", "selector": "label", "into": "title"}
            ]},
            {"step": "return", "value": {"rows": "{{rows}}", "last": "{{title}}"}}
        ]);
        let out = run_adhoc(&dom, steps, json!({}), 1000).unwrap();
        assert_eq!(out, json!({"rows": [], "last": null}));

        // A failure names the step and which match it was on.
        let dom = todomvc(&[("a", false), ("b", false)]);
        dom.nodes.borrow_mut()[8].attached = false; // the second item's label
        let err = run_adhoc(
            &dom,
            json!([{"step": "for_each", "selector": ITEMS, "steps": [
                {"step": "read", "selector": "label", "into": "t"}
            ]}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "steps[0].steps[0] (read): no element matches `label` (in match 2 of 2)"
        );
    }

    /// A tool with an optional `tags` argument (an array of strings) and these steps.
    fn tagging_tool(steps: Value) -> ToolDef {
        serde_json::from_value(json!({
            "name": "t", "description": "d", "steps": steps,
            "input_schema": {"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}}}}
        }))
        .unwrap()
    }

    fn run_with(dom: &FakeDom, tool: &ToolDef, args: Value) -> Result<Value, WireError> {
        let args = check_args(tool, args)?;
        block_on(run_value(dom, tool, args, 1000, &Cell::new(false)))
    }

    #[test]
    fn for_each_over_items_binds_each_item_and_escapes_it_in_selectors() {
        let dom = todomvc(&[]);
        // Only the CSS-escaped form of "two words" matches: a raw value would be another selector.
        let marked = dom.add(FakeNode {
            selectors: vec![r"[data-tag='two\ words']"],
            ..Default::default()
        });
        let tool = tagging_tool(json!([
            {"step": "for_each", "items": "{{tags}}", "as": "tag", "into": "added", "steps": [
                {"step": "fill", "selector": INPUT, "value": "{{tag}}"},
                {"step": "press", "selector": INPUT, "key": "Enter"},
                {"step": "read", "selector": "[data-tag='{{tag}}']", "read": "exists", "into": "marked"}
            ]},
            {"step": "return", "value": {"added": "{{added}}", "last": "{{marked}}"}}
        ]));
        let out = run_with(&dom, &tool, json!({"tags": ["one", "two words"]})).unwrap();
        assert_eq!(
            out,
            json!({
                "added": [{"tag": "one", "marked": false}, {"tag": "two words", "marked": true}],
                "last": true
            })
        );
        let inputs: Vec<String> = dom
            .events
            .borrow()
            .iter()
            .filter(|e| e.starts_with("input") || e.starts_with("change"))
            .cloned()
            .collect();
        assert_eq!(
            inputs,
            [
                "input 1 insertText one",
                "change 1",
                "input 1 insertText two words",
                "change 1"
            ]
        );
        assert_eq!(marked, 3);

        // An empty array and a left-out optional argument run the body zero times; what the
        // body reads is defined (null) after the loop.
        for args in [json!({"tags": []}), json!({})] {
            let dom = todomvc(&[]);
            let out = run_with(&dom, &tool, args.clone()).unwrap();
            assert_eq!(out, json!({"added": [], "last": null}), "{args}");
            assert!(dom.events.borrow().is_empty(), "{args}");
        }
    }

    #[test]
    fn for_each_over_items_runs_in_the_enclosing_scope_and_reaches_into_objects() {
        let dom = todomvc(&[("a", false), ("b", false), ("c", false)]);
        // Toggle the items named in a list of records, each found by its label inside the list.
        let steps = json!([
            {"step": "read", "selector": LIST, "read": "exists", "into": "has_list"},
            {"step": "within", "selector": LIST, "text_contains": "", "steps": [
                {"step": "for_each", "items": "{{todos}}", "as": "todo", "steps": [
                    {"step": "within", "selector": ITEMS, "text_selector": "label",
                     "text_equals": "{{todo.title}}", "steps": [{"step": "click", "selector": ".toggle"}]}
                ]}
            ]}
        ]);
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "t", "description": "d", "steps": steps,
            "input_schema": {"type": "object", "properties": {"todos": {"type": "array"}}}
        }))
        .unwrap();
        run_with(
            &dom,
            &tool,
            json!({"todos": [{"title": "c"}, {"title": "a"}]}),
        )
        .unwrap();
        assert_eq!(clicks(&dom), ["click 10", "click 4"]);
    }

    #[test]
    fn for_each_over_items_names_the_item_a_step_failed_on_and_rejects_non_arrays() {
        let dom = todomvc(&[("a", false)]);
        let tool = tagging_tool(json!([
            {"step": "for_each", "items": "{{tags}}", "as": "tag", "steps": [
                {"step": "within", "selector": ITEMS, "text_selector": "label",
                 "text_equals": "{{tag}}", "steps": [{"step": "click"}]}
            ]}
        ]));
        let err = run_with(&dom, &tool, json!({"tags": ["a", "zzz"]})).unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            err.message,
            format!(
                "steps[0].steps[0] (within): no `{ITEMS}` whose `label` text equals \"zzz\" (1 candidates) (in item 2 of 2)"
            )
        );
        // A caller's non-array never reaches the steps: INVALID_ARGS names the argument.
        let err = run_with(&dom, &tool, json!({"tags": "a"})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs);
        // A variable the adapter read that is not an array is the adapter's error, named.
        let err = run_adhoc(
            &dom,
            json!([
                {"step": "read", "selector": "label", "into": "title"},
                {"step": "for_each", "items": "{{title}}", "as": "x", "steps": [{"step": "click"}]}
            ]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert_eq!(
            err.message,
            "steps[1] (for_each): `items` {{title}} is a string, expected an array"
        );
        // A step the validator would refuse (neither selector nor items) still fails cleanly.
        let err = run_adhoc(
            &dom,
            json!([{"step": "for_each", "steps": [{"step": "click"}]}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert_eq!(
            err.message,
            "steps[0] (for_each): needs a selector or items"
        );
    }

    #[test]
    fn if_branches_on_presence_or_on_a_variable() {
        let dom = todomvc(&[]);
        let steps = json!([
            {"step": "if", "selector": ".missing",
             "then": [{"step": "read", "selector": INPUT, "read": "exists", "into": "yes"}],
             "else": [{"step": "read", "selector": LIST, "read": "exists", "into": "no"}]},
            {"step": "if", "var": "tag", "then": [{"step": "click", "selector": ".nope"}]},
            {"step": "if", "var": "flag", "then": [{"step": "return", "value": "flagged"}]},
            {"step": "return", "value": {"yes": "{{yes}}", "no": "{{no}}"}}
        ]);
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "t", "description": "d", "steps": steps,
            "input_schema": {"type": "object", "properties": {"tag": {"type": "string"}, "flag": {"type": "boolean"}}}
        }))
        .unwrap();
        let run = |args: Value| {
            block_on(run_value(
                &dom,
                &tool,
                args.as_object().cloned().unwrap(),
                1000,
                &Cell::new(false),
            ))
        };
        // An optional argument left out is null: `if` skips, templates render nothing.
        assert_eq!(run(json!({})).unwrap(), json!({"yes": null, "no": true}));
        assert_eq!(run(json!({"flag": true})).unwrap(), json!("flagged"));
        let err = run(json!({"tag": "x"})).unwrap_err();
        assert_eq!(
            err.message,
            "steps[1].then[0] (click): no element matches `.nope`"
        );
    }

    #[test]
    fn frame_scopes_steps_to_the_iframe_document() {
        let dom = form();
        run_adhoc(
            &dom,
            json!([{"step": "frame", "selector": "iframe", "steps": [
                {"step": "fill", "selector": "textarea", "value": "body"}
            ]}]),
            json!({}),
            1000,
        )
        .unwrap();
        assert_eq!(dom.nodes.borrow()[5].value.as_deref(), Some("body"));
        let err = run_adhoc(
            &dom,
            json!([{"step": "frame", "selector": "select", "steps": [{"step": "click"}]}]),
            json!({}),
            1000,
        )
        .unwrap_err();
        assert!(err.message.contains("same-origin <iframe>"), "{err}");
    }

    #[test]
    fn within_matches_contained_text_other_reads_and_waits() {
        let dom = form();
        let out = run_adhoc(
            &dom,
            json!([
                {"step": "read", "selector": ".title", "read": "own_text", "into": "subject"},
                {"step": "within", "selector": ".title", "text_contains": "To: bob",
                 "steps": [{"step": "read", "into": "whole"}]},
                {"step": "within", "selector": ".title", "read": "own_text", "text_equals": "Invoice 42",
                 "steps": [{"step": "read", "read": "exists", "into": "found"}]},
                {"step": "return", "value": ["{{subject}}", "{{whole}}", "{{found}}"]}
            ]),
            json!({}),
            1000,
        )
        .unwrap();
        assert_eq!(out, json!(["Invoice 42", "Invoice 42 To: bob", true]));

        // With timeout_ms, within waits for the element to appear.
        let dom = todomvc(&[("a", false)]);
        *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
            if dom.now.get() >= 100.0 {
                dom.nodes.borrow_mut()[5].text = "b".into();
            }
        }));
        let steps = json!([{"step": "within", "selector": ITEMS, "text_selector": "label",
            "text_equals": "b", "timeout_ms": 500, "steps": [{"step": "read", "into": "x"}]}]);
        run_adhoc(&dom, steps.clone(), json!({}), 1000).unwrap();
        assert!((100.0..160.0).contains(&dom.now.get()), "{}", dom.now.get());
        let dom = todomvc(&[("a", false)]);
        let err = run_adhoc(&dom, steps, json!({}), 1000).unwrap_err();
        assert_eq!(err.code, ErrorCode::ElementNotFound);
        assert_eq!(
            err.message,
            format!(
                "steps[0] (within): no `{ITEMS}` whose `label` text equals \"b\" (1 candidates) after 500 ms"
            )
        );
    }

    /// A fake server for `fetch`: `(path, status, content type, body)`; other paths hang.
    fn serve(dom: &FakeDom, routes: Vec<(&'static str, u16, &'static str, String)>) {
        use crate::dom::HttpResponse;
        *dom.on_fetch.borrow_mut() = Some(Box::new(move |path: &str| {
            let (_, status, content_type, body) = routes.iter().find(|r| r.0 == path)?;
            Some(Ok(HttpResponse {
                status: *status,
                status_text: if *status == 200 { "OK" } else { "Not Found" }.into(),
                content_type: (*content_type).into(),
                body: body.clone().into_bytes(),
            }))
        }));
    }

    fn fetches(dom: &FakeDom) -> Vec<String> {
        dom.events
            .borrow()
            .iter()
            .filter_map(|e| e.strip_prefix("fetch ").map(str::to_owned))
            .collect()
    }

    #[test]
    fn fetch_reads_json_and_projects_records() {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        let inbox = json!([
            {"id": "a1", "subject": "Hi", "from": [{"address": "al@x.org", "name": "Al"}], "read": false},
            {"id": "b2", "subject": "Yo", "from": [{"address": "bo@x.org"}], "read": true}
        ]);
        serve(
            &dom,
            vec![
                ("/email", 200, "application/json", inbox.to_string()),
                (
                    "/wrapped",
                    200,
                    "application/json",
                    json!({"items": inbox}).to_string(),
                ),
                ("/robots.txt", 200, "text/plain", "User-agent: *".into()),
            ],
        );
        let out = run_adhoc(
            &dom,
            json!([
                {"step": "fetch", "url": "/email", "into": "all"},
                {"step": "fetch", "url": "/email", "into": "messages",
                 "fields": {"id": "/id", "from": "/from/0/address", "from_name": "/from/0/name", "read": "/read"}},
                {"step": "fetch", "url": "/wrapped", "records": "/items", "into": "wrapped",
                 "fields": {"subject": "/subject"}},
                {"step": "fetch", "url": "/robots.txt", "response": "text", "into": "robots"},
                {"step": "return", "value": {"all": "{{all}}", "messages": "{{messages}}",
                                             "wrapped": "{{wrapped}}", "robots": "{{robots}}"}}
            ]),
            json!({}),
            1000,
        )
        .unwrap();
        assert_eq!(out["all"], inbox);
        assert_eq!(
            out["messages"],
            json!([
                {"id": "a1", "from": "al@x.org", "from_name": "Al", "read": false},
                {"id": "b2", "from": "bo@x.org", "from_name": null, "read": true}
            ])
        );
        assert_eq!(
            out["wrapped"],
            json!([{"subject": "Hi"}, {"subject": "Yo"}])
        );
        assert_eq!(out["robots"], "User-agent: *");
        assert_eq!(
            fetches(&dom),
            [
                "/email application/json",
                "/email application/json",
                "/wrapped application/json",
                "/robots.txt text/plain, */*;q=0.5"
            ]
        );
    }

    #[test]
    fn fetch_arguments_stay_inside_their_segment_or_query_value() {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        serve(&dom, vec![]);
        let steps = json!([{"step": "fetch", "url": "/notes/{{id}}?q={{q}}", "into": "x", "timeout_ms": 10}]);
        for (id, q, path) in [
            ("../admin", "a&b=c", "/notes/..%2Fadmin?q=a%26b%3Dc"),
            ("a?b=c", "#frag", "/notes/a%3Fb%3Dc?q=%23frag"),
            ("x#frag", "%2F", "/notes/x%23frag?q=%252F"),
            ("%2F..%2F", "..", "/notes/%252F..%252F?q=.."),
            ("//evil.example", "/", "/notes/%2F%2Fevil.example?q=%2F"),
            ("%2e%2e", "", "/notes/%252e%252e?q="),
        ] {
            dom.events.borrow_mut().clear();
            let err = run_adhoc(&dom, steps.clone(), json!({"id": id, "q": q}), 1000).unwrap_err();
            assert_eq!(err.code, ErrorCode::Timeout, "{id}: {err}");
            assert_eq!(fetches(&dom), [format!("{path} application/json")], "{id}");
        }
        // A whole `.` or `..` segment would climb out, even percent-encoded: refused, not sent.
        for id in ["..", "."] {
            dom.events.borrow_mut().clear();
            let err = run_adhoc(&dom, steps.clone(), json!({"id": id, "q": ""}), 1000).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgs, "{id}: {err}");
            assert!(
                err.message.starts_with("steps[0] (fetch): GET \"/notes/"),
                "{err}"
            );
            assert!(err.message.contains("segment"), "{err}");
            assert!(fetches(&dom).is_empty(), "{id}");
        }
    }

    #[test]
    fn fetch_failures_name_the_step_and_the_request() {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        serve(
            &dom,
            vec![
                ("/missing", 404, "text/plain", "  no such thing\n".into()),
                ("/page", 200, "text/html", "<!doctype html><p>hi".into()),
                ("/object", 200, "application/json", r#"{"a": 1}"#.into()),
                (
                    "/big",
                    200,
                    "application/json",
                    "1".repeat(MAX_RESPONSE_BYTES + 1),
                ),
            ],
        );
        let run = |step: Value, timeout_ms: u64| {
            run_adhoc(&dom, json!([step]), json!({}), timeout_ms).unwrap_err()
        };
        let err = run(
            json!({"step": "fetch", "url": "/missing", "into": "x"}),
            1000,
        );
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert_eq!(
            err.message,
            "steps[0] (fetch): GET /missing answered HTTP 404 Not Found: no such thing"
        );
        let err = run(json!({"step": "fetch", "url": "/page", "into": "x"}), 1000);
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(
            err.message
                .starts_with("steps[0] (fetch): GET /page answered no JSON (text/html): "),
            "{err}"
        );
        let err = run(
            json!({"step": "fetch", "url": "/object", "into": "x", "fields": {"a": "/a"}}),
            1000,
        );
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert!(
            err.message.starts_with(
                "steps[0] (fetch): GET /object: the response's value at \"\" is not an array"
            ),
            "{err}"
        );
        let err = run(json!({"step": "fetch", "url": "/big", "into": "x"}), 1000);
        assert_eq!(err.code, ErrorCode::TooLarge);
        assert_eq!(
            err.message,
            "steps[0] (fetch): GET /big: the response is larger than 4 MiB"
        );

        // A server that never answers: the step's own timeout, else the call's deadline.
        let err = run(
            json!({"step": "fetch", "url": "/slow", "into": "x", "timeout_ms": 300}),
            5000,
        );
        assert_eq!(err.code, ErrorCode::Timeout);
        assert_eq!(
            err.message,
            "steps[0] (fetch): GET /slow did not answer within 300 ms"
        );
        let before = dom.now.get();
        let err = run(json!({"step": "fetch", "url": "/slow", "into": "x"}), 120);
        assert_eq!(err.code, ErrorCode::Timeout);
        assert_eq!(dom.now.get() - before, 120.0);

        // A network failure (the fake's default without a server).
        *dom.on_fetch.borrow_mut() = None;
        let err = run(json!({"step": "fetch", "url": "/x", "into": "x"}), 1000);
        assert_eq!(err.code, ErrorCode::AdapterError);
        assert_eq!(
            err.message,
            "steps[0] (fetch): GET /x failed: Failed to fetch"
        );
    }

    #[test]
    fn cancellation_stops_a_pending_fetch() {
        let dom = FakeDom::default();
        dom.add(FakeNode::default());
        serve(&dom, vec![]);
        let cancelled = std::rc::Rc::new(Cell::new(false));
        let flag = cancelled.clone();
        // The call is cancelled while the request is out (after 100 ms).
        *dom.on_settle.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
            if dom.now.get() >= 100.0 {
                flag.set(true);
            }
        }));
        let tool = adhoc(json!([{"step": "fetch", "url": "/slow", "into": "x"}]));
        let err = block_on(run_value(&dom, &tool, Vars::new(), 5000, &cancelled)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
        assert_eq!(
            err.message,
            "steps[0] (fetch): the call was cancelled while waiting for GET /slow"
        );
        assert_eq!(dom.now.get(), 100.0);
    }
}
