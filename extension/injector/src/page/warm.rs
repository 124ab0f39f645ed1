//! The call path made ready before the first call (issue 32). V8 compiles a wasm function the
//! first time it runs (lazy compilation), so the first `page_snapshot` in a fresh tab paid for
//! compiling the call's code: about 20 ms more than the next one, even with the runtime long
//! loaded (BENCHMARKS.md). Once the page has loaded and is idle, the runtime runs a
//! `page_snapshot` for nobody ([`WARM_RUNS`] times, so a new process's code is also optimized),
//! through the very code a call runs: its refs are the document's own
//! (a later snapshot shows the same refs for the same elements), and it is the "before" of a first
//! act when the page did not change since. No frame is asked (that would start runtimes in them).
//! It travels as a call does: the worker's message text ([`message`]), decoded and run by the
//! runtime's own handler and answered to nobody, since a trace of a warmed tab's first call still
//! showed ~74 functions compiled on its way in and out (the message's decoding, the call's
//! bookkeeping, the answer's encoding: ~3 ms; scripts/trace_first_call.py, BENCHMARKS.md).
//! A call asked at once after `browser_open` came before the idle moment, so the worker's
//! `open_tab` asks for the warm-up as soon as the page has loaded and answers once it is over
//! ([`Warmth`]: it runs once per document, whoever asks first).

use bridge::page_ops::{self, FrameId, WireOp};
use serde_json::json;

use super::Refs;

/// Documents with more elements than this are not warmed: the walk would cost more idle time
/// than the compile it saves, and the page's first call pays for both anyway.
pub const MAX_WARM_ELEMENTS: u32 = 3_000;

/// The warm-up's deadline: under [`super::frames`]'s least wait, so no frame is ever asked.
const NO_FRAMES_MS: u64 = 1;

/// The id the warm-up's call runs under (the worker's ids are UUIDs: no call of its shares it).
pub const WARM_UP_ID: &str = "warm-up";

/// How many times the warm-up runs the call's path. In a new renderer process V8 runs the wasm
/// on its baseline tier until a function has run often enough to be optimized in the background:
/// a new tab's second to fifth snapshots measured about twice the same tab's (BENCHMARKS.md).
pub const WARM_RUNS: u32 = 3;

/// Whether a document of `elements` elements is warmed, and not already snapshotted by a call.
pub fn worth_warming<N>(elements: u32, refs: &Refs<N>) -> bool {
    elements <= MAX_WARM_ELEMENTS && refs.last.is_none()
}

/// The warm-up's call as the worker's message for it would read: a whole-page `page_snapshot` of
/// the frame the runtime's refs already name (unchanged by it), gated on the page's own `origin`
/// as the server gates a call, answered to nobody.
pub fn message(frame: FrameId, origin: Option<&str>) -> String {
    let mut message = json!({
        "type": "page_op",
        "id": WARM_UP_ID,
        "tab": 0,
        "op": WireOp::whole_snapshot(page_ops::DEFAULT_MAX_CHARS),
        "timeout_ms": NO_FRAMES_MS,
    });
    if frame != 0 {
        message["frame"] = frame.into();
    }
    if let Some(origin) = origin {
        message["origin"] = origin.into();
    }
    message.to_string()
}

/// Where a document's warm-up is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Not started: waiting for an idle moment after load, or for someone to ask.
    Cold,
    Running,
    /// Run through a call's whole path.
    Ran,
    /// Not run, and never will be: nothing worth warming, or a call got there first (and so
    /// compiled the path itself).
    Skipped,
}

impl Stage {
    /// What the content scripts' world shows of it (`__tabwireWarm`, read by the tests).
    pub fn label(self) -> &'static str {
        match self {
            Stage::Cold => "cold",
            Stage::Running => "running",
            Stage::Ran => "ran",
            Stage::Skipped => "skipped",
        }
    }
}

/// A document's warm-up and whoever waits for it to be over (the worker's `open_tab`, `W` the
/// promise's resolver in the page): it starts once, at the first idle moment after load or when
/// first asked, whichever comes first.
#[derive(Debug)]
pub struct Warmth<W> {
    stage: Stage,
    waiting: Vec<W>,
    /// The runs over so far.
    runs: u32,
}

impl<W> Default for Warmth<W> {
    fn default() -> Self {
        Warmth {
            stage: Stage::Cold,
            waiting: Vec::new(),
            runs: 0,
        }
    }
}

impl<W> Warmth<W> {
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Whether the warm-up starts now: only once per document.
    pub fn start(&mut self) -> bool {
        let starts = self.stage == Stage::Cold;
        if starts {
            self.stage = Stage::Running;
        }
        starts
    }

    /// One run is over: whether another is due ([`WARM_RUNS`]; `call_running`: a call came, which
    /// the warm-up never runs beside).
    pub fn ran_once(&mut self, call_running: bool) -> bool {
        self.runs += 1;
        self.runs < WARM_RUNS && !call_running
    }

    /// The warm-up is over (`Ran` or `Skipped`); gives back everyone who waited, to be told.
    pub fn over(&mut self, how: Stage) -> Vec<W> {
        debug_assert!(matches!(how, Stage::Ran | Stage::Skipped));
        self.stage = how;
        std::mem::take(&mut self.waiting)
    }

    /// `waiter` waits for the warm-up to be over; given back at once when it already is.
    pub fn wait(&mut self, waiter: W) -> Option<W> {
        match self.stage {
            Stage::Ran | Stage::Skipped => Some(waiter),
            Stage::Cold | Stage::Running => {
                self.waiting.push(waiter);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};

    use bridge::page::{PageCall, ToPage};
    use bridge::page_ops::PageOp;
    use serde_json::Value;

    use super::*;
    use crate::fake_dom::{FakeDom, block_on};
    use crate::page::ChildFrame;
    use crate::page::run;
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

    /// The warm-up as the runtime's handler runs it: its message decoded as the worker's are,
    /// its call run as a call's is.
    fn warm_up(dom: &FakeDom, refs: &RefCell<Refs<usize>>) -> Result<Value, bridge::WireError> {
        let ToPage::PageOp { call, .. } = serde_json::from_str(&message(0, None)).unwrap() else {
            panic!("the warm-up's message is a page op")
        };
        let op = call.op.decode().expect("the warm-up's operation decodes");
        block_on(run(
            dom,
            refs,
            op,
            call.doc.as_deref(),
            call.timeout_ms,
            &Cell::new(false),
        ))
    }

    /// The warm-up's message is what the worker sends for a whole-page snapshot of the frame
    /// named, gated on the origin given (a change of the wire's page op breaks this, not the
    /// warm-up in silence).
    #[test]
    fn the_warm_up_travels_as_a_page_snapshot_call() {
        let decoded: ToPage =
            serde_json::from_str(&message(7, Some("http://127.0.0.1:8000"))).expect("decodes");
        let call = PageCall {
            op: WireOp::whole_snapshot(page_ops::DEFAULT_MAX_CHARS),
            frame: 7,
            doc: None,
            origin: Some("http://127.0.0.1:8000".into()),
            timeout_ms: NO_FRAMES_MS,
            trusted_input: false,
            files: Vec::new(),
        };
        let expected = ToPage::PageOp {
            id: WARM_UP_ID.into(),
            tab: 0,
            call: call.clone(),
        };
        assert_eq!(decoded, expected);
        let top: ToPage = serde_json::from_str(&message(0, None)).expect("decodes");
        let expected = ToPage::PageOp {
            id: WARM_UP_ID.into(),
            tab: 0,
            call: PageCall {
                frame: 0,
                origin: None,
                ..call
            },
        };
        assert_eq!(top, expected);
    }

    #[test]
    fn the_warm_up_runs_its_path_again_until_its_runs_are_done_or_a_call_comes() {
        let mut warmth = Warmth::<()>::default();
        assert!(warmth.start());
        let again: Vec<bool> = (0..WARM_RUNS).map(|_| warmth.ran_once(false)).collect();
        let mut expected = vec![true; WARM_RUNS as usize - 1];
        expected.push(false);
        assert_eq!(again, expected);
        let mut interrupted = Warmth::<()>::default();
        assert!(interrupted.start());
        assert!(!interrupted.ran_once(true), "a call came: no run beside it");
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
        let warmed = warm_up(&dom, &refs).expect("the warm-up works");
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
        warm_up(&dom, &refs).expect("the warm-up works");
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
    fn the_warm_up_starts_once_and_everyone_who_waited_hears_its_end() {
        let mut warmth = Warmth::default();
        assert_eq!(warmth.stage(), Stage::Cold);
        assert_eq!(warmth.wait("open_tab"), None, "asked before it ran: waits");
        assert!(warmth.start(), "the first to start it (asked, or idle)");
        assert!(!warmth.start(), "never twice");
        assert_eq!(warmth.wait("another open_tab"), None, "running: waits");
        assert_eq!(warmth.stage().label(), "running");
        assert_eq!(warmth.over(Stage::Ran), ["open_tab", "another open_tab"]);
        assert_eq!(warmth.wait("late"), Some("late"), "over: answered at once");
        assert!(!warmth.start(), "a document is warmed once");
        assert!(warmth.over(Stage::Ran).is_empty());

        let mut skipped = Warmth::default();
        assert!(skipped.start());
        assert!(skipped.over(Stage::Skipped).is_empty());
        assert_eq!(skipped.wait(1), Some(1), "skipped is over too");
        assert_eq!(skipped.stage().label(), "skipped");
    }

    #[test]
    fn big_documents_are_not_warmed() {
        let refs = Refs::<usize>::new("d");
        assert!(worth_warming(MAX_WARM_ELEMENTS, &refs));
        assert!(!worth_warming(MAX_WARM_ELEMENTS + 1, &refs));
    }
}
