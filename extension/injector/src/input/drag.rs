//! Drag and drop, as a person's mouse does it: press on the source, move in steps to the target
//! with the button held, release there. Where the source is draggable (HTML5 `draggable`, a link,
//! an image) the browser would run HTML5 drag and drop instead of the moves: `dragstart` on the
//! source (its `DataTransfer` shared by every event of the drag), `drag` on it and
//! `dragenter`/`dragover` under the pointer at each step, `drop` where the last `dragover` was
//! cancelled (the page takes the drop), `dragend` on the source. With trusted input the browser's
//! own mouse (the debugger's Input domain) does all of it.

use bridge::trusted_input;

use super::{
    Aim, MouseEvent, MouseKind, Point, Refusal, aim_patiently, move_pointer, perform_trusted,
};
use crate::dom::Dom;

/// Moves between the press and the release (libraries start a drag after a few pixels of
/// movement, and track the pointer through what it passes over).
const DRAG_STEPS: u32 = 6;

/// How often Chromium fires `dragover` during HTML5 drag and drop (also while the mouse rests):
/// pages pace themselves on it (SortableJS takes no `dragover` for 30 ms after it moved an item).
const DRAGOVER_INTERVAL_MS: f64 = 50.0;

/// Lets `ms` pass with the page running (its timers, its renders), as between two of the
/// browser's `dragover`s.
async fn let_pass<D: Dom>(dom: &D, ms: f64) {
    let until = dom.now_ms() + ms;
    loop {
        let left = until - dom.now_ms();
        if left <= 0.0 {
            break;
        }
        dom.settle(left).await;
    }
}

/// The events of HTML5 drag and drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DragKind {
    Start,
    Drag,
    Enter,
    Over,
    Leave,
    Drop,
    End,
}

impl DragKind {
    pub fn name(self) -> &'static str {
        match self {
            DragKind::Start => "dragstart",
            DragKind::Drag => "drag",
            DragKind::Enter => "dragenter",
            DragKind::Over => "dragover",
            DragKind::Leave => "dragleave",
            DragKind::Drop => "drop",
            DragKind::End => "dragend",
        }
    }
}

/// Whether a person's press and move on `node` starts HTML5 drag and drop (`draggable="true"`,
/// or a link or an image, draggable unless `draggable="false"`).
fn draggable<D: Dom>(dom: &D, node: &D::Node) -> bool {
    let mut at = Some(node.clone());
    while let Some(node) = at {
        match dom.attr(&node, "draggable").as_deref() {
            Some("true") => return true,
            Some("false") => return false,
            _ => {}
        }
        let tag = dom.tag_name(&node);
        if tag == "img" || (tag == "a" && dom.attr(&node, "href").is_some()) {
            return true;
        }
        at = dom.parent(&node);
    }
    false
}

fn between(from: Point, to: Point, i: u32) -> Point {
    let t = f64::from(i) / f64::from(DRAG_STEPS);
    Point {
        x: from.x + (to.x - from.x) * t,
        y: from.y + (to.y - from.y) * t,
    }
}

/// What a drop the page took leaves changed, read before and after a drag: where the dragged
/// element is (its parent, its box relative to the page, an SVG element's placement) and the
/// page's text (items in another order, a card under another heading, a drop's message). What a
/// page changes only while a drag is under way (a class or an opacity on the source, a highlight
/// or a hint on a target, put back at `dragleave`/`dragend`) is not in it.
struct Lasting<D: Dom> {
    parent: Option<D::Node>,
    /// The centre of its box relative to the page's root (so that scrolling moves neither).
    at: Option<Point>,
    placement: [Option<String>; 5],
    page_text: String,
}

/// How far (CSS pixels) a box may seem to move without having moved (subpixel layout).
const MOVED_PX: f64 = 1.0;

fn centre<D: Dom>(dom: &D, node: &D::Node) -> Option<Point> {
    match dom.geometry(node) {
        super::Geometry::Box { centre, .. } => Some(centre),
        super::Geometry::NoBox => None,
    }
}

impl<D: Dom> Lasting<D> {
    fn read(dom: &D, node: &D::Node) -> Lasting<D> {
        let root = dom.root();
        let at = match (centre(dom, node), centre(dom, &root)) {
            (Some(at), Some(page)) => Some(Point {
                x: at.x - page.x,
                y: at.y - page.y,
            }),
            _ => None,
        };
        Lasting {
            parent: dom.parent(node),
            at,
            placement: ["transform", "x", "y", "cx", "cy"].map(|name| dom.attr(node, name)),
            page_text: dom.text(&root),
        }
    }

    /// Whether anything in it differs in `after`.
    fn changed(&self, dom: &D, after: &Lasting<D>) -> bool {
        let moved = match (self.at, after.at) {
            (Some(a), Some(b)) => (a.x - b.x).abs() > MOVED_PX || (a.y - b.y).abs() > MOVED_PX,
            (a, b) => a.is_some() != b.is_some(),
        };
        let parent_changed = match (&self.parent, &after.parent) {
            (Some(a), Some(b)) => !dom.same(a, b),
            (a, b) => a.is_some() != b.is_some(),
        };
        moved
            || parent_changed
            || self.placement != after.placement
            || self.page_text != after.page_text
    }
}

/// Drags `from` onto `to` (both checked as a click's element is: attached, not covered, waited
/// for), then checks that the page took it: a drop the page
/// took leaves something changed ([`Lasting`]: the dragged element elsewhere, in another place
/// among its siblings or drawn elsewhere, or the page's text changed). A drag after which all of
/// that is as it was did not happen for the page, whatever it showed during the drag.
pub async fn drag_checked<D: Dom>(
    dom: &D,
    from: &D::Node,
    to: &D::Node,
    patience_ms: f64,
) -> Result<(), Refusal> {
    let (source, target) = aim_both(dom, from, to, patience_ms).await?;
    // Read once both are aimed at: aiming may scroll them, which is no change of the page.
    let was = Lasting::read(dom, from);
    drag_aimed(dom, source, target).await?;
    dom.checkpoint().await;
    if was.changed(dom, &Lasting::read(dom, from)) {
        Ok(())
    } else {
        Err(Refusal::NoEffect(
            "was dragged, and nothing on the page changed (the element is where it was, the \
             page's text is the same): the page did not take the drag"
                .into(),
        ))
    }
}

/// Aims at `from` and at `to` as a drag does: aiming at one may scroll the other, so each is
/// aimed again once both were, and the points are those of the page as it is now (both in view
/// when they fit).
async fn aim_both<D: Dom>(
    dom: &D,
    from: &D::Node,
    to: &D::Node,
    patience_ms: f64,
) -> Result<(Aim<D::Node>, Aim<D::Node>), Refusal> {
    aim_patiently(dom, from, true, patience_ms).await?;
    aim_patiently(dom, to, false, patience_ms).await?;
    let source = aim_patiently(dom, from, true, patience_ms).await?;
    let target = aim_patiently(dom, to, false, patience_ms).await?;
    Ok((source, target))
}

/// The drag itself, from the point aimed at on the source to the one on the target.
async fn drag_aimed<D: Dom>(
    dom: &D,
    source: Aim<D::Node>,
    target: Aim<D::Node>,
) -> Result<(), Refusal> {
    if dom.trusted_input() {
        let a = dom.top_point(&source.target, source.at);
        let b = dom.top_point(&target.target, target.at);
        perform_trusted(dom, trusted_input::drag((a.x, a.y), (b.x, b.y), DRAG_STEPS)).await?;
        dom.set_pointer_at(Some(target.target));
        return Ok(());
    }
    move_pointer(dom, &source.target, source.at);
    let press = |kind| MouseEvent::new(kind, source.at).pressing();
    let compatible = dom.dispatch_mouse(&source.target, &press(MouseKind::PointerDown));
    if compatible {
        dom.dispatch_mouse(&source.target, &press(MouseKind::MouseDown).detail(1));
    }
    dom.microtask().await;
    let html5 = draggable(dom, &source.target)
        && dom.dispatch_drag(&source.target, DragKind::Start, source.at);
    if html5 {
        // The browser's first `dragover` comes tens of milliseconds after `dragstart`, and pages
        // finish starting their drag in a task of their own before it (SortableJS takes no
        // `dragover` until its zero-delay timer after `dragstart` ran).
        let_pass(dom, DRAGOVER_INTERVAL_MS).await;
    }
    let mut under: Option<D::Node> = None;
    let mut dropped = false;
    for i in 1..=DRAG_STEPS {
        let at = between(source.at, target.at, i);
        let here = dom
            .element_at(&target.target, at)
            .unwrap_or_else(|| target.target.clone());
        if html5 {
            dom.dispatch_drag(&source.target, DragKind::Drag, at);
            if under.as_ref().is_none_or(|u| !dom.same(u, &here)) {
                dom.dispatch_drag(&here, DragKind::Enter, at);
                if let Some(left) = &under {
                    dom.dispatch_drag(left, DragKind::Leave, at);
                }
            }
            // A cancelled `dragover` is the page saying it takes a drop there.
            dropped = !dom.dispatch_drag(&here, DragKind::Over, at);
        } else {
            let moving = |kind| MouseEvent::new(kind, at).pressing();
            dom.dispatch_mouse(&here, &moving(MouseKind::PointerMove));
            if compatible {
                dom.dispatch_mouse(&here, &moving(MouseKind::MouseMove));
            }
        }
        under = Some(here);
        // The page follows the pointer between moves (a sortable list moves its items).
        if html5 {
            let_pass(dom, DRAGOVER_INTERVAL_MS).await;
        } else {
            dom.microtask().await;
        }
    }
    let last = under.unwrap_or_else(|| target.target.clone());
    if html5 {
        if dropped {
            dom.dispatch_drag(&last, DragKind::Drop, target.at);
        } else {
            dom.dispatch_drag(&last, DragKind::Leave, target.at);
        }
        dom.dispatch_drag(&source.target, DragKind::End, target.at);
    } else {
        dom.dispatch_mouse(&last, &MouseEvent::new(MouseKind::PointerUp, target.at));
        if compatible {
            let up = MouseEvent::new(MouseKind::MouseUp, target.at).detail(1);
            dom.dispatch_mouse(&last, &up);
        }
    }
    dom.set_pointer_at(Some(last));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_dom::{FakeDom, FakeNode};

    /// The page (0) with two lists (1, 2), and a card (3) in the first.
    fn board() -> FakeDom {
        let dom = FakeDom::default();
        dom.add(FakeNode {
            tag: "body",
            centre: Some((400.0, 300.0)),
            text: "Todo Write docs Doing".into(),
            ..Default::default()
        });
        for _ in 0..2 {
            dom.add(FakeNode {
                parent: Some(0),
                tag: "ul",
                ..Default::default()
            });
        }
        dom.add(FakeNode {
            parent: Some(1),
            tag: "li",
            centre: Some((100.0, 50.0)),
            ..Default::default()
        });
        dom
    }

    fn changed_after(dom: &FakeDom, change: impl FnOnce(&mut Vec<FakeNode>)) -> bool {
        let before = Lasting::read(dom, &3);
        change(&mut dom.nodes.borrow_mut());
        before.changed(dom, &Lasting::read(dom, &3))
    }

    #[test]
    fn what_a_page_shows_only_during_a_drag_is_no_change() {
        // A class and an opacity on the card, a highlight on the list: put back or not, none
        // of them is where the card is or what the page says.
        assert!(!changed_after(&board(), |nodes| {
            nodes[3].classes.push("dragging");
            nodes[3].attrs.push(("style", "opacity: 1"));
            nodes[2].classes.push("over");
        }));
        // Scrolling moves the page and the card alike.
        assert!(!changed_after(&board(), |nodes| {
            nodes[0].centre = Some((400.0, 100.0));
            nodes[3].centre = Some((100.0, -150.0));
        }));
        // Subpixel layout is not a move.
        assert!(!changed_after(&board(), |nodes| {
            nodes[3].centre = Some((100.4, 49.6))
        }));
    }

    #[test]
    fn a_drop_the_page_took_moved_the_element_or_changed_the_text() {
        // Into the other list.
        assert!(changed_after(&board(), |nodes| nodes[3].parent = Some(2)));
        // Elsewhere in its list, or drawn elsewhere (its box, or an SVG element's placement).
        assert!(changed_after(&board(), |nodes| {
            nodes[3].centre = Some((100.0, 90.0))
        }));
        assert!(changed_after(&board(), |nodes| {
            nodes[3].attrs.push(("transform", "translate(280,90)"))
        }));
        // The page says something else (items in another order, a drop's message).
        assert!(changed_after(&board(), |nodes| {
            nodes[0].text = "Todo Doing Write docs".into()
        }));
        // Removed (a framework re-rendered it elsewhere).
        assert!(changed_after(&board(), |nodes| nodes[3].parent = None));
    }
}
