//! A scripted stand-in for the page's DOM, for host tests of the step interpreter: elements
//! list the selectors they match, time only moves when the interpreter waits, and every event
//! the interpreter fires is recorded.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use crate::dom::{Dom, FetchFailure, HttpResponse, KeyPhase};
use crate::keys::KeyInfo;

#[derive(Clone, Debug, Default)]
pub struct FakeNode {
    pub parent: Option<usize>,
    pub selectors: Vec<&'static str>,
    pub text: String,
    pub value: Option<String>,
    pub classes: Vec<&'static str>,
    pub visible: bool,
    pub attached: bool,
    pub text_input: bool,
    /// The text of its own text nodes, when it differs from `text`.
    pub own_text: Option<String>,
    /// A checkbox's state (a click flips it).
    pub checked: Option<bool>,
    /// A `<select>`'s options, (value, text).
    pub options: Vec<(&'static str, &'static str)>,
    pub selected: Option<usize>,
    /// An `<iframe>`'s document root.
    pub frame_root: Option<usize>,
}

/// A test's reaction to the interpreter waiting.
pub type SettleHook = Box<dyn FnMut(&FakeDom)>;

/// A test's server: the answer to a GET of a path, or `None` for one that never comes.
pub type FetchHook = Box<dyn Fn(&str) -> Option<Result<HttpResponse, FetchFailure>>>;

#[derive(Default)]
pub struct FakeDom {
    pub nodes: RefCell<Vec<FakeNode>>,
    pub now: Cell<f64>,
    pub events: RefCell<Vec<String>>,
    /// Called whenever the interpreter waits (after time advanced): lets a test change the DOM.
    pub on_settle: RefCell<Option<SettleHook>>,
    pub cancel_keydown: Cell<bool>,
    /// How often the interpreter let the page run its queued work (after each action).
    pub checkpoints: Cell<usize>,
    pub active: Cell<Option<usize>>,
    /// Answers `fetch` (absent: every request fails as a network error).
    pub on_fetch: RefCell<Option<FetchHook>>,
}

impl FakeDom {
    pub fn add(&self, node: FakeNode) -> usize {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(FakeNode {
            attached: true,
            ..node
        });
        nodes.len() - 1
    }

    fn within(&self, node: usize, scope: Option<&usize>) -> bool {
        let Some(&scope) = scope else { return true };
        let nodes = self.nodes.borrow();
        let mut at = nodes[node].parent;
        while let Some(p) = at {
            if p == scope {
                return true;
            }
            at = nodes[p].parent;
        }
        false
    }

    fn log(&self, event: String) {
        self.events.borrow_mut().push(event);
    }
}

impl Dom for FakeDom {
    type Node = usize;

    fn query(&self, scope: Option<&usize>, selector: &str) -> Result<Option<usize>, String> {
        Ok(self.query_all(scope, selector)?.into_iter().next())
    }

    fn query_all(&self, scope: Option<&usize>, selector: &str) -> Result<Vec<usize>, String> {
        if selector.contains("!!") {
            return Err("'!!' is not a valid selector".into());
        }
        let count = self.nodes.borrow().len();
        Ok((0..count)
            .filter(|&i| {
                let n = &self.nodes.borrow()[i];
                n.attached && n.selectors.contains(&selector)
            })
            .filter(|&i| self.within(i, scope))
            .collect())
    }

    fn root(&self) -> usize {
        0
    }

    fn same(&self, a: &usize, b: &usize) -> bool {
        a == b
    }

    fn text(&self, node: &usize) -> String {
        self.nodes.borrow()[*node].text.clone()
    }

    fn own_text(&self, node: &usize) -> String {
        let n = &self.nodes.borrow()[*node];
        n.own_text.clone().unwrap_or_else(|| n.text.clone())
    }

    fn value(&self, node: &usize) -> Option<String> {
        self.nodes.borrow()[*node].value.clone()
    }

    fn attr(&self, node: &usize, name: &str) -> Option<String> {
        (name == "id").then(|| format!("n{node}"))
    }

    fn prop(&self, node: &usize, name: &str) -> Value {
        match name {
            "checked" => {
                let n = &self.nodes.borrow()[*node];
                Value::Bool(n.checked.unwrap_or(n.classes.contains(&"completed")))
            }
            _ => Value::Null,
        }
    }

    fn has_class(&self, node: &usize, name: &str) -> bool {
        self.nodes.borrow()[*node].classes.contains(&name)
    }

    fn is_visible(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].visible
    }

    fn is_text_input(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].text_input
    }

    fn active_element(&self) -> Option<usize> {
        self.active.get()
    }

    fn click(&self, node: &usize) {
        self.log(format!("click {node}"));
        // A `.toggle` checkbox flips its item's `completed` class, as TodoMVC does.
        let mut nodes = self.nodes.borrow_mut();
        if let Some(checked) = &mut nodes[*node].checked {
            *checked = !*checked;
        }
        if nodes[*node].selectors.contains(&".toggle")
            && let Some(parent) = nodes[*node].parent
        {
            let classes = &mut nodes[parent].classes;
            match classes.iter().position(|c| *c == "completed") {
                Some(i) => {
                    classes.remove(i);
                }
                None => classes.push("completed"),
            }
        }
    }

    fn dblclick(&self, node: &usize) {
        self.log(format!("dblclick {node}"));
    }

    fn hover(&self, node: &usize) {
        self.log(format!("hover {node}"));
    }

    fn scroll_into_view(&self, node: &usize) {
        self.log(format!("scroll {node}"));
    }

    fn blur(&self, node: &usize) {
        if self.active.get() == Some(*node) {
            self.active.set(None);
        }
        self.log(format!("blur {node}"));
    }

    fn options(&self, node: &usize) -> Option<Vec<(String, String)>> {
        let n = &self.nodes.borrow()[*node];
        (!n.options.is_empty()).then(|| {
            n.options
                .iter()
                .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
                .collect()
        })
    }

    fn set_selected_index(&self, node: &usize, index: usize) {
        self.nodes.borrow_mut()[*node].selected = Some(index);
    }

    fn frame_root(&self, node: &usize) -> Option<usize> {
        self.nodes.borrow()[*node].frame_root
    }

    fn focus(&self, node: &usize) {
        self.active.set(Some(*node));
        self.log(format!("focus {node}"));
    }

    fn set_value(&self, node: &usize, value: &str) -> Result<(), String> {
        let mut nodes = self.nodes.borrow_mut();
        match &mut nodes[*node].value {
            Some(v) => {
                *v = value.to_owned();
                Ok(())
            }
            None => Err("is not an input, textarea or contenteditable element".into()),
        }
    }

    fn dispatch_input(&self, node: &usize, data: &str) {
        self.log(format!("input {node} {data}"));
    }

    fn dispatch_change(&self, node: &usize) {
        self.log(format!("change {node}"));
    }

    fn submit_implicitly(&self, node: &usize) {
        self.log(format!("implicit submission {node}"));
    }

    fn dispatch_key(&self, node: &usize, phase: KeyPhase, key: &KeyInfo) -> bool {
        self.log(format!("{phase:?} {node} {} {}", key.key, key.key_code));
        !(phase == KeyPhase::Down && self.cancel_keydown.get())
    }

    fn fetch(
        &self,
        path: &str,
        accept: &str,
        max_bytes: usize,
    ) -> impl Future<Output = Result<HttpResponse, FetchFailure>> {
        self.log(format!("fetch {path} {accept}"));
        let mut answer = match self.on_fetch.borrow().as_ref() {
            Some(server) => server(path),
            None => Some(Err(FetchFailure::Network("Failed to fetch".into()))),
        }
        .map(|answer| {
            answer.and_then(|response| {
                if response.body.len() > max_bytes {
                    Err(FetchFailure::TooLarge)
                } else {
                    Ok(response)
                }
            })
        });
        poll_fn(move |_| match answer.take() {
            Some(answer) => Poll::Ready(answer),
            None => Poll::Pending,
        })
    }

    fn now_ms(&self) -> f64 {
        self.now.get()
    }

    fn checkpoint(&self) -> impl Future<Output = ()> {
        self.checkpoints.set(self.checkpoints.get() + 1);
        std::future::ready(())
    }

    fn settle(&self, max_ms: f64) -> impl Future<Output = ()> {
        self.now.set(self.now.get() + max_ms);
        if let Some(hook) = self.on_settle.borrow_mut().as_mut() {
            hook(self);
        }
        std::future::ready(())
    }
}

/// Runs a future whose awaits all complete at once (the fake never really waits).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the fake DOM never leaves a future pending"),
    }
}
