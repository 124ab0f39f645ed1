//! The one input module: every action on the page (click, double click, hover, fill, clear, check,
//! press) goes through here, and here it is decided what a person's input looks like to the page's
//! scripts — which events, in which order, with which fields, on which element — and whether the
//! element could take it at all. A backend performs the decided events: [`Dom`]'s synthetic
//! events, or, where the user turned trusted input on for the origin ([`Dom::trusted_input`]),
//! Chrome's debugger (the DevTools `Input` domain, `bridge::trusted_input`): the checks (attached,
//! enabled, not covered, the aim point) and the effect checks stay the same; the browser then
//! dispatches the events itself.
//!
//! The sequences are Chromium's, measured with real (CDP) input in Chromium 156:
//! - pointer onto an element: `pointerout`/`pointerleave` (where it was), `pointerover`,
//!   `pointerenter` (each entered ancestor, outermost first), then the same `mouse*` events, then
//!   `pointermove`, `mousemove`;
//! - a press: `pointerdown` (`buttons` 1), `mousedown` (`detail` = click count), the focus moving to
//!   the nearest focusable element (or away), `pointerup`, `mouseup`, `click` (a PointerEvent whose
//!   `isPrimary` is false, as Chromium sends it); a cancelled `pointerdown` suppresses `mousedown`
//!   and `mouseup`, a cancelled `mousedown` suppresses the focus;
//! - a double click: two presses (`detail` 1 and 2) and `dblclick` (`detail` 2).

use bridge::WireError;
use bridge::keys::{Chord, ChordModifier, Key, Modifier, Platform, parse_key};
use bridge::trusted_input::{self, Command};

use crate::dom::Dom;

/// A point in a document's viewport (CSS pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// Where the pointer can hit an element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Geometry {
    /// No layout box (`display: none`, or shown only on `:hover`, which synthetic events cannot
    /// apply), or one of no area.
    NoBox,
    /// The centre of the part of its first box inside the viewport (`in_view`), or of its box.
    Box { centre: Point, in_view: bool },
}

/// The modifier keys held (`shiftKey`, `ctrlKey`, `altKey`, `metaKey` of every event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    pub shift: bool,
    pub control: bool,
    pub alt: bool,
    pub meta: bool,
}

impl Modifiers {
    /// The modifiers held, by their key names, in the order a chord spells them
    /// (`Control+Alt+Meta+Shift+k`).
    pub fn held(self) -> impl Iterator<Item = &'static str> {
        [
            (self.control, "Control"),
            (self.alt, "Alt"),
            (self.meta, "Meta"),
            (self.shift, "Shift"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
    }

    fn set(mut self, modifier: Modifier, held: bool) -> Modifiers {
        match modifier {
            Modifier::Shift => self.shift = held,
            Modifier::Control => self.control = held,
            Modifier::Alt => self.alt = held,
            Modifier::Meta => self.meta = held,
        }
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseKind {
    PointerOver,
    PointerEnter,
    PointerOut,
    PointerLeave,
    PointerMove,
    PointerDown,
    PointerUp,
    MouseOver,
    MouseEnter,
    MouseOut,
    MouseLeave,
    MouseMove,
    MouseDown,
    MouseUp,
    Click,
    Dblclick,
}

impl MouseKind {
    pub fn name(self) -> &'static str {
        match self {
            MouseKind::PointerOver => "pointerover",
            MouseKind::PointerEnter => "pointerenter",
            MouseKind::PointerOut => "pointerout",
            MouseKind::PointerLeave => "pointerleave",
            MouseKind::PointerMove => "pointermove",
            MouseKind::PointerDown => "pointerdown",
            MouseKind::PointerUp => "pointerup",
            MouseKind::MouseOver => "mouseover",
            MouseKind::MouseEnter => "mouseenter",
            MouseKind::MouseOut => "mouseout",
            MouseKind::MouseLeave => "mouseleave",
            MouseKind::MouseMove => "mousemove",
            MouseKind::MouseDown => "mousedown",
            MouseKind::MouseUp => "mouseup",
            MouseKind::Click => "click",
            MouseKind::Dblclick => "dblclick",
        }
    }

    /// A `PointerEvent` (Chromium's `click` is one), else a `MouseEvent`.
    pub fn is_pointer_event(self) -> bool {
        matches!(
            self,
            MouseKind::PointerOver
                | MouseKind::PointerEnter
                | MouseKind::PointerOut
                | MouseKind::PointerLeave
                | MouseKind::PointerMove
                | MouseKind::PointerDown
                | MouseKind::PointerUp
                | MouseKind::Click
        )
    }

    /// Enter and leave events neither bubble nor can be cancelled nor are composed; all others
    /// are all three.
    pub fn bubbles(self) -> bool {
        !matches!(
            self,
            MouseKind::PointerEnter
                | MouseKind::PointerLeave
                | MouseKind::MouseEnter
                | MouseKind::MouseLeave
        )
    }

    /// `isPrimary`: true for the mouse's pointer events, false for `click` (as Chromium sends it).
    pub fn is_primary(self) -> bool {
        self.is_pointer_event() && self != MouseKind::Click
    }
}

/// The mouse's `pointerId` in Chromium.
pub const MOUSE_POINTER_ID: i32 = 1;

/// One pointer or mouse event, with every field a page may read (`pointerType` is `mouse`, `width`
/// and `height` 1, `view` the element's window).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MouseEvent {
    pub kind: MouseKind,
    pub at: Point,
    /// -1 for pointer events without a button change, else 0 (the main button).
    pub button: i16,
    pub buttons: u16,
    pub detail: i32,
}

impl MouseEvent {
    fn new(kind: MouseKind, at: Point) -> MouseEvent {
        let moving = matches!(
            kind,
            MouseKind::PointerOver
                | MouseKind::PointerEnter
                | MouseKind::PointerOut
                | MouseKind::PointerLeave
                | MouseKind::PointerMove
        );
        MouseEvent {
            kind,
            at,
            button: if moving { -1 } else { 0 },
            buttons: 0,
            detail: 0,
        }
    }

    fn pressing(mut self) -> MouseEvent {
        self.buttons = 1;
        self
    }

    fn detail(mut self, detail: i32) -> MouseEvent {
        self.detail = detail;
        self
    }

    /// 0.5 while a button is down (a mouse has no pressure sensor), else 0.
    pub fn pressure(&self) -> f32 {
        if self.buttons == 0 { 0.0 } else { 0.5 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Down,
    Press,
    Up,
}

impl KeyKind {
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Down => "keydown",
            KeyKind::Press => "keypress",
            KeyKind::Up => "keyup",
        }
    }
}

/// One keyboard event with every field a page may read (bubbling, cancelable, composed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEvent {
    pub kind: KeyKind,
    pub key: String,
    pub code: String,
    /// `keyCode` and `which` (for `keypress`: the character's code, as in Chromium).
    pub key_code: u32,
    pub char_code: u32,
    /// 1 (left) for modifier keys, else 0.
    pub location: u32,
    pub modifiers: Modifiers,
}

impl KeyEvent {
    fn new(kind: KeyKind, key: &Key, modifiers: Modifiers, location: u32) -> KeyEvent {
        let char_code = key.char_code(modifiers.shift);
        let (key_code, char_code) = match kind {
            KeyKind::Press => (char_code, char_code),
            KeyKind::Down | KeyKind::Up => (key.key_code, 0),
        };
        KeyEvent {
            kind,
            key: key.key_with(modifiers.shift).to_owned(),
            code: key.code.clone(),
            key_code,
            char_code,
            location,
            modifiers,
        }
    }
}

/// How an element takes text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEntry {
    /// `<input>` or `<textarea>`: its value, through the browser's own setter.
    Control,
    /// A contenteditable editing host (CodeMirror, ProseMirror, Lexical, Quill, ...): the
    /// browser's editing commands, each after a `beforeinput` the editor may take over.
    ContentEditable,
    /// An element with an `EditContext` (Monaco in Chromium): the app edits its own model from
    /// events; text arrives as a paste, which such editors insert as it is; clearing is
    /// `Backspace`, which they handle on `keydown`.
    EditContext,
}

/// One edit, as `beforeinput`/`input` describe it and `execCommand` performs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    InsertText(String),
    /// A line break in a contenteditable (what Enter types there).
    InsertParagraph,
    /// Delete the selection.
    Delete,
}

impl Edit {
    pub fn input_type(&self) -> &'static str {
        match self {
            Edit::InsertText(_) => "insertText",
            Edit::InsertParagraph => "insertParagraph",
            Edit::Delete => "deleteContentBackward",
        }
    }

    pub fn data(&self) -> Option<&str> {
        match self {
            Edit::InsertText(text) => Some(text),
            Edit::InsertParagraph | Edit::Delete => None,
        }
    }

    /// The `execCommand` name and value performing it.
    pub fn command(&self) -> (&'static str, &str) {
        match self {
            Edit::InsertText(text) => ("insertText", text),
            Edit::InsertParagraph => ("insertParagraph", ""),
            Edit::Delete => ("delete", ""),
        }
    }
}

/// Why an action was not performed, or did not take. Displayed after the element's name:
/// "`button.save` is disabled".
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The element is no longer in the page. Decided only before any input was dispatched to it
    /// (the checks before an action), never after a partial dispatch: a step that finds its
    /// element again after this refusal acts once, not twice.
    Detached,
    Disabled,
    ReadOnly,
    /// Another element is at the element's centre: the description of what is there.
    Covered {
        by: String,
        at: Point,
    },
    /// Nothing of the page is at the element's centre, even after scrolling it into view.
    OutOfView {
        at: Point,
    },
    /// Neither a text field nor an editor, nor one inside it.
    NotEditable,
    /// The action was performed; the page did not take it.
    NoEffect(String),
    /// Trusted input could not be performed (the worker's typed error: the debugger, the tab).
    Trusted(WireError),
    /// The field holds no such text (to place the caret after or to select): what it holds.
    NoSuchText(String),
    /// The element cannot take this kind of input (why, and what it can take instead).
    Unsupported(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Detached => f.write_str(
                "is no longer in the page (it was removed or re-rendered after it was found)",
            ),
            Refusal::Disabled => f.write_str("is disabled"),
            Refusal::ReadOnly => f.write_str("is read-only"),
            Refusal::Covered { by, at } => write!(
                f,
                "is covered by {by}, which is at its centre ({}, {}): a person's click would land there",
                at.x.round(),
                at.y.round()
            ),
            Refusal::OutOfView { at } => write!(
                f,
                "is outside the visible page at its centre ({}, {}), even after scrolling it into view",
                at.x.round(),
                at.y.round()
            ),
            Refusal::NotEditable => f.write_str(
                "is not an input, textarea or contenteditable element and has none inside",
            ),
            Refusal::NoEffect(why) | Refusal::NoSuchText(why) | Refusal::Unsupported(why) => {
                f.write_str(why)
            }
            Refusal::Trusted(error) => {
                write!(f, "could not be given trusted input: {}", error.message)
            }
        }
    }
}

/// A short description of an element for messages: `<div id="x" class="a b"> "its text…"`.
pub fn describe<D: Dom>(dom: &D, node: &D::Node) -> String {
    let mut out = format!("<{}", dom.tag_name(node));
    if let Some(id) = dom.attr(node, "id").filter(|id| !id.is_empty()) {
        out.push_str(&format!(" id=\"{id}\""));
    }
    if let Some(class) = dom.attr(node, "class") {
        let classes: Vec<&str> = class.split_whitespace().take(3).collect();
        if !classes.is_empty() {
            out.push_str(&format!(" class=\"{}\"", classes.join(" ")));
        }
    }
    out.push('>');
    let text = dom.text(node);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !text.is_empty() {
        let short: String = text.chars().take(40).collect();
        let more = if short.len() < text.len() { "…" } else { "" };
        out.push_str(&format!(" \"{short}{more}\""));
    }
    out
}

/// The element and its ancestors, innermost first.
fn lineage<D: Dom>(dom: &D, node: &D::Node) -> Vec<D::Node> {
    let mut chain = vec![node.clone()];
    while let Some(parent) = dom.parent(chain.last().expect("never empty")) {
        chain.push(parent);
    }
    chain
}

/// Where a press lands: the element events go to (the one at the point, inside the target, or the
/// target itself when it has no box) and the point.
struct Aim<N> {
    target: N,
    at: Point,
    /// Whether `at` was hit-tested (the element has a box): the release is aimed there again.
    hit_tested: bool,
}

/// Checks that a person could point at `node` now (attached, enabled if `needs_enabled`, not
/// covered), scrolling it into view first if needed.
fn aim<D: Dom>(dom: &D, node: &D::Node, needs_enabled: bool) -> Result<Aim<D::Node>, Refusal> {
    if !dom.is_connected(node) {
        return Err(Refusal::Detached);
    }
    if needs_enabled && dom.is_disabled(node) {
        return Err(Refusal::Disabled);
    }
    let centre = match dom.geometry(node) {
        Geometry::Box { in_view: false, .. } => {
            dom.scroll_into_view(node);
            dom.geometry(node)
        }
        other => other,
    };
    let at = match centre {
        Geometry::Box { centre, .. } => centre,
        // Hidden until hovered: the events go to the element itself, at the centre of the closest
        // ancestor a person's pointer would be over to reveal it.
        Geometry::NoBox => {
            let at = lineage(dom, node)
                .iter()
                .skip(1)
                .find_map(|a| match dom.geometry(a) {
                    Geometry::Box { centre, .. } => Some(centre),
                    Geometry::NoBox => None,
                })
                .unwrap_or(Point { x: 0.0, y: 0.0 });
            return Ok(Aim {
                target: node.clone(),
                at,
                hit_tested: false,
            });
        }
    };
    let Some(hit) = dom.element_at(node, at) else {
        return Err(Refusal::OutOfView { at });
    };
    // The element itself, something inside it, or its label: where a person's click at that
    // point goes too. Anything else, its own containers included (a clipped or `pointer-events:
    // none` element lets the click through to them), would take the click instead.
    if !reaches(dom, node, &hit) {
        return Err(Refusal::Covered {
            by: describe(dom, &hit),
            at,
        });
    }
    Ok(Aim {
        target: hit,
        at,
        hit_tested: true,
    })
}

/// Moves the pointer onto `target`: the boundary events from where it was, then a move.
fn move_pointer<D: Dom>(dom: &D, target: &D::Node, at: Point) {
    let previous = dom.pointer_at().filter(|p| dom.is_connected(p));
    if previous.as_ref().is_none_or(|p| !dom.same(p, target)) {
        let entered = lineage(dom, target);
        let left = previous
            .as_ref()
            .map(|p| lineage(dom, p))
            .unwrap_or_default();
        let only_in = |chain: &[D::Node], other: &[D::Node]| -> Vec<D::Node> {
            chain
                .iter()
                .filter(|n| !other.iter().any(|o| dom.same(n, o)))
                .cloned()
                .collect()
        };
        let leaving = only_in(&left, &entered);
        let entering = only_in(&entered, &left);
        for (out, leave, over, enter) in [
            (
                MouseKind::PointerOut,
                MouseKind::PointerLeave,
                MouseKind::PointerOver,
                MouseKind::PointerEnter,
            ),
            (
                MouseKind::MouseOut,
                MouseKind::MouseLeave,
                MouseKind::MouseOver,
                MouseKind::MouseEnter,
            ),
        ] {
            if let Some(previous) = &previous {
                dom.dispatch_mouse(previous, &MouseEvent::new(out, at));
                for node in &leaving {
                    dom.dispatch_mouse(node, &MouseEvent::new(leave, at));
                }
            }
            dom.dispatch_mouse(target, &MouseEvent::new(over, at));
            for node in entering.iter().rev() {
                dom.dispatch_mouse(node, &MouseEvent::new(enter, at));
            }
        }
        dom.set_pointer_at(Some(target.clone()));
    }
    dom.dispatch_mouse(target, &MouseEvent::new(MouseKind::PointerMove, at));
    dom.dispatch_mouse(target, &MouseEvent::new(MouseKind::MouseMove, at));
}

/// Moves the focus as a press on `target` does: to the nearest element that takes focus (the
/// target or an ancestor); pressing where nothing takes it takes the focus away.
fn focus_from<D: Dom>(dom: &D, target: &D::Node) {
    for node in lineage(dom, target) {
        if dom.has_focus(&node) {
            return;
        }
        dom.focus(&node);
        if dom.has_focus(&node) {
            return;
        }
    }
    if let Some(active) = dom.active_element()
        && dom.tag_name(&active) != "body"
    {
        dom.blur(&active);
    }
}

/// The innermost element containing both.
fn common_ancestor<D: Dom>(dom: &D, a: &D::Node, b: &D::Node) -> D::Node {
    lineage(dom, a)
        .into_iter()
        .find(|n| dom.contains(n, b))
        .unwrap_or_else(|| a.clone())
}

/// [`aim`], waiting up to `patience_ms` while the element is covered or out of view: an overlay
/// fading out or a panel sliding in (TiddlyWiki animates a new tiddler into place) is over soon,
/// and a person would wait for it too. A covered element is first scrolled to the middle of the
/// view, once, as a person scrolls a button out from under a fixed header or toolbar.
async fn aim_patiently<D: Dom>(
    dom: &D,
    node: &D::Node,
    needs_enabled: bool,
    patience_ms: f64,
) -> Result<Aim<D::Node>, Refusal> {
    let deadline = dom.now_ms() + patience_ms;
    let mut scrolled = false;
    loop {
        match aim(dom, node, needs_enabled) {
            Err(Refusal::Covered { .. }) if !scrolled => {
                dom.scroll_into_view(node);
                scrolled = true;
            }
            Err(Refusal::Covered { .. } | Refusal::OutOfView { .. }) if dom.now_ms() < deadline => {
                dom.settle((deadline - dom.now_ms()).min(POLL_MS)).await;
            }
            done => return done,
        }
    }
}

/// How often a wait for a covered element to come free looks again when the DOM does not change
/// (an animation moves it through CSS alone).
const POLL_MS: f64 = 50.0;

/// A person's click (`clicks` 1) or double click (2) on `node`: the pointer moves onto it, then
/// each press and release (see the module's doc), then `dblclick` after the second. A covered
/// element is waited for up to `patience_ms`.
pub async fn click<D: Dom>(
    dom: &D,
    node: &D::Node,
    clicks: i32,
    patience_ms: f64,
) -> Result<(), Refusal> {
    let aim = aim_patiently(dom, node, true, patience_ms).await?;
    if dom.trusted_input() {
        let at = dom.top_point(&aim.target, aim.at);
        perform_trusted(dom, trusted_input::hover(at.x, at.y)).await?;
        for count in 1..=clicks as u32 {
            // The page may have moved something else (another origin's frame) under the pointer
            // as it arrived: the browser's press would go there. A hit test right before the
            // press and before the release keeps it on the element, or nothing is pressed.
            still_aimed(dom, node, &aim)?;
            perform_trusted(dom, vec![trusted_input::press(at.x, at.y, count)]).await?;
            let before_release = still_aimed(dom, node, &aim);
            // Released wherever it is, so no button stays held; a release on another document
            // than the press's makes no click.
            perform_trusted(dom, vec![trusted_input::release(at.x, at.y, count)]).await?;
            before_release?;
        }
        dom.set_pointer_at(Some(aim.target));
        return Ok(());
    }
    move_pointer(dom, &aim.target, aim.at);
    let mut clicked = aim.target.clone();
    for detail in 1..=clicks {
        let down = MouseEvent::new(MouseKind::PointerDown, aim.at).pressing();
        let compatible = dom.dispatch_mouse(&aim.target, &down);
        let mouse_down = MouseEvent::new(MouseKind::MouseDown, aim.at)
            .pressing()
            .detail(detail);
        if compatible && dom.dispatch_mouse(&aim.target, &mouse_down) {
            focus_from(dom, &aim.target);
        }
        // The page runs what its handlers queued before the release (a framework's re-render),
        // as between a person's press and release.
        dom.microtask().await;
        let released = match aim.hit_tested {
            true => dom
                .element_at(&aim.target, aim.at)
                .unwrap_or_else(|| aim.target.clone()),
            false => aim.target.clone(),
        };
        dom.dispatch_mouse(&released, &MouseEvent::new(MouseKind::PointerUp, aim.at));
        if compatible {
            let up = MouseEvent::new(MouseKind::MouseUp, aim.at).detail(detail);
            dom.dispatch_mouse(&released, &up);
        }
        // The click goes to where press and release have in common (`click` after a press on one
        // element and a release on another goes to their common ancestor).
        clicked = common_ancestor(dom, &aim.target, &released);
        let click = MouseEvent::new(MouseKind::Click, aim.at).detail(detail);
        dom.dispatch_mouse(&clicked, &click);
    }
    if clicks == 2 {
        let dblclick = MouseEvent::new(MouseKind::Dblclick, aim.at).detail(2);
        dom.dispatch_mouse(&clicked, &dblclick);
    }
    Ok(())
}

/// Whether `hit`, what a hit test found, is where a person's click on `node` goes: the element
/// itself, something inside it, or its label. Anything else, its own containers included (a
/// clipped or `pointer-events: none` element lets the click through to them), takes the click.
fn reaches<D: Dom>(dom: &D, node: &D::Node, hit: &D::Node) -> bool {
    dom.contains(node, hit)
        || dom
            .label_control(hit)
            .is_some_and(|control| dom.same(&control, node))
}

/// A hit test at `aim`'s point, now: `Ok` when it still gives `node` (see [`reaches`]) in this
/// document, else the refusal naming what is there (another origin's frame is its `<iframe>`).
/// An element that is shown only on hover was aimed at without a hit test, and has none here.
fn still_aimed<D: Dom>(dom: &D, node: &D::Node, aim: &Aim<D::Node>) -> Result<(), Refusal> {
    if !aim.hit_tested {
        return Ok(());
    }
    match dom.element_at(node, aim.at) {
        None => Err(Refusal::OutOfView { at: aim.at }),
        Some(hit) if reaches(dom, node, &hit) => Ok(()),
        Some(hit) => Err(Refusal::Covered {
            by: describe(dom, &hit),
            at: aim.at,
        }),
    }
}

/// Moves the pointer onto `node` (attached, not covered, waited for as by [`click`]; a disabled
/// element can be hovered).
pub async fn hover<D: Dom>(dom: &D, node: &D::Node, patience_ms: f64) -> Result<(), Refusal> {
    let aim = aim_patiently(dom, node, false, patience_ms).await?;
    if dom.trusted_input() {
        let at = dom.top_point(&aim.target, aim.at);
        perform_trusted(dom, trusted_input::hover(at.x, at.y)).await?;
        dom.set_pointer_at(Some(aim.target));
        return Ok(());
    }
    move_pointer(dom, &aim.target, aim.at);
    Ok(())
}

async fn perform_trusted<D: Dom>(dom: &D, commands: Vec<Command>) -> Result<(), Refusal> {
    dom.perform_trusted(commands)
        .await
        .map_err(Refusal::Trusted)
}

/// A chord through Chrome's debugger (trusted input), to the focused element: the browser runs
/// its default action itself (Enter's implicit submission, Tab's focus move).
pub async fn press_trusted<D: Dom>(dom: &D, chord: &Chord) -> Result<(), Refusal> {
    perform_trusted(dom, trusted_input::chord(chord, dom.platform())).await
}

fn chord_of(modifiers: Vec<ChordModifier>, key: &str) -> Chord {
    Chord {
        modifiers,
        key: parse_key(key).expect("a key of the table"),
    }
}

/// What a trusted fill types: select all (`Mod+a`), then the text (`insertText`, as an input
/// method commits it), or Backspace to clear. A contenteditable editor gets each line break as
/// an Enter key (its own paragraph); a text control or an EditContext editor takes `\n` as text.
pub fn trusted_fill(entry: TextEntry, text: &str, platform: Platform) -> Vec<Command> {
    let mut commands = trusted_input::chord(&chord_of(vec![ChordModifier::Mod], "a"), platform);
    if text.is_empty() {
        commands.extend(trusted_input::chord(
            &chord_of(Vec::new(), "Backspace"),
            platform,
        ));
        return commands;
    }
    match entry {
        TextEntry::Control | TextEntry::EditContext => {
            commands.push(trusted_input::insert_text(text));
        }
        TextEntry::ContentEditable => {
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    let enter = chord_of(Vec::new(), "Enter");
                    commands.extend(trusted_input::chord(&enter, platform));
                }
                if !line.is_empty() {
                    commands.push(trusted_input::insert_text(line));
                }
            }
        }
    }
    commands
}

/// Presses a chord on `node`: each modifier's keydown (in the order written), the key's keydown,
/// its keypress (only for a key that types, with neither Control, Alt nor Meta held), the
/// `default_action` (when neither was cancelled), the key's keyup, and the modifiers' keyups in
/// reverse order; every event carries the modifiers held at that moment.
pub fn press<D: Dom>(dom: &D, node: &D::Node, chord: &Chord, default_action: impl FnOnce()) {
    let modifiers = chord.resolved_modifiers(dom.platform());
    let mut held = Modifiers::default();
    for modifier in &modifiers {
        held = held.set(*modifier, true);
        dom.dispatch_key(
            node,
            &KeyEvent::new(KeyKind::Down, &modifier.key(), held, 1),
        );
    }
    let key = &chord.key;
    // A modifier pressed as the key (`Shift` alone) is held during its own keydown.
    let own = [
        Modifier::Shift,
        Modifier::Control,
        Modifier::Alt,
        Modifier::Meta,
    ]
    .into_iter()
    .find(|m| m.key() == *key);
    let (location, while_down) = match own {
        Some(modifier) => (1, held.set(modifier, true)),
        None => (0, held),
    };
    let down = dom.dispatch_key(
        node,
        &KeyEvent::new(KeyKind::Down, key, while_down, location),
    );
    let types = key.types && !held.control && !held.alt && !held.meta;
    if down && types && dom.dispatch_key(node, &KeyEvent::new(KeyKind::Press, key, held, location))
    {
        default_action();
    }
    dom.dispatch_key(node, &KeyEvent::new(KeyKind::Up, key, held, location));
    for modifier in modifiers.iter().rev() {
        held = held.set(*modifier, false);
        dom.dispatch_key(node, &KeyEvent::new(KeyKind::Up, &modifier.key(), held, 1));
    }
}

/// The field or editor `node` names, ready to take input (attached, enabled, writable, focused).
fn editable<D: Dom>(dom: &D, node: &D::Node) -> Result<(TextEntry, D::Node), Refusal> {
    if !dom.is_connected(node) {
        return Err(Refusal::Detached);
    }
    let (entry, field) = dom.text_entry(node).ok_or(Refusal::NotEditable)?;
    if dom.is_disabled(&field) {
        return Err(Refusal::Disabled);
    }
    if dom.is_read_only(&field) {
        return Err(Refusal::ReadOnly);
    }
    if !dom.has_focus(&field) {
        dom.focus(&field);
    }
    Ok((entry, field))
}

/// Types `text` into `node` (or the text entry inside it), replacing what it holds, as a person
/// who selects all and types (see [`TextEntry`]); `""` clears it. Multi-line text (`\r\n` or `\n`)
/// goes into editors line by line, each line break as the editor's own (`insertParagraph`).
pub async fn fill<D: Dom>(dom: &D, node: &D::Node, text: &str) -> Result<FillCheck<D>, Refusal> {
    let (entry, field) = editable(dom, node)?;
    let text = text.replace("\r\n", "\n");
    if dom.trusted_input() {
        let check = FillCheck::new(field.clone(), text.clone(), entry, dom);
        perform_trusted(dom, trusted_fill(entry, &text, dom.platform())).await?;
        return Ok(check);
    }
    let check = FillCheck::new(field.clone(), text.clone(), entry, dom);
    match entry {
        TextEntry::Control => {
            let edit = if text.is_empty() {
                Edit::Delete
            } else {
                Edit::InsertText(text.clone())
            };
            if dom.before_input(&field, &edit) {
                dom.set_value(&field, &text);
                dom.input_event(&field, &edit);
            }
        }
        TextEntry::ContentEditable => {
            dom.select_all_contents(&field);
            // The editor learns of the selection from `selectionchange`, a task of its own, as it
            // would between a person's selecting and typing (CodeMirror deletes nothing before).
            dom.checkpoint().await;
            if text.is_empty() {
                edit_editor(dom, &field, &[Edit::Delete]).await;
            }
            edit_editor(dom, &field, &line_edits(&text)).await;
        }
        TextEntry::EditContext => {
            // Such editors keep their selection in their own model: select all as a person does.
            press(dom, &field, &chord_of(vec![ChordModifier::Mod], "a"), || {});
            // The editor updates its selection after the keys (a person's next key is a task of
            // its own).
            dom.checkpoint().await;
            if text.is_empty() {
                press(dom, &field, &chord_of(Vec::new(), "Backspace"), || {});
            } else {
                dom.paste(&field, &text);
            }
        }
    }
    Ok(check)
}

/// The edits that type `text` into a contenteditable editor: its lines, each line break as the
/// editor's own (`insertParagraph`).
fn line_edits(text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            edits.push(Edit::InsertParagraph);
        }
        if !line.is_empty() {
            edits.push(Edit::InsertText(line.to_owned()));
        }
    }
    edits
}

/// Performs `edits` in a contenteditable editor as a person's typing does, each in a task of its
/// own (the editor reads what the last one did to its DOM before the next comes): text as
/// Chromium inserts it (`beforeinput`, `textInput`, then the editing command), a line break and a
/// deletion as the keys that make them (Enter, Backspace), whose default action is the same
/// sequence. An editor may take each over at any event by cancelling it: Draft.js keeps its
/// model in React and takes typing only from `textInput` and Enter and Backspace only from their
/// `keydown` (the editing commands alone changed its DOM behind React's back: the page showed
/// the text while its model held another).
async fn edit_editor<D: Dom>(dom: &D, field: &D::Node, edits: &[Edit]) {
    for (i, edit) in edits.iter().enumerate() {
        if i > 0 {
            dom.checkpoint().await;
        }
        match edit {
            Edit::InsertText(text) => {
                insert_typed(dom, field, edit, text);
            }
            Edit::InsertParagraph => {
                press(dom, field, &chord_of(Vec::new(), "Enter"), || {
                    insert_typed(dom, field, edit, "\n");
                });
            }
            Edit::Delete => {
                // Backspace types nothing (it has no `keypress`): the deletion is its
                // `keydown`'s default action.
                let backspace = parse_key("Backspace").expect("a key of the table");
                let key = |kind| KeyEvent::new(kind, &backspace, Modifiers::default(), 0);
                if dom.dispatch_key(field, &key(KeyKind::Down)) && dom.before_input(field, edit) {
                    dom.exec_edit(field, edit);
                }
                dom.dispatch_key(field, &key(KeyKind::Up));
            }
        }
    }
}

/// Typed text's events and insertion, as Chromium orders them: `beforeinput`, `textInput` (with
/// `typed`, `"\n"` for a line break), then the edit, each only if the one before was not
/// cancelled. `true` when the browser performed the edit.
fn insert_typed<D: Dom>(dom: &D, field: &D::Node, edit: &Edit, typed: &str) -> bool {
    dom.before_input(field, edit) && dom.text_input(field, typed) && dom.exec_edit(field, edit)
}

mod caret;
mod drag;
mod drawn_lines;
mod readback;
pub use caret::{key_types, place_caret, select_text, type_text, typed_by};
pub use drag::{DragKind, drag_checked};
pub use readback::FillCheck;
use readback::shown;

#[cfg(test)]
mod tests;
