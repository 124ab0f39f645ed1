//! The step interpreter: runs a tool's declarative steps against a [`Dom`] within the call's
//! deadline, honouring cancellation, and names the failing step (`steps[1].steps[0] (click)`),
//! its selector and the reason in every error.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;

use bridge::adapter::{Field, Read, Step, ToolDef, WaitUntil};
use bridge::template::{self, TemplateError, Vars};
use bridge::{ErrorCode, WireError};
use serde_json::{Map, Value};

use crate::dom::{Dom, KeyPhase};
use crate::keys::key_info;

/// Longest pause between two checks of a waited-for condition when the DOM does not change
/// (visibility can change through CSS alone).
const POLL_MS: f64 = 50.0;

/// Runs `tool` with `args` (already checked) and returns its result (`null` without `return`).
pub async fn run_tool<D: Dom>(
    dom: &D,
    tool: &ToolDef,
    args: Vars,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Value, WireError> {
    let mut run = Run {
        dom,
        deadline: dom.now_ms() + timeout_ms as f64,
        timeout_ms,
        cancelled,
        vars: args,
        focus_value: None,
    };
    Ok(run
        .steps(&tool.steps, None, String::new())
        .await?
        .unwrap_or(Value::Null))
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
    ) -> StepsFuture<'a>
    where
        'd: 'a,
    {
        Box::pin(async move {
            for (i, step) in steps.iter().enumerate() {
                let path = format!("{prefix}steps[{i}]");
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
            Step::Click { selector } => {
                let selector = self.selector(selector, label)?;
                let node = self.find(scope, &selector, label)?;
                self.dom.click(&node);
            }
            Step::Fill { selector, value } => {
                let selector = self.selector(selector, label)?;
                let value = template::render_text(value, &self.vars)
                    .map_err(|e| template_error(label, e))?;
                let node = self.find(scope, &selector, label)?;
                self.dom.focus(&node);
                if self.dom.is_text_input(&node) {
                    let before = self.dom.value(&node).unwrap_or_default();
                    self.focus_value = Some((node.clone(), before));
                }
                self.dom.set_value(&node, &value).map_err(|why| {
                    fail(
                        ErrorCode::AdapterError,
                        label,
                        format!("`{selector}` {why}"),
                    )
                })?;
                self.dom.dispatch_input(&node, &value);
            }
            Step::Press { selector, key } => {
                let node = match selector {
                    Some(selector) => {
                        let selector = self.selector(selector, label)?;
                        self.find(scope, &selector, label)?
                    }
                    None => self.dom.active_element().unwrap_or_else(|| self.dom.root()),
                };
                self.press(&node, key);
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
                text_equals,
                steps,
            } => {
                let selector = self.selector(selector, label)?;
                let text_selector = match text_selector {
                    Some(ts) => Some(self.selector(ts, label)?),
                    None => None,
                };
                let wanted = template::render_text(text_equals, &self.vars)
                    .map_err(|e| template_error(label, e))?;
                let candidates = self
                    .dom
                    .query_all(scope, &selector)
                    .map_err(|why| bad_selector(label, &selector, &why))?;
                let mut found = None;
                for candidate in &candidates {
                    let text_node = match &text_selector {
                        Some(ts) => self
                            .dom
                            .query(Some(candidate), ts)
                            .map_err(|why| bad_selector(label, ts, &why))?,
                        None => Some(candidate.clone()),
                    };
                    if text_node.is_some_and(|n| self.dom.text(&n).trim() == wanted) {
                        found = Some(candidate.clone());
                        break;
                    }
                }
                let Some(found) = found else {
                    let whose = match &text_selector {
                        Some(ts) => format!("whose `{ts}` text"),
                        None => "whose text".to_owned(),
                    };
                    return Err(fail(
                        ErrorCode::ElementNotFound,
                        label,
                        format!(
                            "no `{selector}` {whose} equals {wanted:?} ({} candidates)",
                            candidates.len()
                        ),
                    ));
                };
                return self.steps(steps, Some(found), format!("{path}.")).await;
            }
            Step::Return { value } => {
                return template::render_value(value, &self.vars)
                    .map(Some)
                    .map_err(|e| template_error(label, e));
            }
        }
        Ok(None)
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
            if self.cancelled.get() {
                return Err(fail(
                    ErrorCode::Cancelled,
                    label,
                    "the call was cancelled while waiting",
                ));
            }
            self.dom.settle((deadline - now).min(POLL_MS)).await;
        }
    }

    /// keydown, keypress (printable keys and Enter), keyup; and for Enter on a text input whose
    /// value changed since `fill` focused it, the `change` Chrome fires natively (TodoMVC's
    /// vanillajs adds a todo on `change`, its React variant on keydown).
    fn press(&mut self, node: &D::Node, key: &str) {
        let info = key_info(key);
        let not_cancelled = self.dom.dispatch_key(node, KeyPhase::Down, &info);
        if not_cancelled && info.char_code.is_some() {
            let press_not_cancelled = self.dom.dispatch_key(node, KeyPhase::Press, &info);
            if press_not_cancelled && info.key == "Enter" && self.dom.is_text_input(node) {
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
        self.dom.dispatch_key(node, KeyPhase::Up, &info);
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
            Read::Value => self.dom.value(node).map_or(Value::Null, Value::String),
            Read::Exists => Value::Bool(true),
            Read::Attr(name) => self.dom.attr(node, name).map_or(Value::Null, Value::String),
            Read::Prop(name) => self.dom.prop(node, name),
            Read::HasClass(name) => Value::Bool(self.dom.has_class(node, name)),
        }
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
    use crate::tools::{Catalog, check_args};
    use serde_json::json;

    const INPUT: &str = "#new-todo, .new-todo";
    const LIST: &str = "#todo-list, .todo-list";
    const ITEMS: &str = "#todo-list > li, .todo-list > li";

    fn catalog() -> Catalog {
        Catalog::new(vec![
            bridge::adapter::parse_adapter(include_str!("../../../adapters/todomvc.json")).unwrap(),
        ])
    }

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

    fn call(dom: &FakeDom, tool: &str, args: Value, timeout_ms: u64) -> Result<Value, WireError> {
        let catalog = catalog();
        let tool = catalog.find(tool).unwrap();
        let args = check_args(tool, args)?;
        block_on(run_tool(dom, tool, args, timeout_ms, &Cell::new(false)))
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
        block_on(run_tool(
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
        let result = call(&dom, "todomvc_add_todo", json!({"title": "Buy milk"}), 1000).unwrap();
        assert_eq!(result, json!({"added": "Buy milk"}));
        assert_eq!(dom.nodes.borrow()[1].value.as_deref(), Some("Buy milk"));
        assert_eq!(
            *dom.events.borrow(),
            [
                "focus 1",
                "input 1 Buy milk",
                "Down 1 Enter 13",
                "Press 1 Enter 13",
                "change 1",
                "Up 1 Enter 13"
            ]
        );
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
        dom.cancel_keydown.set(true);
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
                .any(|e| e.starts_with("change") || e.starts_with("Press")),
            "{events:?}"
        );
        assert!(
            events.contains(&"Up 1 Enter 13".to_owned()),
            "press without selector hits the focused input"
        );
    }

    #[test]
    fn list_todos_extracts_records() {
        let dom = todomvc(&[("a", false), ("b", true)]);
        let result = call(&dom, "todomvc_list_todos", json!({}), 1000).unwrap();
        assert_eq!(
            result,
            json!([{"title": "a", "completed": false}, {"title": "b", "completed": true}])
        );
        // A missing field element reads as null (and has_class as false).
        dom.nodes.borrow_mut()[5].attached = false; // the first item's label
        let result = call(&dom, "todomvc_list_todos", json!({}), 1000).unwrap();
        assert_eq!(result[0], json!({"title": null, "completed": false}));
    }

    #[test]
    fn toggle_picks_the_item_by_its_label() {
        let dom = todomvc(&[("a", false), ("b", false)]);
        let result = call(&dom, "todomvc_toggle_todo", json!({"title": "b"}), 1000).unwrap();
        assert_eq!(result, json!({"title": "b", "completed": true}));
        assert!(dom.has_class(&6, "completed"));
        assert!(!dom.has_class(&3, "completed"));

        let err = call(&dom, "todomvc_toggle_todo", json!({"title": "zzz"}), 1000).unwrap_err();
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
            run_tool(&dom, &tool, Vars::new(), 5000, &cancelled).await
        })
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
        assert!(err.message.starts_with("steps[0] (wait)"), "{err}");
    }
}
