//! The page tools' runtime ([`bridge::page_ops`]): snapshot, act, read, find and wait on any page,
//! with no adapter. Host-testable: everything runs over [`PageDom`] (the step interpreter's
//! [`Dom`] and the few things a snapshot needs more), the real page in `web/page.rs`, a fake
//! in tests.
//! Acting goes through the step interpreter and so through [`crate::input`], like every step.

pub mod aria;
pub mod asks;
pub mod diff;
pub mod frames;
pub mod locate;
mod ops;
pub mod profile;
pub mod read;
pub mod snapshot;
#[cfg(test)]
mod tests;
pub mod warm;

use std::collections::HashMap;

use bridge::page_ops::Ref;

use crate::dom::Dom;

pub use ops::{ref_element, run};

/// A child in the tree a person sees (the flat tree: an open shadow root's content instead of
/// the host's light children, a slot's assigned nodes, a same-origin frame's document).
#[derive(Debug, Clone, PartialEq)]
pub enum Kid<N> {
    Element(N),
    Text(String),
}

/// Whether an element shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Yes,
    /// Laid out but not painted (`visibility: hidden`): its own text is not seen, though
    /// descendants that set `visibility: visible` are.
    Invisible,
    /// Not rendered (`display: none`, `hidden`, `content-visibility: hidden`, no box).
    No,
}

pub trait PageDom: Dom {
    fn kids(&self, node: &Self::Node) -> Vec<Kid<Self::Node>>;
    fn shown(&self, node: &Self::Node) -> Shown;
    /// The element with `id` in `node`'s tree (its document or shadow root).
    fn by_id(&self, node: &Self::Node, id: &str) -> Option<Self::Node>;
    /// The `<label>`s of a form control.
    fn labels(&self, node: &Self::Node) -> Vec<Self::Node>;
    /// The ref given to the element earlier (kept on the element, so it lives as long as it does).
    fn mark(&self, node: &Self::Node) -> Option<u32>;
    fn set_mark(&self, node: &Self::Node, n: u32);
    /// The document's URL and title.
    fn location(&self) -> (String, String);
    /// An `<iframe>` whose document this runtime cannot reach (another origin's): that frame's
    /// runtime is asked for its part of a snapshot. `None` for any other element.
    fn child_frame(&self, node: &Self::Node) -> Option<ChildFrame>;
    /// The answer to snapshot `op` of the runtime of `frame`, the `nth` child
    /// frame showing its `src`, or `None` when it gave none within `timeout_ms` (the worker
    /// bounds it). The question leaves when this is called, not when the future is awaited:
    /// frames asked one after the other answer at the same time.
    fn frame_snapshot(
        &self,
        frame: ChildFrame,
        nth: u32,
        op: bridge::page_ops::WireOp,
        timeout_ms: u64,
    ) -> impl Future<Output = Option<serde_json::Value>>;
    /// Scrolls the page down by one screen.
    fn scroll_page(&self);
    /// Whether the element's text is drawn masked, as discs or squares
    /// (`-webkit-text-security` other than `none`), as a password field's is.
    fn masked(&self, node: &Self::Node) -> bool;
    /// A count that moves whenever the document may have changed in a way a snapshot shows: a
    /// mutation, or a person's input (`input`, `change`: a value or a checkbox, which mutate
    /// nothing). Equal counts: a snapshot taken in between is still what the page shows.
    fn changes(&self) -> u64;
}

/// A cross-origin child frame as this runtime can name it to the worker (which knows Chrome's
/// frame ids; a content script cannot learn one for an element).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildFrame {
    /// The URL its `<iframe>` sent it to.
    pub src: String,
    /// Its place among this document's child frames (`window.frames`), which holds when the
    /// frame went to another page by itself since.
    pub index: u32,
}

/// The refs of one document: each element a person acts on gets the next number the first time a
/// snapshot shows it, and keeps it while it is in the page.
pub struct Refs<N> {
    /// This document's id: a ref of another document (an older page of the tab) is refused.
    pub doc: String,
    /// The browser's frame id of the frame this document is in (0: the tab's top document), which
    /// its refs carry (`f3e12`).
    pub frame: bridge::page_ops::FrameId,
    next: u32,
    nodes: HashMap<u32, N>,
    /// The last snapshot of the whole page and the change count it was taken at: an act's
    /// "before" when nothing changed since (one walk of the page fewer per act).
    pub last: Option<(u64, Vec<snapshot::Line>)>,
    /// The text field an act filled, with its value before: Enter there, or acting elsewhere,
    /// commits it with `change`, as Chrome does for a person's typing.
    pub edited: Option<(N, String)>,
}

impl<N: Clone> Refs<N> {
    pub fn new(doc: impl Into<String>) -> Self {
        Refs {
            doc: doc.into(),
            frame: 0,
            next: 0,
            nodes: HashMap::new(),
            edited: None,
            last: None,
        }
    }

    /// The element's ref, given now if it has none.
    pub fn ref_for<D: PageDom<Node = N>>(&mut self, dom: &D, node: &N) -> Ref {
        if let Some(n) = dom.mark(node)
            && self.nodes.contains_key(&n)
        {
            return self.named(n);
        }
        self.next += 1;
        dom.set_mark(node, self.next);
        self.nodes.insert(self.next, node.clone());
        self.named(self.next)
    }

    /// Element `n` of this document as a ref.
    pub fn named(&self, n: u32) -> Ref {
        Ref {
            frame: self.frame,
            n,
        }
    }

    pub fn get(&self, n: u32) -> Option<&N> {
        self.nodes.get(&n)
    }

    /// Whether `n` was ever given in this document.
    pub fn was_given(&self, n: u32) -> bool {
        n >= 1 && n <= self.next
    }

    /// How many refs this document gave: a ref above it is of an element found later.
    pub fn given(&self) -> u32 {
        self.next
    }

    /// Ref `n` names `node` from now on: the element that took the place of the one it named
    /// (see `ops::replacement`).
    pub fn stand_in(&mut self, n: u32, node: N) {
        self.nodes.insert(n, node);
    }

    /// Forgets the elements no longer in the page (their refs are never given again).
    pub fn prune<D: PageDom<Node = N>>(&mut self, dom: &D) {
        self.nodes.retain(|_, node| dom.is_connected(node));
    }
}
