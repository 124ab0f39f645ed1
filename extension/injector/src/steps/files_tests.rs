//! The `upload` step's tests, on the fake DOM: files on a file input (and through its label), a
//! drop on a drop zone, and what is refused.

use super::tests::{assert_refused_containing, run_value};
use super::*;
use crate::fake_dom::{FakeDom, FakeNode, block_on};
use bridge::upload::UploadFile;
use serde_json::json;

fn file(name: &str) -> UploadFile {
    UploadFile {
        name: name.into(),
        mime: bridge::upload::mime_for(name).into(),
        data: "AAEC".into(),
    }
}

/// A page with a single-file input, a multiple one with a label, a text input, a drop zone, and
/// the call's files `a.bin` and `docs/b.png`.
fn page() -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode {
        selectors: vec!["#one"],
        tag: "input",
        attrs: vec![("type", "file")],
        ..FakeNode::default()
    });
    let many = dom.add(FakeNode {
        selectors: vec!["#many"],
        tag: "input",
        attrs: vec![("type", "FILE"), ("multiple", "")],
        ..FakeNode::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#label"],
        tag: "label",
        label_for: Some(many),
        ..FakeNode::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#text"],
        tag: "input",
        attrs: vec![("type", "text")],
        ..FakeNode::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#zone"],
        ..FakeNode::default()
    });
    dom.add(FakeNode {
        selectors: vec!["#off"],
        tag: "input",
        attrs: vec![("type", "file")],
        disabled: true,
        ..FakeNode::default()
    });
    *dom.files.borrow_mut() = vec![file("a.bin"), file("docs/b.png")];
    dom
}

fn upload(dom: &FakeDom, selector: &str, files: serde_json::Value) -> Result<Value, WireError> {
    let tool: ToolDef = serde_json::from_value(json!({
        "name": "t", "description": "d",
        "input_schema": {"type": "object", "properties": {"files": {}}},
        "steps": [{"step": "upload", "selector": selector, "files": "{{files}}"}]
    }))
    .unwrap();
    let args = json!({ "files": files }).as_object().cloned().unwrap();
    block_on(run_value(dom, &tool, args, 1000, &Cell::new(false)))
}

#[test]
fn a_file_input_gets_the_files_and_the_events_of_a_choice_in_the_picker() {
    let dom = page();
    upload(&dom, "#one", json!("a.bin")).unwrap();
    assert_eq!(dom.input_files.borrow()[&0], ["a.bin"]);
    // Through its label, several files on a `multiple` input, by the name the page sees.
    upload(&dom, "#label", json!(["a.bin", "docs/b.png"])).unwrap();
    assert_eq!(dom.input_files.borrow()[&1], ["a.bin", "b.png"]);
    let events = dom.events.borrow().clone();
    assert_eq!(
        events,
        [
            "files 0 a.bin",
            "input 0",
            "change 0",
            "files 1 a.bin,b.png",
            "input 1",
            "change 1"
        ]
    );
}

#[test]
fn a_drop_zone_gets_the_drag_events_and_one_that_takes_no_drop_says_so() {
    let dom = page();
    let refused = upload(&dom, "#zone", json!(["a.bin"])).unwrap_err();
    assert_refused_containing(
        &refused,
        ErrorCode::NoEffect,
        "did not take the dropped files",
    );
    assert_eq!(
        dom.events.borrow().as_slice(),
        ["dragenter 4", "dragover 4", "dragleave 4"]
    );
    dom.events.borrow_mut().clear();
    dom.cancel.borrow_mut().push("dragover");
    upload(&dom, "#zone", json!(["a.bin", "docs/b.png"])).unwrap();
    assert_eq!(
        dom.events.borrow().as_slice(),
        ["dragenter 4", "dragover 4", "drop 4 a.bin,b.png"]
    );
}

#[test]
fn what_cannot_take_the_files_is_refused_with_nothing_set() {
    let dom = page();
    let error =
        |selector: &str, files: serde_json::Value| upload(&dom, selector, files).unwrap_err();
    let many = error("#one", json!(["a.bin", "docs/b.png"]));
    assert_refused_containing(&many, ErrorCode::NotActionable, "takes one file");
    let text = error("#text", json!("a.bin"));
    assert_refused_containing(
        &text,
        ErrorCode::NotActionable,
        "<input type=text>, not a file input",
    );
    assert_eq!(error("#off", json!("a.bin")).code, ErrorCode::NotActionable);
    let none = error("#one", json!([]));
    assert_refused_containing(
        &none,
        ErrorCode::InvalidArgs,
        "`files`: expected at least one",
    );
    // A name the server did not send (it reads what the call names, so this is a bug).
    assert_eq!(error("#one", json!("c.txt")).code, ErrorCode::Internal);
    assert!(dom.input_files.borrow().is_empty());
    assert!(dom.events.borrow().is_empty());
}
