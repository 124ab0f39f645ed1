//! Drag and drop, as a person's mouse does it: press on the source, move in steps to the target
//! with the button held, release there. Where the source is draggable (HTML5 `draggable`, a link,
//! an image) the browser would run HTML5 drag and drop instead of the moves: `dragstart` on the
//! source (its `DataTransfer` shared by every event of the drag), `drag` on it and
//! `dragenter`/`dragover` under the pointer at each step, `drop` where the last `dragover` was
//! cancelled (the page takes the drop), `dragend` on the source. With trusted input the browser's
//! own mouse (the debugger's Input domain) does all of it.

use bridge::trusted_input;

use super::{MouseEvent, MouseKind, Point, Refusal, aim_patiently, move_pointer, perform_trusted};
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

/// Drags `from` onto `to` as [`drag`] does, then checks that the page took it: a drop the page
/// took changes it (its nodes or text, or where the dragged element is drawn: an SVG node's
/// transform, a card's style); one that changed nothing did not happen for it. Scrolling, which
/// aiming may do, is no change of the page.
pub async fn drag_checked<D: Dom>(
    dom: &D,
    from: &D::Node,
    to: &D::Node,
    patience_ms: f64,
) -> Result<(), Refusal> {
    let placed = |n: &D::Node| {
        [
            "transform",
            "style",
            "class",
            "x",
            "y",
            "cx",
            "cy",
            "aria-grabbed",
        ]
        .map(|name| dom.attr(n, name))
    };
    let was = placed(from);
    let watch = dom.watch(from);
    drag(dom, from, to, patience_ms).await?;
    dom.checkpoint().await;
    if dom.saw_change(&watch) || placed(from) != was {
        Ok(())
    } else {
        Err(Refusal::NoEffect(
            "was dragged, and nothing on the page changed: the page did not take the drag".into(),
        ))
    }
}

/// Drags `from` onto `to` (both checked as a click's element is: attached, not covered, waited
/// for). What the drag did is for the caller to see in the page.
pub async fn drag<D: Dom>(
    dom: &D,
    from: &D::Node,
    to: &D::Node,
    patience_ms: f64,
) -> Result<(), Refusal> {
    // Aiming at one may scroll the other: each is aimed again once both were, so the points are
    // those of the page as it is now (both in view when they fit).
    aim_patiently(dom, from, true, patience_ms).await?;
    aim_patiently(dom, to, false, patience_ms).await?;
    let source = aim_patiently(dom, from, true, patience_ms).await?;
    let target = aim_patiently(dom, to, false, patience_ms).await?;
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
            .element_at(to, at)
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
