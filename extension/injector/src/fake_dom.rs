//! A scripted stand-in for the page's DOM, for host tests of the step interpreter: elements
//! list the selectors they match, time only moves when the interpreter waits, and every event
//! the interpreter fires is recorded.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

use bridge::keys::Platform;

use crate::dom::{Dom, FetchFailure, HttpResponse, Leaving};
use crate::input::{Edit, Geometry, KeyEvent, MouseEvent, Point, TextEntry};

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
    /// An `<iframe>` of another origin.
    pub child_frame: Option<crate::page::ChildFrame>,
    /// The tag name (`div` when empty).
    pub tag: &'static str,
    pub disabled: bool,
    pub read_only: bool,
    /// Its box's centre (in view); `None`: no box (shown only on hover).
    pub centre: Option<(f64, f64)>,
    /// The element at its centre when it is not itself.
    pub covered_by: Option<usize>,
    /// Whether scrolling it into view moves it out from under `covered_by` (a fixed header).
    pub cover_scrolls_off: bool,
    /// How it takes text (default: a text control when it has a `value`).
    pub entry: Option<TextEntry>,
    /// The control a `<label>` is for.
    pub label_for: Option<usize>,
    /// Attributes (beyond the `id` every fake element answers).
    pub attrs: Vec<(&'static str, &'static str)>,
    /// Laid out but `visibility: hidden` (page tools).
    pub invisible: bool,
    /// Its text drawn masked (`-webkit-text-security`).
    pub masked: bool,
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
    /// Called after each batch of trusted input the browser performed: lets a test's page react.
    pub on_trusted: RefCell<Option<SettleHook>>,
    /// The files the call carries.
    pub files: RefCell<Vec<bridge::upload::UploadFile>>,
    /// What each file input holds: the names of its files.
    pub input_files: RefCell<std::collections::HashMap<usize, Vec<String>>>,
    /// The kinds of event a listener cancels (`keydown`, `pointerdown`, `beforeinput`, `paste`).
    pub cancel: RefCell<Vec<&'static str>>,
    /// Every pointer and mouse event, with its fields.
    pub mouse: RefCell<Vec<(usize, MouseEvent)>>,
    pub pointer: Cell<Option<usize>>,
    pub platform: Cell<Option<Platform>>,
    /// How often the document changed (an editing command, a paste an editor took).
    pub mutations: Cell<usize>,
    /// Whether the next inserted text replaces the field's text (all of it is selected).
    pub all_selected: Cell<bool>,
    /// The selection `select_range` made (UTF-16 offsets), which `selection_range` reads back.
    pub selection: Cell<Option<(usize, usize)>>,
    /// A page that puts a text control's old value back after `input` (a controlled field).
    pub rejects_values: Cell<bool>,
    /// The value a text control had before `set_value`.
    value_before: RefCell<Option<String>>,
    /// How often the interpreter let the page run its queued work (after each action).
    pub checkpoints: Cell<usize>,
    /// The page's address.
    pub url: RefCell<String>,
    /// A click on the element with this selector leaves for this URL (a link, a submit button):
    /// `Submitting` first when the third field is set, the navigation starting at the next wait.
    pub navigates_on_click: RefCell<Option<(&'static str, String, bool)>>,
    pub leaving: RefCell<Leaving>,
    pub active: Cell<Option<usize>>,
    /// Answers `fetch` (absent: every request fails as a network error).
    pub on_fetch: RefCell<Option<FetchHook>>,
    /// Page tools: the refs kept on elements.
    pub marks: RefCell<std::collections::HashMap<usize, u32>>,
    /// Changes a test made to the page (see `PageDom::changes`).
    pub page_changes: Cell<u64>,
    /// Trusted input on: the commands performed so far (`None`: synthetic input).
    pub trusted: RefCell<Option<Vec<bridge::trusted_input::Command>>>,
    /// What performing trusted input answers (absent: done).
    pub trusted_fails: RefCell<Option<bridge::WireError>>,
    /// What the runtime of the nth frame showing a URL answers to a snapshot (absent: it never
    /// answers), and what happened in order: `Ok((url, nth, index, time given))` when it was
    /// asked, `Err(url)` when its answer was taken.
    pub frame_answers: RefCell<std::collections::HashMap<(String, u32), serde_json::Value>>,
    pub frames_asked: Rc<RefCell<Vec<FrameAsked>>>,
}

/// A frame snapshot asked for (`Ok((url, nth, index, time given))`), or its answer taken
/// (`Err(url)`).
pub type FrameAsked = Result<(String, u32, u32, u64), String>;

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

    fn cancels(&self, kind: &str) -> bool {
        self.cancel.borrow().contains(&kind)
    }

    fn edit_text(&self, node: usize, edit: &Edit) {
        let mut nodes = self.nodes.borrow_mut();
        let text = &mut nodes[node].text;
        if self.all_selected.replace(false) {
            text.clear();
        }
        match edit {
            Edit::InsertText(more) => text.push_str(more),
            Edit::InsertParagraph => text.push('\n'),
            Edit::Delete => {}
        }
        self.mutations.set(self.mutations.get() + 1);
    }
}

impl Dom for FakeDom {
    type Node = usize;
    type Watch = usize;

    fn query(&self, scope: Option<&usize>, selector: &str) -> Result<Option<usize>, String> {
        Ok(self.query_all(scope, selector)?.into_iter().next())
    }

    fn query_all(&self, scope: Option<&usize>, selector: &str) -> Result<Vec<usize>, String> {
        if selector.contains("!!") {
            return Err("'!!' is not a valid selector".into());
        }
        let count = self.nodes.borrow().len();
        // `*` and `[name="value"]` as a browser reads them; any other selector by the list.
        let attribute = selector
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix("\"]"))
            .and_then(|s| s.split_once("=\""));
        Ok((0..count)
            .filter(|&i| {
                let n = &self.nodes.borrow()[i];
                let matches = match (selector, attribute) {
                    ("*", _) => n.tag != "#text",
                    (_, Some((name, value))) => n.attrs.contains(&(name, value)),
                    _ => n.selectors.contains(&selector),
                };
                n.attached && matches
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

    fn rendered_text(&self, node: &usize) -> String {
        // The fake keeps an editor's line breaks in its text, as `innerText` shows them.
        self.text(node)
    }

    fn own_text(&self, node: &usize) -> String {
        let n = &self.nodes.borrow()[*node];
        n.own_text.clone().unwrap_or_else(|| n.text.clone())
    }

    fn value(&self, node: &usize) -> Option<String> {
        self.nodes.borrow()[*node].value.clone()
    }

    fn attr(&self, node: &usize, name: &str) -> Option<String> {
        let n = &self.nodes.borrow()[*node];
        if let Some((_, value)) = n.attrs.iter().find(|(attr, _)| *attr == name) {
            return Some((*value).to_owned());
        }
        (name == "id").then(|| format!("n{node}"))
    }

    fn prop(&self, node: &usize, name: &str) -> Value {
        match name {
            "checked" => {
                let n = &self.nodes.borrow()[*node];
                match n.checked {
                    Some(checked) => Value::Bool(checked),
                    // Only a checkbox has `checked` (untagged fakes stand for TodoMVC's items).
                    None if n.tag.is_empty() => Value::Bool(n.classes.contains(&"completed")),
                    None => Value::Null,
                }
            }
            "selectedIndex" => self.nodes.borrow()[*node]
                .selected
                .map_or(Value::Null, Value::from),
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

    fn scroll_into_view(&self, node: &usize) {
        let mut nodes = self.nodes.borrow_mut();
        if nodes[*node].cover_scrolls_off {
            nodes[*node].covered_by = None;
        }
        drop(nodes);
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

    fn dispatch_select_input(&self, node: &usize) {
        self.log(format!("input {node}"));
    }

    fn dispatch_change(&self, node: &usize) {
        self.log(format!("change {node}"));
    }

    fn submit_implicitly(&self, node: &usize) {
        self.log(format!("implicit submission {node}"));
    }

    fn parent(&self, node: &usize) -> Option<usize> {
        self.nodes.borrow()[*node].parent
    }

    fn contains(&self, ancestor: &usize, node: &usize) -> bool {
        ancestor == node || self.within(*node, Some(ancestor))
    }

    fn tag_name(&self, node: &usize) -> String {
        let tag = self.nodes.borrow()[*node].tag;
        if tag.is_empty() { "div" } else { tag }.to_owned()
    }

    fn is_connected(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].attached
    }

    fn is_disabled(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].disabled
    }

    fn geometry(&self, node: &usize) -> Geometry {
        match self.nodes.borrow()[*node].centre {
            Some((x, y)) => Geometry::Box {
                centre: Point { x, y },
                in_view: true,
            },
            None => Geometry::NoBox,
        }
    }

    fn element_at(&self, node: &usize, _point: Point) -> Option<usize> {
        Some(self.nodes.borrow()[*node].covered_by.unwrap_or(*node))
    }

    fn label_control(&self, label: &usize) -> Option<usize> {
        self.nodes.borrow()[*label].label_for
    }

    fn has_focus(&self, node: &usize) -> bool {
        self.active.get() == Some(*node)
    }

    fn pointer_at(&self) -> Option<usize> {
        self.pointer.get()
    }

    fn set_pointer_at(&self, node: Option<usize>) {
        self.pointer.set(node);
    }

    fn platform(&self) -> Platform {
        self.platform.get().unwrap_or(Platform::Other)
    }

    fn dispatch_mouse(&self, node: &usize, event: &MouseEvent) -> bool {
        self.log(format!("{} {node}", event.kind.name()));
        self.mouse.borrow_mut().push((*node, *event));
        // A click flips a checkbox (and a `.toggle` its item's `completed` class, as TodoMVC does).
        if event.kind.name() == "click" {
            if let Some((selector, url, submits)) = self.navigates_on_click.borrow().clone()
                && self.nodes.borrow()[*node].selectors.contains(&selector)
            {
                *self.leaving.borrow_mut() = if submits {
                    Leaving::Submitting
                } else {
                    Leaving::To(url)
                };
            }
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
        !self.cancels(event.kind.name())
    }

    fn dispatch_key(&self, node: &usize, event: &KeyEvent) -> bool {
        // Each modifier held, by its initial.
        let held: String = event.modifiers.held().map(|name| &name[..1]).collect();
        self.log(format!(
            "{} {node} {} {} {}{held}",
            event.kind.name(),
            event.key,
            event.key_code,
            event.code
        ));
        !self.cancels(event.kind.name())
    }

    fn text_entry(&self, node: &usize) -> Option<(TextEntry, usize)> {
        let n = &self.nodes.borrow()[*node];
        let entry = n
            .entry
            .or_else(|| n.value.is_some().then_some(TextEntry::Control))?;
        Some((entry, *node))
    }

    fn is_read_only(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].read_only
    }

    fn before_input(&self, node: &usize, edit: &Edit) -> bool {
        self.log(format!(
            "beforeinput {node} {} {}",
            edit.input_type(),
            edit.data().unwrap_or("")
        ));
        !self.cancels("beforeinput")
    }

    fn text_input(&self, node: &usize, text: &str) -> bool {
        self.log(format!("textInput {node} {text}"));
        !self.cancels("textInput")
    }

    fn input_event(&self, node: &usize, edit: &Edit) {
        self.log(format!(
            "input {node} {} {}",
            edit.input_type(),
            edit.data().unwrap_or("")
        ));
        if self.rejects_values.get() {
            self.nodes.borrow_mut()[*node].value = self.value_before.borrow().clone();
        }
    }

    fn set_value(&self, node: &usize, value: &str) {
        let before = self.nodes.borrow_mut()[*node]
            .value
            .replace(value.to_owned());
        *self.value_before.borrow_mut() = before;
    }

    fn select_all_contents(&self, host: &usize) {
        self.log(format!("select all {host}"));
        self.all_selected.set(true);
    }

    fn exec_edit(&self, node: &usize, edit: &Edit) -> bool {
        let (command, value) = edit.command();
        self.log(format!("exec {command} {value}"));
        self.edit_text(*node, edit);
        true
    }

    fn select_range(&self, field: &usize, _entry: TextEntry, start: usize, end: usize) {
        self.log(format!("select {field} {start}..{end}"));
        self.selection.set(Some((start, end)));
    }

    fn selection_range(&self, _field: &usize, _entry: TextEntry) -> Option<(usize, usize)> {
        self.selection.get()
    }

    fn dispatch_drag(&self, node: &usize, kind: crate::input::DragKind, _at: Point) -> bool {
        self.log(format!("{} {node}", kind.name()));
        !self.cancels(kind.name())
    }

    fn paste(&self, node: &usize, text: &str) -> bool {
        self.log(format!("paste {node} {text}"));
        if self.cancels("paste") {
            // An editor that handles pastes itself: it replaces its selection.
            self.edit_text(*node, &Edit::InsertText(text.to_owned()));
            return false;
        }
        true
    }

    fn watch(&self, _node: &usize) -> usize {
        self.mutations.get()
    }

    fn saw_change(&self, watch: &usize) -> bool {
        self.mutations.get() != *watch
    }

    fn microtask(&self) -> impl Future<Output = ()> {
        self.log("microtask".to_owned());
        std::future::ready(())
    }

    fn trusted_input(&self) -> bool {
        self.trusted.borrow().is_some()
    }

    fn top_point(&self, _node: &usize, at: Point) -> Point {
        at
    }

    fn perform_trusted(
        &self,
        commands: Vec<bridge::trusted_input::Command>,
    ) -> impl Future<Output = Result<(), bridge::WireError>> {
        let outcome = match self.trusted_fails.borrow().clone() {
            Some(error) => Err(error),
            None => {
                self.log(format!("trusted {}", commands.len()));
                if let Some(done) = self.trusted.borrow_mut().as_mut() {
                    done.extend(commands);
                }
                let hook = self.on_trusted.borrow_mut().take();
                if let Some(mut hook) = hook {
                    hook(self);
                    self.on_trusted.borrow_mut().get_or_insert(hook);
                }
                Ok(())
            }
        };
        std::future::ready(outcome)
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

    fn call_files(&self) -> std::rc::Rc<[bridge::upload::UploadFile]> {
        self.files.borrow().clone().into()
    }

    fn set_input_files(
        &self,
        node: &usize,
        files: &[&bridge::upload::UploadFile],
    ) -> Result<usize, String> {
        let names: Vec<String> = files.iter().map(|f| f.file_name().to_owned()).collect();
        self.log(format!("files {node} {}", names.join(",")));
        self.log(format!("input {node}"));
        self.log(format!("change {node}"));
        let held = names.len();
        self.input_files.borrow_mut().insert(*node, names);
        Ok(held)
    }

    fn drop_files(
        &self,
        node: &usize,
        files: &[&bridge::upload::UploadFile],
    ) -> Result<bool, String> {
        self.log(format!("dragenter {node}"));
        self.log(format!("dragover {node}"));
        if !self.cancels("dragover") {
            self.log(format!("dragleave {node}"));
            return Ok(false);
        }
        let names: Vec<&str> = files.iter().map(|f| f.file_name()).collect();
        self.log(format!("drop {node} {}", names.join(",")));
        Ok(true)
    }

    fn answer_next_dialog(&self, answer: &bridge::dialog::DialogAnswer) {
        self.events
            .borrow_mut()
            .push(format!("dialog {}", answer.to_plan()));
    }

    fn watch_leaving(&self) {
        *self.leaving.borrow_mut() = Leaving::Staying;
    }

    fn leaving(&self) -> Leaving {
        self.leaving.borrow().clone()
    }

    fn leaving_changed(&self, max_ms: f64) -> impl Future<Output = ()> {
        self.settle(max_ms)
    }

    fn url(&self) -> String {
        self.url.borrow().clone()
    }

    fn checkpoint(&self) -> impl Future<Output = ()> {
        self.checkpoints.set(self.checkpoints.get() + 1);
        std::future::ready(())
    }

    fn settle(&self, max_ms: f64) -> impl Future<Output = ()> {
        self.now.set(self.now.get() + max_ms);
        // A planned form submission starts its navigation once the page gets to run.
        if self.leaving() == Leaving::Submitting
            && let Some((_, url, _)) = self.navigates_on_click.borrow().clone()
        {
            *self.leaving.borrow_mut() = Leaving::To(url);
        }
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

impl crate::page::PageDom for FakeDom {
    fn kids(&self, node: &usize) -> Vec<crate::page::Kid<usize>> {
        let nodes = self.nodes.borrow();
        if let Some(root) = nodes[*node].frame_root {
            return vec![crate::page::Kid::Element(root)];
        }
        (0..nodes.len())
            .filter(|&i| nodes[i].parent == Some(*node) && nodes[i].attached)
            .map(|i| match nodes[i].tag {
                "#text" => crate::page::Kid::Text(nodes[i].text.clone()),
                _ => crate::page::Kid::Element(i),
            })
            .collect()
    }

    fn shown(&self, node: &usize) -> crate::page::Shown {
        let n = &self.nodes.borrow()[*node];
        match (n.visible, n.invisible) {
            (_, true) => crate::page::Shown::Invisible,
            (true, false) => crate::page::Shown::Yes,
            (false, false) => crate::page::Shown::No,
        }
    }

    fn by_id(&self, _node: &usize, id: &str) -> Option<usize> {
        let count = self.nodes.borrow().len();
        (0..count).find(|i| self.attr(i, "id").as_deref() == Some(id))
    }

    fn labels(&self, node: &usize) -> Vec<usize> {
        let nodes = self.nodes.borrow();
        (0..nodes.len())
            .filter(|&i| nodes[i].label_for == Some(*node))
            .collect()
    }

    fn mark(&self, node: &usize) -> Option<u32> {
        self.marks.borrow().get(node).copied()
    }

    fn set_mark(&self, node: &usize, n: u32) {
        self.marks.borrow_mut().insert(*node, n);
    }

    fn location(&self) -> (String, String) {
        (self.url.borrow().clone(), "Fake".to_owned())
    }

    fn child_frame(&self, node: &usize) -> Option<crate::page::ChildFrame> {
        self.nodes.borrow()[*node].child_frame.clone()
    }

    fn frame_snapshot(
        &self,
        frame: crate::page::ChildFrame,
        nth: u32,
        _op: bridge::page_ops::WireOp,
        timeout_ms: u64,
    ) -> impl Future<Output = Option<serde_json::Value>> {
        let src = frame.src;
        let asked = (src.clone(), nth, frame.index, timeout_ms);
        self.frames_asked.borrow_mut().push(Ok(asked));
        let answer = self
            .frame_answers
            .borrow()
            .get(&(src.clone(), nth))
            .cloned();
        let log = Rc::clone(&self.frames_asked);
        async move {
            log.borrow_mut().push(Err(src));
            answer
        }
    }

    fn scroll_page(&self) {
        self.log("scroll page".to_owned());
    }

    fn masked(&self, node: &usize) -> bool {
        self.nodes.borrow()[*node].masked
    }

    fn changes(&self) -> u64 {
        // Every event the interpreter fires may change the page, and a test may change it by hand.
        (self.events.borrow().len() + self.mutations.get() + self.nodes.borrow().len()) as u64
            + self.page_changes.get()
    }
}
