//! One page tool call in the page: finds its element, acts through the step interpreter, and
//! writes the answer (`text` for the model, with the document's `doc`, `url` and `title`, and the
//! `refs` it showed, which the server keeps to route and check later refs).

use std::cell::{Cell, RefCell};

use bridge::locator::Locator;
use bridge::page_ops::{
    Action, FindBy, LineMatch, PageAnswer, PageOp, Ref, Target, WaitFor, ref_name,
};
use bridge::{ErrorCode, WireError};
use serde_json::Value;

use super::frames::{self, FrameDocs};
use super::profile::Phases;
use super::snapshot::{self, Line};
use super::{PageDom, Refs, Shown, aria, diff, locate, read};
use crate::steps::{self, Act};

/// How often a wait looks again when the page does not change.
const WAIT_POLL_MS: f64 = 100.0;
/// Matches `page_find` lists at most.
const MAX_FOUND: usize = 50;

/// Runs `op` in this document. `doc`: the document the call's ref came from, when the server
/// knows it.
pub async fn run<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    op: PageOp,
    doc: Option<&str>,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Value, WireError> {
    if let Some(r) = op.named_ref() {
        check_doc(&refs.borrow(), r, doc)?;
    }
    refs.borrow_mut().prune(dom);
    let mut shown = Vec::new();
    let mut leaving = None;
    let mut frame_docs = FrameDocs::new();
    let mut asks = Vec::new();
    let text = match op {
        PageOp::Snapshot {
            within,
            max_chars,
            cursor,
        } => {
            // Issue 28: a whole page's first snapshot says what it asks a person for.
            if within.is_none() && cursor == 0 {
                asks = super::asks::asked(dom);
            }
            let root = root_of(dom, refs, &within)?;
            let lines = match within {
                Some(_) => snapshot::lines(dom, &root, &mut refs.borrow_mut()),
                None => whole_page(dom, refs),
            };
            let (lines, docs) = frames::splice(dom, lines, timeout_ms).await;
            frame_docs = docs;
            let (text, _) = snapshot::render(&lines, max_chars, cursor);
            shown = refs_in(&text);
            text
        }
        PageOp::Read {
            within,
            format,
            max_chars,
            cursor,
        } => {
            let root = root_of(dom, refs, &within)?;
            read::page(dom, &root, format, max_chars, cursor)
        }
        PageOp::Find { by: FindBy::Ref(n) } => {
            let node = element(dom, &refs.borrow(), &Target::Ref(n))?;
            match locate::best(dom, &node) {
                Some(locator) => format!("{}: {locator}\n", who(dom, &node, &Target::Ref(n))),
                None => format!(
                    "{}: no locator names it alone on this page; scope it with `within`\n",
                    who(dom, &node, &Target::Ref(n))
                ),
            }
        }
        PageOp::Find {
            by: FindBy::Lines(by),
        } => {
            let lines = snapshot::lines(dom, &dom.root(), &mut refs.borrow_mut());
            let (lines, docs) = frames::splice(dom, lines, timeout_ms).await;
            frame_docs = docs;
            let text = find(&lines, &by);
            shown = refs_in(&text);
            text
        }
        PageOp::Wait {
            what,
            gone,
            timeout_ms: wait_ms,
        } => wait(dom, refs, &what, gone, wait_ms.min(timeout_ms), cancelled).await?,
        PageOp::Act {
            target,
            action,
            snapshot: whole,
            dialog: _,
        } => {
            let (text, to) = act(dom, refs, &target, &action, whole, timeout_ms, cancelled).await?;
            shown = refs_in(&text);
            leaving = to;
            text
        }
    };
    let (url, title) = dom.location();
    let (doc, frame) = {
        let refs = refs.borrow();
        (refs.doc.clone(), refs.frame)
    };
    Ok(PageAnswer {
        doc,
        url,
        title,
        text,
        refs: shown.into_iter().map(ref_name).collect(),
        frame,
        frames: frame_docs,
        leaving,
        asks,
    }
    .into_value())
}

/// Refuses ref `r` of document `doc` (when the server knows it) when this runtime shows another.
fn check_doc<N>(refs: &Refs<N>, r: Ref, doc: Option<&str>) -> Result<(), WireError> {
    match doc {
        Some(doc) if doc != refs.doc => Err(stale(
            r,
            match r.frame {
                0 => "came from an earlier page of this tab",
                _ => "came from an earlier page of its frame",
            },
        )),
        _ => Ok(()),
    }
}

/// The element ref `r` of document `doc` names now (a screenshot of it).
pub fn ref_element<D: PageDom>(
    dom: &D,
    refs: &Refs<D::Node>,
    r: Ref,
    doc: Option<&str>,
) -> Result<D::Node, WireError> {
    check_doc(refs, r, doc)?;
    element(dom, refs, &Target::Ref(r))
}

fn stale(r: Ref, why: &str) -> WireError {
    WireError::new(
        ErrorCode::StaleRef,
        format!(
            "{} {why}: take a new snapshot (page_snapshot) and use its refs",
            ref_name(r)
        ),
    )
}

/// The refs a text shows (`e12` after a role; names and texts are quoted, so never read as one).
fn refs_in(text: &str) -> Vec<Ref> {
    let mut refs: Vec<Ref> = text
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            words.find_map(|w| bridge::page_ops::parse_ref(w.trim_end_matches(':')))
        })
        .collect();
    refs.sort_unstable();
    refs.dedup();
    refs
}

/// The element `target` names now.
fn element<D: PageDom>(
    dom: &D,
    refs: &Refs<D::Node>,
    target: &Target,
) -> Result<D::Node, WireError> {
    match target {
        Target::Ref(r) if r.frame != refs.frame => Err(stale(
            *r,
            "is not a ref of this page (it came from another frame)",
        )),
        Target::Ref(r) => match refs.get(r.n) {
            Some(node) if dom.is_connected(node) => Ok(node.clone()),
            Some(_) => Err(stale(
                *r,
                "is no longer in the page (it was removed or re-rendered)",
            )),
            None if refs.was_given(r.n) => Err(stale(
                *r,
                "is no longer in the page (it was removed or re-rendered)",
            )),
            None => Err(stale(
                *r,
                "is not a ref of this page (it came from another page or tab)",
            )),
        },
        Target::Selector(selector) if selector == ":focus" => {
            Ok(dom.active_element().unwrap_or_else(|| dom.root()))
        }
        Target::Selector(selector) => {
            let invalid = |why: String| {
                WireError::new(
                    ErrorCode::InvalidArgs,
                    format!("`{selector}` is not a valid selector: {why}"),
                )
            };
            let locator = Locator::parse(selector).map_err(invalid)?;
            let found = locate::query_all(dom, None, &locator).map_err(invalid)?;
            found.into_iter().next().ok_or_else(|| {
                WireError::new(
                    ErrorCode::ElementNotFound,
                    format!("no element matches `{selector}`"),
                )
            })
        }
    }
}

/// The element a snapshot or read is of: the target's, or the whole document.
fn root_of<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    within: &Option<Target>,
) -> Result<D::Node, WireError> {
    match within {
        Some(target) => element(dom, &refs.borrow(), target),
        None => Ok(dom.root()),
    }
}

/// The element's name in an answer: its ref (or selector) and its snapshot line.
fn who<D: PageDom>(dom: &D, node: &D::Node, target: &Target) -> String {
    let role = aria::role(dom, node);
    let name = aria::name(dom, node, &role);
    let role = if role.is_empty() {
        dom.tag_name(node)
    } else {
        role
    };
    let label = match target {
        Target::Ref(r) => ref_name(*r),
        Target::Selector(s) => format!("`{s}`"),
    };
    if name.is_empty() {
        format!("{label} ({role})")
    } else {
        format!(
            "{label} ({role} {})",
            aria::quote(&aria::truncate(&name, 60))
        )
    }
}

async fn act<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    target: &Target,
    action: &Action,
    whole: bool,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<(String, Option<String>), WireError> {
    let mut phases = Phases::start();
    // The ref's line as the model last saw it: how its element is known again when the page
    // replaced it by an equivalent one (a framework's re-render).
    let was = match target {
        Target::Ref(r) => seen_line(&refs.borrow(), *r),
        Target::Selector(_) => None,
    };
    let again = || match target {
        Target::Ref(r) => was
            .as_deref()
            .and_then(|was| replacement(dom, refs, *r, was)),
        Target::Selector(_) => None,
    };
    let found = element(dom, &refs.borrow(), target);
    let node = match found {
        Err(gone) if gone.code == ErrorCode::StaleRef && replaceable(&refs.borrow(), target) => {
            again().ok_or(gone)?
        }
        found => found?,
    };
    let who = who(dom, &node, target);
    let invalid = |why: &str| {
        Err(WireError::new(
            ErrorCode::InvalidArgs,
            format!("{who} {why}: `{}` does not apply to it", action.name()),
        ))
    };
    // The values the server read, as they are: no template, no variable.
    let chord;
    let act = match action {
        // Whether it leaves the page is seen, not declared: a page tool knows nothing in advance.
        Action::Click => Act::Click(1),
        Action::Dblclick => Act::Click(2),
        Action::Hover => Act::Hover,
        Action::Check | Action::Uncheck if !dom.prop(&node, "checked").is_boolean() => {
            return invalid("is not a checkbox or radio button");
        }
        Action::Check => Act::Check(true),
        Action::Uncheck => Act::Check(false),
        Action::Fill(_)
        | Action::Clear
        | Action::Type { .. }
        | Action::Caret(_)
        | Action::SelectText(_)
            if dom.text_entry(&node).is_none() =>
        {
            return invalid("is neither a text field nor an editor, and holds none");
        }
        Action::Fill(text) => Act::Fill(text),
        Action::Clear => Act::Fill(""),
        Action::Select(wanted) => {
            let Some(options) = dom.options(&node) else {
                return invalid("is not a <select>");
            };
            let by_value = options.iter().any(|(value, _)| value == wanted);
            Act::Select {
                wanted,
                by_text: !by_value,
            }
        }
        Action::Press(key) => {
            chord = bridge::keys::parse_chord(key)
                .map_err(|e| WireError::new(ErrorCode::InvalidArgs, format!("`key`: {e}")))?;
            Act::Press { chord: &chord, key }
        }
        Action::Scroll => Act::Scroll,
        Action::Upload(names) => Act::Upload(names),
        Action::Type { text, at } => Act::Type {
            text,
            at: at.as_ref(),
        },
        Action::Caret(caret) => Act::Caret(caret),
        Action::SelectText(which) => Act::SelectText(which.as_ref()),
        Action::Drag(to) => Act::Drag(element(dom, &refs.borrow(), to)?),
    };
    let root = dom.root();
    phases.mark("lookup");
    // The diff is against what the model last saw of this page (its last snapshot or act answer),
    // so what the page changed by itself since shows up too.
    let last = refs.borrow_mut().last.take();
    let (before, changed_by_itself) = match last {
        Some((at, lines)) => (lines, at != dom.changes()),
        None => (snapshot::lines(dom, &root, &mut refs.borrow_mut()), false),
    };
    phases.mark("before");
    let (url_before, _) = dom.location();
    let busy_before = busy(dom);
    let mut leaving = None;
    if matches!(action, Action::Scroll) && dom.same(&node, &root) {
        dom.scroll_page();
    } else {
        let edited = commit_elsewhere(dom, refs, &node);
        let edits = matches!(
            action,
            Action::Fill(_) | Action::Clear | Action::Type { .. }
        );
        if edits && edited.is_none() {
            refs.borrow_mut().edited = dom.value(&node).map(|before| (node.clone(), before));
        }
        leaving = steps::act_on(
            dom, &node, &who, &act, edited, &again, timeout_ms, cancelled,
        )
        .await
        .map_err(|e| WireError::new(e.code, act_error(&e.message)))?;
        if matches!(action, Action::Press(key) if key == "Enter") {
            refs.borrow_mut().edited = None;
        }
    }
    phases.mark("act");
    if leaving.is_none() {
        wait_for_late_changes(dom, busy_before).await;
    }
    phases.mark("late");
    let mut out = format!("{} {who}\n", past(action));
    // The answer waits for the new page to commit (the worker holds it), so it is true when it
    // arrives; the server says where the page landed.
    if let Some(to) = leaving {
        return Ok((out, Some(to)));
    }
    let (url_after, _) = dom.location();
    if url_after != url_before {
        out.push_str(&format!("navigated (in the page) to {url_after}\n"));
    }
    let after = whole_page(dom, refs);
    phases.mark("after");
    if whole {
        out.push_str(&snapshot::render(&after, usize::MAX, 0).0);
        return Ok((out, None));
    }
    let changes = diff::diff(&before, &after);
    if changes.is_empty() {
        out.push_str("no visible change\n");
    } else {
        if changed_by_itself {
            out.push_str("(since you last saw it the page also changed by itself: in this diff)\n");
        }
        out.push_str(&changes);
    }
    phases.mark("diff");
    phases.write(&mut out);
    Ok((out, None))
}

/// A page still changing once the act's handlers ran (its own timers, a re-render in steps) is
/// given until it was quiet for this long...
const QUIET_MS: f64 = 100.0;
/// ... but no longer than this after the act.
const MAX_LATE_MS: f64 = 1_000.0;
/// What a page shows while it works (a request, a running cell): one more of these after an act
/// than before it means the act's effect is still coming.
const BUSY: &str = "[aria-busy=true], [role=progressbar], progress";

/// How many busy indicators ([`BUSY`]) the page shows.
fn busy<D: PageDom>(dom: &D) -> usize {
    dom.query_all(None, BUSY).map_or(0, |found| found.len())
}

/// Waits, bounded by [`MAX_LATE_MS`], for the changes a page makes shortly after an act, so the
/// answer shows them. A quiet page pays one zero-delay timer and a query: it is taken as done
/// when it made no change in the turn after the act's own and shows no more busy indicators
/// than before the act. Else it is followed until it was quiet for [`QUIET_MS`] with no new
/// busy indicator left.
async fn wait_for_late_changes<D: PageDom>(dom: &D, busy_before: usize) {
    let after_act = dom.changes();
    dom.checkpoint().await;
    if dom.changes() == after_act && busy(dom) <= busy_before {
        return;
    }
    let deadline = dom.now_ms() + MAX_LATE_MS;
    loop {
        let seen = dom.changes();
        let left = deadline - dom.now_ms();
        if left <= 0.0 {
            return;
        }
        dom.settle(QUIET_MS.min(left)).await;
        if dom.changes() == seen && busy(dom) <= busy_before {
            return;
        }
    }
}

/// The snapshot lines of the whole page, kept as the next act's "before".
fn whole_page<D: PageDom>(dom: &D, refs: &RefCell<Refs<D::Node>>) -> Vec<Line> {
    let at = dom.changes();
    let lines = snapshot::lines(dom, &dom.root(), &mut refs.borrow_mut());
    refs.borrow_mut().last = Some((at, lines.clone()));
    lines
}

/// The field an earlier act filled, when this act is on it too; when it is on another element,
/// the field is committed first (`change`, as when a person's focus leaves a field they typed in).
fn commit_elsewhere<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    node: &D::Node,
) -> Option<(D::Node, String)> {
    let (field, before) = refs.borrow().edited.clone()?;
    if dom.same(&field, node) {
        return Some((field, before));
    }
    refs.borrow_mut().edited = None;
    if dom.is_connected(&field) && dom.value(&field).is_some_and(|now| now != before) {
        dom.dispatch_change(&field);
    }
    None
}

/// The interpreter's error without its step's label: "act: e4 (button "Save") is covered by …"
/// becomes "e4 (button "Save") is covered by …".
fn act_error(message: &str) -> String {
    message.strip_prefix("act: ").unwrap_or(message).to_owned()
}

fn past(action: &Action) -> &'static str {
    match action {
        Action::Click => "clicked",
        Action::Dblclick => "double-clicked",
        Action::Hover => "hovered",
        Action::Fill(_) => "filled",
        Action::Clear => "cleared",
        Action::Select(_) => "selected in",
        Action::Check => "checked",
        Action::Uncheck => "unchecked",
        Action::Press(_) => "pressed on",
        Action::Scroll => "scrolled to",
        Action::Upload(_) => "put the files on",
        Action::Type { .. } => "typed into",
        Action::Caret(_) => "placed the caret in",
        Action::SelectText(_) => "selected text in",
        Action::Drag(_) => "dragged",
    }
}

/// Whether `target` is a ref of this document that named an element since gone from the page.
fn replaceable<N: Clone>(refs: &Refs<N>, target: &Target) -> bool {
    matches!(target, Target::Ref(r) if r.frame == refs.frame && refs.was_given(r.n))
}

/// The line of ref `r` in the whole-page snapshot the model last saw, without the ref.
fn seen_line<N>(refs: &Refs<N>, r: Ref) -> Option<String> {
    let (_, lines) = refs.last.as_ref()?;
    // Every act with a ref looks: only the line with the ref is taken apart.
    let wanted = ref_name(r);
    let line = lines
        .iter()
        .find(|line| !line.is_text && line.text.split(' ').nth(1) == Some(wanted.as_str()))?;
    without_ref(&line.text).map(|(_, rest)| rest)
}

/// A snapshot line's ref and the line without it (`button e4 "Save"` → `e4`, `button "Save"`).
fn without_ref(line: &str) -> Option<(Ref, String)> {
    let mut words = line.split(' ');
    let role = words.next()?;
    let r = bridge::page_ops::parse_ref(words.next()?)?;
    let rest: Vec<&str> = std::iter::once(role).chain(words).collect();
    Some((r, rest.join(" ")))
}

/// The element that took ref `r`'s place since the model saw it (a framework re-rendered it):
/// the one element new since then whose snapshot line is `was`, the gone element's line, to the
/// letter (role, name, states, value). Ref `r` names it from now on. `None` when no new element,
/// or more than one, shows that line: then the ref is stale, as it was.
fn replacement<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    r: Ref,
    was: &str,
) -> Option<D::Node> {
    let given_before = refs.borrow().given();
    let lines = snapshot::lines(dom, &dom.root(), &mut refs.borrow_mut());
    let mut same = lines
        .iter()
        .filter(|line| !line.is_text)
        .filter_map(|line| without_ref(&line.text))
        .filter(|(new, rest)| new.n > given_before && rest == was);
    let (new, _) = same.next()?;
    if same.next().is_some() {
        return None;
    }
    let node = refs.borrow().get(new.n)?.clone();
    refs.borrow_mut().stand_in(r.n, node.clone());
    Some(node)
}

/// The snapshot lines that match, each under the line of its nearest enclosing element.
fn find(lines: &[Line], by: &LineMatch) -> String {
    let matches = |line: &Line| -> bool {
        let text = line.text.to_lowercase();
        match by {
            LineMatch::Text(wanted) => text.contains(&wanted.to_lowercase()),
            LineMatch::Role { role, name } => {
                let first = text.split_whitespace().next().unwrap_or("");
                let role_fits = first == role
                    || (role == "heading" && first.len() == 2 && first.starts_with('h'));
                role_fits
                    && name
                        .as_ref()
                        .is_none_or(|n| text.contains(&n.to_lowercase()))
            }
        }
    };
    let mut out = String::new();
    let mut found = 0;
    for (i, line) in lines.iter().enumerate() {
        if !matches(line) {
            continue;
        }
        found += 1;
        if found > MAX_FOUND {
            continue;
        }
        // Text has no ref: the element it is in does.
        if line.is_text
            && let Some(parent) = lines[..i].iter().rev().find(|l| l.depth < line.depth)
        {
            out.push_str(&parent.text);
            out.push_str("\n ");
        }
        out.push_str(&line.text);
        out.push('\n');
    }
    match found {
        0 => "nothing found\n".to_owned(),
        n if n > MAX_FOUND => format!("{out}… {} more\n", n - MAX_FOUND),
        _ => out,
    }
}

async fn wait<D: PageDom>(
    dom: &D,
    refs: &RefCell<Refs<D::Node>>,
    what: &WaitFor,
    gone: bool,
    wait_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<String, WireError> {
    let start = dom.now_ms();
    let deadline = start + wait_ms as f64;
    let present = || -> Result<bool, WireError> {
        Ok(match what {
            WaitFor::Text(text) => {
                aria::squash(&aria::text_of(dom, &dom.root())).contains(&aria::squash(text))
            }
            WaitFor::Element(target) => match element(dom, &refs.borrow(), target) {
                Ok(node) => dom.shown(&node) != Shown::No,
                Err(e) if e.code == ErrorCode::ElementNotFound => false,
                Err(e) if e.code == ErrorCode::StaleRef && gone => false,
                Err(e) => return Err(e),
            },
        })
    };
    let described = match what {
        WaitFor::Text(text) => aria::quote(text),
        WaitFor::Element(Target::Ref(r)) => ref_name(*r),
        WaitFor::Element(Target::Selector(s)) => format!("`{s}`"),
    };
    loop {
        if present()? != gone {
            let ms = (dom.now_ms() - start).round();
            return Ok(format!(
                "{described} {} after {ms} ms\n",
                if gone { "is gone" } else { "is there" }
            ));
        }
        if cancelled.get() {
            return Err(WireError::new(
                ErrorCode::Cancelled,
                "the wait was cancelled",
            ));
        }
        let now = dom.now_ms();
        if now >= deadline {
            return Err(WireError::new(
                ErrorCode::Timeout,
                format!(
                    "{described} was still {} after {wait_ms} ms",
                    if gone { "there" } else { "not there" }
                ),
            ));
        }
        dom.settle((deadline - now).min(WAIT_POLL_MS)).await;
    }
}
