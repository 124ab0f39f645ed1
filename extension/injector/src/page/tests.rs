//! The page tools over the fake DOM: roles, names and states in the snapshot's lines, refs that
//! stay while their element lives, the diff an act answers with, the budget and cursor, and each
//! bad input's typed error.

use std::cell::{Cell, RefCell};

use bridge::ErrorCode;
use bridge::page_ops::{self, PageOp};
use serde_json::{Value, json};

use super::snapshot::{self, Line};
use super::{ChildFrame, Refs, run};
use crate::fake_dom::{FakeDom, FakeNode, block_on};

pub(super) fn el(dom: &FakeDom, parent: Option<usize>, tag: &'static str) -> usize {
    dom.add(FakeNode {
        parent,
        tag,
        visible: true,
        centre: Some((10.0, 10.0)),
        ..FakeNode::default()
    })
}

/// A fake page and its `<html>` element.
fn document() -> (FakeDom, usize) {
    let dom = FakeDom::default();
    let html = el(&dom, None, "html");
    (dom, html)
}

fn with(
    dom: &FakeDom,
    parent: usize,
    tag: &'static str,
    attrs: &[(&'static str, &'static str)],
) -> usize {
    let n = el(dom, Some(parent), tag);
    dom.nodes.borrow_mut()[n].attrs = attrs.to_vec();
    n
}

fn text(dom: &FakeDom, parent: usize, text: &str) {
    dom.add(FakeNode {
        parent: Some(parent),
        tag: "#text",
        text: text.into(),
        visible: true,
        ..FakeNode::default()
    });
}

/// An element under `parent` holding the text `says`.
fn saying(dom: &FakeDom, parent: usize, tag: &'static str, says: &str) -> usize {
    let n = el(dom, Some(parent), tag);
    text(dom, n, says);
    n
}

/// TodoMVC's shape: a heading, the new-todo field, one item with its toggle, label and the
/// delete button it shows on hover, a footer link.
struct Todo {
    dom: FakeDom,
    input: usize,
    toggle: usize,
    item: usize,
    destroy: usize,
}

fn todo_page() -> Todo {
    let (dom, html) = document();
    let body = el(&dom, Some(html), "body");
    let header = el(&dom, Some(body), "header");
    saying(&dom, header, "h1", "todos");
    let input = with(
        &dom,
        header,
        "input",
        &[
            ("placeholder", "What needs to be done?"),
            ("class", "new-todo"),
        ],
    );
    dom.nodes.borrow_mut()[input].value = Some(String::new());
    let section = el(&dom, Some(body), "section");
    let list = el(&dom, Some(section), "ul");
    let item = el(&dom, Some(list), "li");
    let view = el(&dom, Some(item), "div");
    let toggle = with(
        &dom,
        view,
        "input",
        &[("type", "checkbox"), ("class", "toggle")],
    );
    dom.nodes.borrow_mut()[toggle].checked = Some(false);
    saying(&dom, view, "label", "buy   milk");
    let destroy = with(&dom, view, "button", &[("class", "destroy")]);
    dom.nodes.borrow_mut()[destroy].visible = false;
    dom.nodes.borrow_mut()[destroy].centre = None;
    let hidden = with(&dom, body, "div", &[("aria-hidden", "true")]);
    text(&dom, hidden, "secret");
    let footer = el(&dom, Some(body), "footer");
    let a = with(&dom, footer, "a", &[("href", "#/active")]);
    text(&dom, a, "Active");
    *dom.url.borrow_mut() = "http://127.0.0.1/todo".into();
    Todo {
        dom,
        input,
        toggle,
        item,
        destroy,
    }
}

fn render(dom: &FakeDom, refs: &mut Refs<usize>) -> String {
    let lines = snapshot::lines(dom, &0, refs);
    snapshot::render(&lines, 100_000, 0).0
}

fn call(
    dom: &FakeDom,
    refs: &RefCell<Refs<usize>>,
    tool: &str,
    args: Value,
) -> Result<Value, bridge::WireError> {
    // As a call comes: read by the server, then carried to the page whole.
    let op: PageOp = page_ops::parse(tool, args).expect("valid arguments");
    let op = page_ops::WireOp::of(&op).decode().expect("it travels");
    block_on(run(dom, refs, op, None, 5000, &Cell::new(false)))
}

/// A `page_act` call with `args`.
fn act(
    dom: &FakeDom,
    refs: &RefCell<Refs<usize>>,
    args: Value,
) -> Result<Value, bridge::WireError> {
    call(dom, refs, page_ops::ACT, args)
}

#[test]
fn the_snapshot_shows_roles_names_states_and_refs_only_on_what_a_person_acts_on() {
    let page = todo_page();
    let mut refs = Refs::new("d1");
    let text = render(&page.dom, &mut refs);
    assert_eq!(
        text,
        "banner\n h1 \"todos\"\n textbox e1 \"What needs to be done?\"\nlist\n listitem e2\n  \
         checkbox e3\n  buy milk\n  button e4 .destroy hidden\ncontentinfo\n link e5 \"Active\"\n"
    );
    // The same elements keep their refs.
    assert_eq!(render(&page.dom, &mut refs), text);
    assert_eq!(refs.get(4), Some(&page.destroy));
}

#[test]
fn lists_a_drag_can_end_in_get_refs_and_other_lists_none() {
    let (dom, html) = document();
    // A board's empty column, named for people (SortableJS marks nothing before a press).
    with(&dom, html, "ul", &[("aria-label", "Doing")]);
    // A sortable list whose items are draggable (HTML5), and one whose items have a grab state.
    let sortable = el(&dom, Some(html), "ul");
    let item = with(&dom, sortable, "li", &[("draggable", "true")]);
    text(&dom, item, "Plan");
    let grabbing = with(&dom, html, "div", &[("role", "list")]);
    let item = with(
        &dom,
        grabbing,
        "div",
        &[("role", "listitem"), ("aria-grabbed", "false")],
    );
    text(&dom, item, "Build");
    // A plain list (TodoMVC's), and a named element that is no list: no ref.
    let plain = el(&dom, Some(html), "ul");
    let item = with(&dom, plain, "li", &[("draggable", "false")]);
    text(&dom, item, "Ship");
    with(&dom, html, "div", &[("aria-label", "Panel")]);
    assert_eq!(
        render(&dom, &mut Refs::new("d")),
        "list e1 \"Doing\"\nlist e2\n listitem e3: Plan\nlist e4\n listitem e5 grabbable: Build\n\
         list\n listitem e6: Ship\n"
    );
}

#[test]
fn names_come_from_labels_and_states_from_the_element() {
    let (dom, html) = document();
    let label = saying(&dom, html, "label", "Email");
    let field = with(&dom, html, "input", &[("type", "email"), ("required", "")]);
    dom.nodes.borrow_mut()[field].value = Some("a@b.c".into());
    dom.nodes.borrow_mut()[label].label_for = Some(field);
    let menu = with(
        &dom,
        html,
        "button",
        &[("aria-expanded", "false"), ("aria-label", "Menu")],
    );
    let done = with(&dom, html, "button", &[("aria-pressed", "true")]);
    text(&dom, done, "Done");
    dom.nodes.borrow_mut()[done].disabled = true;
    saying(&dom, html, "h3", "Part");
    let select = el(&dom, Some(html), "select");
    dom.nodes.borrow_mut()[select].options = vec![("s", "Small"), ("m", "Medium")];
    dom.nodes.borrow_mut()[select].selected = Some(1);
    let _ = menu;
    let text = render(&dom, &mut Refs::new("d"));
    assert_eq!(
        text,
        "Email\ntextbox e1 \"Email\" =\"a@b.c\" required\nbutton e2 \"Menu\" collapsed\n\
         button e3 \"Done\" disabled pressed\nh3 \"Part\"\ncombobox e4 =\"Medium\" options: Small|Medium\n"
    );
}

#[test]
fn a_file_input_shows_as_its_button_saying_it_takes_files_and_is_found_by_its_label() {
    let (dom, html) = document();
    let label = saying(&dom, html, "label", "Attachments");
    let input = with(&dom, html, "input", &[("type", "file"), ("multiple", "")]);
    dom.nodes.borrow_mut()[label].label_for = Some(input);
    assert_eq!(
        render(&dom, &mut Refs::new("d")),
        "Attachments\nbutton e1 \"Attachments\" file multiple\n"
    );
    let attachments = bridge::locator::Locator::Label("Attachments".into());
    let found = super::locate::query_all(&dom, None, &attachments).unwrap();
    assert_eq!(found, vec![input]);
}

#[test]
fn an_act_answers_with_what_changed_and_refs_stay_while_their_element_lives() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let answer = act(&page.dom, &refs, json!({"ref": "e3", "action": "check"})).unwrap();
    let text = answer["text"].as_str().unwrap();
    assert!(text.starts_with("checked e3 (checkbox)\n"), "{text}");
    assert!(
        text.ends_with(" listitem e2\n-  checkbox e3\n+  checkbox e3 checked focused\n"),
        "{text}"
    );
    assert_eq!(answer["refs"], json!(["e2", "e3"]));
    assert_eq!(answer["doc"], "d1");
    // Acting again with no change to make says so.
    let again = act(&page.dom, &refs, json!({"ref": "e3", "action": "check"})).unwrap();
    assert!(
        again["text"]
            .as_str()
            .unwrap()
            .ends_with("no visible change\n")
    );
    // Its item removed: the ref is stale, never another element's.
    page.dom.nodes.borrow_mut()[page.item].attached = false;
    page.dom.nodes.borrow_mut()[page.toggle].attached = false;
    let gone = act(&page.dom, &refs, json!({"ref": "e3", "action": "click"})).unwrap_err();
    assert_eq!(gone.code, ErrorCode::StaleRef);
    assert!(gone.message.contains("no longer in the page"), "{gone}");
}

#[test]
fn bad_input_gets_a_typed_error_at_once() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let err = |args: Value| act(&page.dom, &refs, args).unwrap_err();
    // A ref this page never gave.
    let unknown = err(json!({"ref": "e99", "action": "click"}));
    assert_eq!(unknown.code, ErrorCode::StaleRef);
    assert!(
        unknown.message.contains("not a ref of this page"),
        "{unknown}"
    );
    // An action the element cannot take.
    let fill_button = err(json!({"ref": "e4", "action": "fill", "value": "x"}));
    assert_eq!(fill_button.code, ErrorCode::InvalidArgs);
    assert!(fill_button.message.contains("e4 (button)"), "{fill_button}");
    assert_eq!(
        err(json!({"ref": "e4", "action": "check"})).code,
        ErrorCode::InvalidArgs
    );
    assert_eq!(
        err(json!({"ref": "e1", "action": "select", "value": "x"})).code,
        ErrorCode::InvalidArgs
    );
    assert_eq!(
        err(json!({"selector": "#nope", "action": "click"})).code,
        ErrorCode::ElementNotFound
    );
    assert_eq!(
        err(json!({"selector": "a!!b", "action": "click"})).code,
        ErrorCode::InvalidArgs
    );
    // A ref of an earlier document of the tab.
    let op = page_ops::parse(page_ops::ACT, json!({"ref": "e1", "action": "click"})).unwrap();
    let old = block_on(run(
        &page.dom,
        &refs,
        op,
        Some("d0"),
        5000,
        &Cell::new(false),
    ))
    .unwrap_err();
    assert_eq!(old.code, ErrorCode::StaleRef);
    assert!(old.message.contains("earlier page"), "{old}");
    // And the next call works.
    assert!(
        act(
            &page.dom,
            &refs,
            json!({"ref": "e1", "action": "fill", "value": "milk"})
        )
        .is_ok()
    );
    assert_eq!(
        page.dom.nodes.borrow()[page.input].value.as_deref(),
        Some("milk")
    );
}

/// The server read the value once; the page acts with it as it is: text that looks like a
/// template (issue 27's `{{value}}` round trip) is typed, never interpolated.
#[test]
fn an_acts_text_is_put_as_the_client_wrote_it() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    for text in ["{{value}}", "{{ref}} and {{value}}", "{{"] {
        let fill = json!({"ref": "e1", "action": "fill", "value": text});
        act(&page.dom, &refs, fill).unwrap();
        assert_eq!(
            page.dom.nodes.borrow()[page.input].value.as_deref(),
            Some(text)
        );
    }
}

#[test]
fn a_value_missing_from_a_select_names_the_options_there_are() {
    let (dom, html) = document();
    let select = el(&dom, Some(html), "select");
    dom.nodes.borrow_mut()[select].options = vec![("s", "Small"), ("m", "Medium")];
    dom.nodes.borrow_mut()[select].selected = Some(0);
    let refs = RefCell::new(Refs::new("d"));
    call(&dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let missing = act(
        &dom,
        &refs,
        json!({"ref": "e1", "action": "select", "value": "Huge"}),
    )
    .unwrap_err();
    assert_eq!(missing.code, ErrorCode::ElementNotFound);
    assert!(missing.message.contains("Small, Medium"), "{missing}");
    let by_text = act(
        &dom,
        &refs,
        json!({"ref": "e1", "action": "select", "value": "Medium"}),
    )
    .unwrap();
    assert!(
        by_text["text"].as_str().unwrap().contains("=\"Medium\""),
        "{by_text}"
    );
}

#[test]
fn a_covered_button_names_what_covers_it() {
    let page = todo_page();
    let html = 0;
    let cover = with(&page.dom, html, "div", &[("class", "overlay")]);
    page.dom.nodes.borrow_mut()[page.input].covered_by = Some(cover);
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let covered = act(&page.dom, &refs, json!({"ref": "e1", "action": "click"})).unwrap_err();
    assert_eq!(covered.code, ErrorCode::NotActionable);
    assert!(
        covered
            .message
            .starts_with("e1 (textbox \"What needs to be done?\") is covered by <div"),
        "{covered}"
    );
    assert!(covered.message.contains("overlay"), "{covered}");
}

#[test]
fn a_long_page_comes_in_budgeted_parts_that_a_cursor_pages_through() {
    let lines: Vec<Line> = (0..100)
        .map(|i| Line {
            depth: 1,
            text: format!("listitem e{i}: item number {i}"),
            is_text: false,
            frame: None,
        })
        .collect();
    let (first, next) = snapshot::render(&lines, 300, 0);
    let next = next.expect("more to come");
    assert!(first.len() < 400, "{first}");
    assert!(
        first.ends_with(&format!("call again with cursor={next}\n")),
        "{first}"
    );
    let (second, _) = snapshot::render(&lines, 300, next);
    assert!(
        second.starts_with(&format!(" listitem e{next}: item number {next}\n")),
        "{second}"
    );
    let (rest, none) = snapshot::render(&lines, 100_000, 95);
    assert_eq!(none, None);
    assert_eq!(rest.lines().count(), 5);
}

#[test]
fn a_wait_ends_when_the_text_comes_or_at_its_deadline() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    let timed_out = call(
        &page.dom,
        &refs,
        page_ops::WAIT,
        json!({"text": "Saved", "timeout_ms": 300}),
    )
    .unwrap_err();
    assert_eq!(timed_out.code, ErrorCode::Timeout);
    assert!(timed_out.message.contains("300 ms"), "{timed_out}");
    let header = 2;
    *page.dom.on_settle.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
        if dom.now.get() > 10_000.0 {
            text(dom, header, " Saved ");
        }
    }));
    page.dom.now.set(9_950.0);
    let came = call(&page.dom, &refs, page_ops::WAIT, json!({"text": "Saved"})).unwrap();
    assert!(
        came["text"]
            .as_str()
            .unwrap()
            .starts_with("\"Saved\" is there after 100 ms"),
        "{came}"
    );
    let gone = call(
        &page.dom,
        &refs,
        page_ops::WAIT,
        json!({"text": "todos", "gone": true, "timeout_ms": 100}),
    );
    assert_eq!(gone.unwrap_err().code, ErrorCode::Timeout);
}

#[test]
fn find_and_read_see_what_the_snapshot_sees() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    let find = |args: Value| call(&page.dom, &refs, page_ops::FIND, args).unwrap();
    let found = find(json!({"text": "milk"}));
    assert_eq!(found["text"], "listitem e2\n buy milk\n");
    let found = find(json!({"role": "link", "name": "active"}));
    assert_eq!(found["text"], "link e5 \"Active\"\n");
    assert_eq!(found["refs"], json!(["e5"]));
    let none = find(json!({"text": "secret"}));
    assert_eq!(none["text"], "nothing found\n");
    let read = call(
        &page.dom,
        &refs,
        page_ops::READ,
        json!({"format": "markdown"}),
    )
    .unwrap();
    assert_eq!(
        read["text"],
        "# todos\n\n- buy milk\n\n[Active](#/active)\n"
    );
    let plain = call(&page.dom, &refs, page_ops::READ, json!({})).unwrap();
    assert_eq!(plain["text"], "todos\nbuy milk\nActive\n");
}

#[test]
fn enter_after_a_fill_of_an_earlier_act_commits_the_field_as_chrome_does() {
    let page = todo_page();
    page.dom.nodes.borrow_mut()[page.input].text_input = true;
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let act_on_page = |args: Value| act(&page.dom, &refs, args).unwrap();
    act_on_page(json!({"ref": "e1", "action": "fill", "value": "milk"}));
    let changes = |dom: &FakeDom| {
        dom.events
            .borrow()
            .iter()
            .filter(|e| *e == &format!("change {}", page.input))
            .count()
    };
    assert_eq!(changes(&page.dom), 0);
    act_on_page(json!({"ref": "e1", "action": "press", "key": "Enter"}));
    assert_eq!(changes(&page.dom), 1, "{:?}", page.dom.events.borrow());
    // Committed: another Enter with nothing new fires none.
    act_on_page(json!({"ref": "e1", "action": "press", "key": "Enter"}));
    assert_eq!(changes(&page.dom), 1);
    // A fill, then an act elsewhere: the field is committed as the focus leaves it.
    act_on_page(json!({"ref": "e1", "action": "fill", "value": "bread"}));
    act_on_page(json!({"ref": "e5", "action": "click"}));
    assert_eq!(changes(&page.dom), 2);
}

#[test]
fn text_is_quoted_only_where_it_could_be_read_as_an_elements_line() {
    let dom = FakeDom::default();
    let html = el(&dom, None, "html");
    for words in [
        "button to press",
        "e12 is a ref",
        "Plain words",
        "- a dash",
        ".",
        "h2 of them",
    ] {
        let p = el(&dom, Some(html), "p");
        text(&dom, p, words);
    }
    let long = el(&dom, Some(html), "p");
    text(&dom, long, &"long ".repeat(40));
    let text = render(&dom, &mut Refs::new("d"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        &lines[..5],
        [
            "\"button to press\"",
            "\"e12 is a ref\"",
            "Plain words",
            "\"- a dash\"",
            "\"h2 of them\""
        ]
    );
    // Punctuation alone is left out; a long text is cut (page_read reads it whole).
    assert_eq!(lines.len(), 6);
    assert!(
        lines[5].ends_with('…') && lines[5].chars().count() == 101,
        "{}",
        lines[5]
    );
}

#[test]
fn an_act_compares_with_what_the_model_last_saw_of_the_page() {
    let page = todo_page();
    let refs = RefCell::new(Refs::new("d1"));
    call(&page.dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    // The page changed by itself after the snapshot: the act's diff is against that snapshot,
    // so the model learns of the page's own change too, and is told it was not the act's.
    let footer = 16;
    text(&page.dom, footer, "Saved by the page");
    let answer = act(&page.dom, &refs, json!({"ref": "e3", "action": "check"})).unwrap();
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("+ Saved by the page"), "{answer}");
    assert!(said.contains("also changed by itself"), "{answer}");
    // Nothing changed since that act: the next one starts from its answer's page.
    assert!(refs.borrow().last.is_some());
    let again = act(&page.dom, &refs, json!({"ref": "e3", "action": "uncheck"})).unwrap();
    assert!(
        again["text"]
            .as_str()
            .unwrap()
            .contains("-  checkbox e3 checked"),
        "{again}"
    );
}

#[test]
fn an_aria_listbox_shows_its_options() {
    let (dom, html) = document();
    let list = with(&dom, html, "div", &[("role", "listbox")]);
    for name in ["Chocolate", "Strawberry"] {
        let option = with(
            &dom,
            list,
            "div",
            &[("role", "option"), ("aria-selected", "false")],
        );
        text(&dom, option, name);
    }
    assert_eq!(
        render(&dom, &mut Refs::new("d")),
        "listbox e1\n option e2 \"Chocolate\"\n option e3 \"Strawberry\"\n"
    );
}

/// A form a redesign changes the classes and ids of, but not what a person sees: a labelled
/// field, a field with a placeholder, two buttons, a list item holding a link, a test id.
struct Redesigned {
    dom: FakeDom,
    title: usize,
    search: usize,
    save: usize,
    cancel: usize,
    link: usize,
    panel: usize,
}

fn redesigned() -> Redesigned {
    let (dom, html) = document();
    let body = el(&dom, Some(html), "body");
    let panel = with(&dom, body, "div", &[("data-testid", "panel")]);
    let label = saying(&dom, panel, "label", "Title");
    let title = el(&dom, Some(panel), "input");
    dom.nodes.borrow_mut()[label].label_for = Some(title);
    let search = with(&dom, panel, "input", &[("placeholder", "Search")]);
    let save = saying(&dom, panel, "button", "Save");
    let cancel = saying(&dom, panel, "button", " Cancel ");
    let list = el(&dom, Some(body), "ul");
    let item = el(&dom, Some(list), "li");
    let link = with(&dom, item, "a", &[("href", "/")]);
    text(&dom, link, "Home");
    Redesigned {
        dom,
        title,
        search,
        save,
        cancel,
        link,
        panel,
    }
}

#[test]
fn locators_find_elements_by_what_a_person_sees() {
    use super::locate::query_all;
    use bridge::locator::Locator;
    let page = redesigned();
    let found = |text: &str| query_all(&page.dom, None, &Locator::parse(text).unwrap()).unwrap();
    assert_eq!(found(r#"role=button[name="Save"]"#), [page.save]);
    assert_eq!(
        found("role=button[name=Cancel]"),
        [page.cancel],
        "white space squashed"
    );
    assert_eq!(found("role=button"), [page.save, page.cancel]);
    assert_eq!(found("label=Title"), [page.title]);
    assert_eq!(found("placeholder=Search"), [page.search]);
    // The list item's whole text is the link's too: the innermost is found.
    assert_eq!(found("text=Home"), [page.link]);
    assert_eq!(found("testid=panel"), [page.panel]);
    assert!(found(r#"role=button[name="Delete"]"#).is_empty());
    // Inside a scope only.
    let inside = query_all(
        &page.dom,
        Some(&page.panel),
        &Locator::parse("text=Home").unwrap(),
    );
    assert_eq!(inside.unwrap(), Vec::<usize>::new());
}

#[test]
fn the_best_locator_is_the_most_robust_one_that_is_unique() {
    use super::locate::best;
    let page = redesigned();
    // A field's placeholder is its accessible name when nothing else names it (`search`).
    for (node, locator) in [
        (page.panel, "testid=panel"),
        (page.save, r#"role=button[name="Save"]"#),
        (page.link, r#"role=link[name="Home"]"#),
        (page.title, r#"role=textbox[name="Title"]"#),
        (page.search, r#"role=textbox[name="Search"]"#),
    ] {
        let found = best(&page.dom, &node).map(|l| l.to_string());
        assert_eq!(found.as_deref(), Some(locator), "node {node}");
    }
}

const PAY: &str = "http://127.0.0.1:9000/pay";
const ADS: &str = "http://127.0.0.1:9000/ads";

/// A page with two frames of another origin: the payment frame (Chrome's frame 7) answers, the
/// ads frame never does.
fn page_with_frames() -> FakeDom {
    let (dom, html) = document();
    let body = el(&dom, Some(html), "body");
    saying(&dom, body, "h1", "Shop");
    for (index, (src, title)) in [(PAY, "Payment"), (ADS, "Ads")].into_iter().enumerate() {
        let iframe = with(&dom, body, "iframe", &[("title", title)]);
        dom.nodes.borrow_mut()[iframe].child_frame = Some(ChildFrame {
            src: src.into(),
            index: index as u32,
        });
    }
    *dom.url.borrow_mut() = "http://127.0.0.1:8000/shop".into();
    dom.frame_answers.borrow_mut().insert(
        (PAY.to_owned(), 0),
        json!({"frame": 7, "doc": "fd7", "url": "http://127.0.0.1:9000/pay?x", "title": "Pay",
               "text": "form\n button f7e1 \"Pay now\"\n", "refs": ["f7e1"],
               "frames": {"9": "fd9"}}),
    );
    dom
}

#[test]
fn a_cross_origin_frame_shows_its_content_in_place_with_refs_to_that_frame() {
    let dom = page_with_frames();
    let refs = RefCell::new(Refs::new("top"));
    let answer = call(&dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    assert_eq!(
        answer["text"],
        "h1 \"Shop\"\niframe \"Payment\" [content from http://127.0.0.1:9000]\n form\n  \
         button f7e1 \"Pay now\"\niframe \"Ads\" (not answering)\n"
    );
    assert_eq!(answer["refs"], json!(["f7e1"]));
    // The documents of the frame and of its own frames, which the server routes refs with.
    assert_eq!(answer["frames"], json!({"7": "fd7", "9": "fd9"}));
    // Each frame is asked once, bounded well within the call's time, and both are asked before
    // either answer is awaited (a slow frame does not delay the other's question).
    let bound = page_ops::FRAME_ANSWER_MS;
    assert_eq!(
        *dom.frames_asked.borrow(),
        [
            Ok((PAY.to_owned(), 0, 0, bound)),
            Ok((ADS.to_owned(), 0, 1, bound)),
            Err(PAY.to_owned()),
            Err(ADS.to_owned())
        ]
    );
    // page_find sees inside frames too.
    let found = call(&dom, &refs, page_ops::FIND, json!({"text": "pay now"})).unwrap();
    assert_eq!(found["text"], "button f7e1 \"Pay now\"\n");
}

#[test]
fn a_frame_whose_id_passes_32_bits_is_shown_not_dropped() {
    // Firefox numbers frames past 2^32 (`17179869185`); such a frame once showed "(not answering)".
    let dom = page_with_frames();
    dom.frame_answers.borrow_mut().insert(
        (PAY.to_owned(), 0),
        json!({"frame": 17_179_869_185_u64, "doc": "fdx", "url": "http://127.0.0.1:9000/pay",
               "title": "Pay", "text": "button f17179869185e1 \"Pay now\"\n",
               "refs": ["f17179869185e1"]}),
    );
    let refs = RefCell::new(Refs::new("top"));
    let answer = call(&dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    assert!(
        answer["text"].as_str().unwrap().contains(
            "iframe \"Payment\" [content from http://127.0.0.1:9000]\n button f17179869185e1"
        ),
        "{answer}"
    );
    assert_eq!(answer["refs"], json!(["f17179869185e1"]));
    assert_eq!(answer["frames"], json!({"17179869185": "fdx"}));
}

#[test]
fn a_frame_with_no_time_left_is_not_asked() {
    let dom = page_with_frames();
    let refs = RefCell::new(Refs::new("top"));
    let op = page_ops::parse(page_ops::SNAPSHOT, json!({})).unwrap();
    let answer = block_on(run(&dom, &refs, op, None, 1, &Cell::new(false))).unwrap();
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("iframe \"Payment\" (not answering)"),
        "{answer}"
    );
    assert!(dom.frames_asked.borrow().is_empty());
}

#[test]
fn a_frames_runtime_names_its_refs_with_its_frame_and_refuses_others() {
    let Todo { dom, .. } = todo_page();
    let refs = RefCell::new(Refs::new("fd7"));
    refs.borrow_mut().frame = 7;
    let answer = call(&dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    let text = answer["text"].as_str().unwrap();
    assert!(
        text.contains("textbox f7e1 \"What needs to be done?\""),
        "{text}"
    );
    assert_eq!(answer["frame"], 7);
    let filled = act(
        &dom,
        &refs,
        json!({"ref": "f7e1", "action": "fill", "value": "x"}),
    )
    .unwrap();
    assert!(filled["text"].as_str().unwrap().starts_with("filled f7e1"));
    // The top document's ref, or another frame's, is not this frame's.
    for other in ["e1", "f8e1"] {
        let op = page_ops::parse(page_ops::ACT, json!({"ref": other, "action": "click"})).unwrap();
        let err = block_on(run(&dom, &refs, op, None, 5000, &Cell::new(false))).unwrap_err();
        assert_eq!(err.code, ErrorCode::StaleRef, "{other}");
    }
    // A ref of the frame's earlier page.
    let op = page_ops::parse(page_ops::ACT, json!({"ref": "f7e1", "action": "click"})).unwrap();
    let err = block_on(run(&dom, &refs, op, Some("old"), 5000, &Cell::new(false))).unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleRef);
    assert!(err.message.contains("earlier page of its frame"), "{err}");
}

/// A page with a "Save" button (node 2, ref e1 once snapshot) and what a click on it logs.
fn save_page() -> (FakeDom, RefCell<Refs<usize>>) {
    let (dom, html) = document();
    let body = el(&dom, Some(html), "body");
    saying(&dom, body, "button", "Save");
    let refs = RefCell::new(Refs::new("d1"));
    let shown = call(&dom, &refs, page_ops::SNAPSHOT, json!({})).unwrap();
    assert_eq!(shown["text"], "button e1 \"Save\"\n");
    (dom, refs)
}

/// The page re-renders `old`: it leaves the page and an equal button comes (the new node).
fn rerender(dom: &FakeDom, old: usize, name: &str) -> usize {
    dom.nodes.borrow_mut()[old].attached = false;
    let new = el(dom, Some(1), "button");
    text(dom, new, name);
    new
}

fn clicked(dom: &FakeDom, node: usize) -> usize {
    let wanted = format!("click {node}");
    dom.events.borrow().iter().filter(|e| **e == wanted).count()
}

#[test]
fn a_ref_whose_element_was_re_rendered_acts_on_the_equal_new_one() {
    let (dom, refs) = save_page();
    let new = rerender(&dom, 2, "Save");
    let answer = act(&dom, &refs, json!({"ref": "e1", "action": "click"}));
    let answer = answer.expect("the new button is e1's");
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .starts_with("clicked e1 (button \"Save\")"),
        "{answer}"
    );
    assert_eq!((clicked(&dom, 2), clicked(&dom, new)), (0, 1));
    // From then on the ref names the new button.
    act(&dom, &refs, json!({"ref": "e1", "action": "click"})).unwrap();
    assert_eq!(clicked(&dom, new), 2);
}

#[test]
fn a_ref_stays_stale_when_no_single_equal_element_took_its_place() {
    // Another name: not the element the model saw.
    let (dom, refs) = save_page();
    rerender(&dom, 2, "Saving…");
    let stale = act(&dom, &refs, json!({"ref": "e1", "action": "click"}));
    assert_eq!(stale.unwrap_err().code, ErrorCode::StaleRef);
    // Two equal ones: which one is not known.
    let (dom, refs) = save_page();
    rerender(&dom, 2, "Save");
    rerender(&dom, 2, "Save");
    let stale = act(&dom, &refs, json!({"ref": "e1", "action": "click"}));
    assert_eq!(stale.unwrap_err().code, ErrorCode::StaleRef);
    assert!(!dom.events.borrow().iter().any(|e| e.starts_with("click")));
}

#[test]
fn a_ref_whose_element_was_re_rendered_while_the_click_waited_is_clicked_once() {
    let (dom, refs) = save_page();
    let overlay = el(&dom, Some(1), "div");
    dom.nodes.borrow_mut()[2].covered_by = Some(overlay);
    let new = saying(&dom, 1, "button", "Save");
    dom.nodes.borrow_mut()[new].attached = false;
    *dom.on_settle.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
        let mut nodes = dom.nodes.borrow_mut();
        nodes[2].attached = false;
        nodes[new].attached = true;
    }));
    act(&dom, &refs, json!({"ref": "e1", "action": "click"})).expect("the new button is clicked");
    assert_eq!((clicked(&dom, 2), clicked(&dom, new)), (0, 1));
}
