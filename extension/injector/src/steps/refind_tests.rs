//! A step whose element the page re-rendered between being found and being acted on: it finds
//! its element again, once, and acts on the new one; input that had begun is never sent twice.

use super::tests::{assert_refused_containing, fails, run_adhoc};
use crate::fake_dom::{FakeDom, FakeNode};
use bridge::ErrorCode;
use serde_json::json;

/// A page with a "Confirm" button (node 2) covered by an animated panel (node 1) at first.
fn confirm_page() -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    let panel = dom.add(FakeNode {
        parent: Some(0),
        visible: true,
        centre: Some((50.0, 50.0)),
        ..Default::default()
    });
    dom.add(confirm_button(Some(panel)));
    dom
}

/// A "Confirm" button at the page's centre, covered by `covered_by`.
fn confirm_button(covered_by: Option<usize>) -> FakeNode {
    FakeNode {
        parent: Some(0),
        selectors: vec!["#confirm"],
        tag: "button",
        visible: true,
        centre: Some((50.0, 50.0)),
        covered_by,
        ..Default::default()
    }
}

/// What the page does while the step waits for the panel to move away: re-renders the button
/// (the old one leaves the page, an equal new one comes), then the panel is gone. The new
/// button's node.
fn rerender_while_waiting(dom: &FakeDom) -> usize {
    let new = dom.add(confirm_button(None));
    dom.nodes.borrow_mut()[new].attached = false;
    *dom.on_settle.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
        let mut nodes = dom.nodes.borrow_mut();
        nodes[2].attached = false;
        nodes[new].attached = true;
    }));
    new
}

fn events_on(dom: &FakeDom, node: usize) -> Vec<String> {
    let suffix = format!(" {node}");
    dom.events
        .borrow()
        .iter()
        .filter(|e| e.ends_with(&suffix))
        .cloned()
        .collect()
}

#[test]
fn a_button_re_rendered_while_the_click_waited_is_found_again_and_clicked_once() {
    let dom = confirm_page();
    let new = rerender_while_waiting(&dom);
    run_adhoc(
        &dom,
        json!([{"step": "click", "selector": "#confirm"}]),
        json!({}),
        5000,
    )
    .expect("the re-rendered button is clicked");
    // The old button was only scrolled to, as a person looks for it: no input reached it.
    assert_eq!(
        events_on(&dom, 2),
        ["scroll 2"],
        "{:?}",
        dom.events.borrow()
    );
    let on_new = events_on(&dom, new);
    assert_eq!(
        on_new.iter().filter(|e| e.starts_with("click ")).count(),
        1,
        "{on_new:?}"
    );
    assert_eq!(
        on_new
            .iter()
            .filter(|e| e.starts_with("pointerdown "))
            .count(),
        1,
        "{on_new:?}"
    );
}

#[test]
fn a_button_gone_for_good_is_refused_as_gone_after_one_look() {
    let dom = confirm_page();
    *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        dom.nodes.borrow_mut()[2].attached = false;
    }));
    let err = fails(
        &dom,
        json!([{"step": "click", "selector": "#confirm"}]),
        5000,
    );
    assert_refused_containing(&err, ErrorCode::NotActionable, "is no longer in the page");
    assert!(
        !dom.events.borrow().iter().any(|e| e.starts_with("click ")),
        "{:?}",
        dom.events.borrow()
    );
}

#[test]
fn a_click_whose_element_is_replaced_during_its_trusted_input_is_not_sent_again() {
    let dom = FakeDom::default();
    dom.add(FakeNode::default());
    dom.add(confirm_button(None));
    *dom.trusted.borrow_mut() = Some(Vec::new());
    // The pointer arriving (the first batch of trusted input) makes the page re-render the
    // button: the press and release that follow are the same click, not a new one.
    *dom.on_trusted.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        dom.nodes.borrow_mut()[1].attached = false;
    }));
    run_adhoc(
        &dom,
        json!([{"step": "click", "selector": "#confirm"}]),
        json!({}),
        5000,
    )
    .expect("the click that began is finished");
    let batches = dom
        .events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("trusted "))
        .count();
    // The hover, then the press and the release of one click: nothing is sent again.
    assert_eq!(batches, 3, "{:?}", dom.events.borrow());
}
