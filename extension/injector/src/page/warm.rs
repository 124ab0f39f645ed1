//! The snapshot path made ready before the first call (issue 32). V8 compiles a wasm function the
//! first time it runs (lazy compilation), so the first `page_snapshot` in a fresh tab paid for
//! compiling the call's code: about 20 ms more than the next one, even with the runtime long
//! loaded (BENCHMARKS.md). Once the page has loaded and is idle, the runtime runs one
//! `page_snapshot` for nobody, through the very code a call runs: its refs are the document's own
//! (a later snapshot shows the same refs for the same elements), and it is the "before" of a first
//! act when the page did not change since. No frame is asked (that would start runtimes in them).

use std::cell::{Cell, RefCell};

use bridge::WireError;
use bridge::page_ops::{self, PageOp};
use serde_json::Value;

use super::{PageDom, Refs, run};

/// Documents with more elements than this are not warmed: the walk would cost more idle time
/// than the compile it saves, and the page's first call pays for both anyway.
pub const MAX_WARM_ELEMENTS: u32 = 3_000;

/// The warm-up's deadline: under [`super::frames`]'s least wait, so no frame is ever asked.
const NO_FRAMES_MS: u64 = 1;

/// Whether a document of `elements` elements is warmed, and not already snapshotted by a call.
pub fn worth_warming<N>(elements: u32, refs: &Refs<N>) -> bool {
    elements <= MAX_WARM_ELEMENTS && refs.last.is_none()
}

/// Runs a whole-page `page_snapshot` as a call would; the glue drops its answer.
pub async fn warm_up<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
) -> Result<Value, WireError> {
    let op = PageOp::Snapshot {
        within: None,
        max_chars: page_ops::DEFAULT_MAX_CHARS,
        cursor: 0,
    };
    run(dom, refs, op, None, NO_FRAMES_MS, &Cell::new(false)).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fake_dom::{FakeDom, block_on};
    use crate::page::ChildFrame;
    use crate::page::tests::el as node;

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
        let warmed = block_on(warm_up(&dom, &refs)).expect("the warm-up works");
        assert_eq!(warmed["text"], cold["text"]);
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
    fn no_frame_is_asked() {
        let (dom, _) = page();
        let iframe = node(&dom, Some(1), "iframe");
        dom.nodes.borrow_mut()[iframe].child_frame = Some(ChildFrame {
            src: "http://127.0.0.1:9000/pay".into(),
            index: 0,
        });
        let refs = RefCell::new(Refs::new("d"));
        block_on(warm_up(&dom, &refs)).expect("the warm-up works");
        assert!(dom.frames_asked.borrow().is_empty());
        // A call asks it (the warm-up's deadline is what keeps it from asking).
        call(
            &dom,
            &RefCell::new(Refs::new("e")),
            "page_snapshot",
            json!({}),
        );
        assert!(!dom.frames_asked.borrow().is_empty());
    }

    #[test]
    fn big_documents_are_not_warmed() {
        let refs = Refs::<usize>::new("d");
        assert!(worth_warming(MAX_WARM_ELEMENTS, &refs));
        assert!(!worth_warming(MAX_WARM_ELEMENTS + 1, &refs));
    }
}
