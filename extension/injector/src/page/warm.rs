//! The snapshot path made ready before the first call (issue 32). V8 compiles a wasm function the
//! first time it runs (lazy compilation), so the first `page_snapshot` in a fresh tab paid for
//! compiling the snapshot's code: about 20 ms more than the next one, even with the runtime long
//! loaded (BENCHMARKS.md). Once the page has loaded and is idle, the runtime takes one snapshot of
//! its document for nobody, as a call would: its refs are the document's own (a later snapshot
//! shows the same refs for the same elements), and it is the "before" of a first act when the
//! page did not change since. No frames are asked (that would start runtimes in them).

use std::cell::RefCell;

use bridge::page_ops::DEFAULT_MAX_CHARS;

use super::snapshot;
use super::{PageDom, Refs};

/// Documents with more elements than this are not warmed: the walk would cost more idle time
/// than the compile it saves, and the page's first call pays for both anyway.
pub const MAX_WARM_ELEMENTS: u32 = 3_000;

/// Whether a document of `elements` elements is warmed, and not already snapshotted by a call.
pub fn worth_warming<N>(elements: u32, refs: &Refs<N>) -> bool {
    elements <= MAX_WARM_ELEMENTS && refs.last.is_none()
}

/// Takes the whole document's snapshot as a call would, and drops the text. Returns its length.
pub fn warm_up<D: PageDom>(dom: &D, refs: &RefCell<Refs<D::Node>>) -> usize {
    let at = dom.changes();
    let lines = snapshot::lines(dom, &dom.root(), &mut refs.borrow_mut());
    let (text, _) = snapshot::render(&lines, DEFAULT_MAX_CHARS, 0);
    refs.borrow_mut().last = Some((at, lines));
    text.len()
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use bridge::page_ops::{self, PageOp};
    use serde_json::{Value, json};

    use super::*;
    use crate::fake_dom::{FakeDom, FakeNode, block_on};
    use crate::page::run;

    fn node(dom: &FakeDom, parent: Option<usize>, tag: &'static str) -> usize {
        dom.add(FakeNode {
            parent,
            tag,
            visible: true,
            centre: Some((10.0, 10.0)),
            ..FakeNode::default()
        })
    }

    fn page() -> (FakeDom, usize) {
        let dom = FakeDom::default();
        let html = node(&dom, None, "html");
        let body = node(&dom, Some(html), "body");
        let nav = node(&dom, Some(body), "nav");
        for label in ["Home", "Docs"] {
            let a = node(&dom, Some(nav), "a");
            dom.nodes.borrow_mut()[a].attrs = vec![("href", "/x")];
            let t = node(&dom, Some(a), "#text");
            dom.nodes.borrow_mut()[t].text = label.into();
        }
        let box_ = node(&dom, Some(body), "input");
        dom.nodes.borrow_mut()[box_].attrs = vec![("type", "checkbox")];
        dom.nodes.borrow_mut()[box_].checked = Some(false);
        *dom.url.borrow_mut() = "http://127.0.0.1/page".into();
        (dom, box_)
    }

    fn call(dom: &FakeDom, refs: &RefCell<Refs<usize>>, tool: &str, args: Value) -> Value {
        let op: PageOp = page_ops::parse(tool, args).expect("valid arguments");
        block_on(run(dom, refs, op, None, 5000, &Cell::new(false))).expect("the call works")
    }

    #[test]
    fn a_warmed_page_answers_its_first_snapshot_as_a_cold_one_and_acts_on_its_refs() {
        let (cold_dom, _) = page();
        let cold = call(
            &cold_dom,
            &RefCell::new(Refs::new("d")),
            "page_snapshot",
            json!({}),
        );

        let (dom, checkbox) = page();
        let refs = RefCell::new(Refs::new("d"));
        assert!(worth_warming(5, &refs.borrow()));
        assert!(warm_up(&dom, &refs) > 0);
        assert!(!worth_warming(5, &refs.borrow()), "warmed once: not again");
        let first = call(&dom, &refs, "page_snapshot", json!({}));
        assert_eq!(first["text"], cold["text"], "the same refs, the same text");
        assert_eq!(first["refs"], cold["refs"]);
        let checkbox_ref = first["text"]
            .as_str()
            .unwrap()
            .lines()
            .find(|l| l.contains("checkbox"))
            .and_then(|l| l.split_whitespace().nth(1))
            .expect("the checkbox has a ref")
            .to_owned();
        call(
            &dom,
            &refs,
            "page_act",
            json!({"ref": checkbox_ref, "action": "check"}),
        );
        assert_eq!(dom.nodes.borrow()[checkbox].checked, Some(true));
    }

    #[test]
    fn big_documents_are_not_warmed() {
        let refs = Refs::<usize>::new("d");
        assert!(worth_warming(MAX_WARM_ELEMENTS, &refs));
        assert!(!worth_warming(MAX_WARM_ELEMENTS + 1, &refs));
    }
}
