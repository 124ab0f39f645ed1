//! Editors that draw their own lines (Monaco): the text lives in the editor's model, and what the
//! document shows of it is the lines the editor renders (`.view-lines > .view-line`, one element a
//! line, spaces as no-break spaces, a tab as spaces up to its tab stop; only the lines in view when
//! the text is long). An edit is read back from those lines exactly: every line when all of the
//! text is drawn, else the drawn lines must be consecutive lines of the text. The caret and the
//! selection are the model's too, so they are placed with the editor's own keys, as a person who
//! cannot click would place them: to the start of the text, down to the line, right to the column,
//! and with Shift held over the selected text.

use bridge::keys::{ChordModifier, Modifier};
use bridge::page_ops::TextAt;

use super::{Refusal, chord_of, press, shown};
use crate::dom::Dom;

/// The class of the element that holds such an editor (Monaco's root).
const EDITOR_ROOT_CLASS: &str = "monaco-editor";
/// The lines it draws, one element a line.
const DRAWN_LINES: &str = ".view-lines > .view-line";
/// What it draws over selected text.
const SELECTION: &str = ".selected-text";
/// Tab widths a drawn tab may have been expanded with (Monaco's `tabSize`: 4 unless set).
const TAB_WIDTHS: [usize; 3] = [4, 2, 8];

/// The text the editor around `field` draws, its lines in order, or `None` when `field` is not in
/// such an editor.
pub(super) fn drawn_text<D: Dom>(dom: &D, field: &D::Node) -> Option<String> {
    let root = editor_root(dom, field)?;
    let lines = dom.query_all(Some(&root), DRAWN_LINES).ok()?;
    if lines.is_empty() {
        return None;
    }
    // The editor reuses line elements as it scrolls: their order is that of their `top`.
    let mut lines: Vec<(f64, String)> = lines
        .iter()
        .map(|line| {
            let top = dom
                .attr(line, "style")
                .and_then(|s| top_of(&s))
                .unwrap_or(0.0);
            (top, dom.text(line).replace('\u{a0}', " "))
        })
        .collect();
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(
        lines
            .into_iter()
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The `top` of an inline style (`top:19px;height:19px;`), in pixels.
fn top_of(style: &str) -> Option<f64> {
    let rest = style
        .split(';')
        .find_map(|d| d.trim().strip_prefix("top:"))?;
    rest.trim().trim_end_matches("px").parse().ok()
}

/// `line` as the editor draws it with tab stops every `width` columns.
fn expand_tabs(line: &str, width: usize) -> String {
    let mut out = String::with_capacity(line.len());
    let mut column = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = width - column % width;
            out.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            out.push(c);
            column += 1;
        }
    }
    out
}

/// Whether the drawn text is the text `wanted` draws as: the same lines, when all are drawn, or
/// consecutive lines of it, when the editor draws only those in view.
pub(super) fn shows(wanted: &str, drawn: &str) -> bool {
    let drawn: Vec<&str> = drawn.split('\n').collect();
    TAB_WIDTHS.iter().any(|&width| {
        let wanted: Vec<String> = wanted.split('\n').map(|l| expand_tabs(l, width)).collect();
        if drawn.len() >= wanted.len() {
            return drawn == wanted;
        }
        wanted
            .windows(drawn.len())
            .any(|window| window == drawn.as_slice())
    })
}

/// Whether `now` is `before` with `text` typed at one place in it, over a selection or not: a
/// start of `before`, then `text`, then an end of `before` that does not overlap that start.
pub(super) fn typed_into(before: &str, text: &str, now: &str) -> bool {
    let (before, now): (Vec<char>, Vec<char>) = (before.chars().collect(), now.chars().collect());
    let text: Vec<char> = expand_tabs(text, TAB_WIDTHS[0]).chars().collect();
    let Some(kept) = now.len().checked_sub(text.len()) else {
        return false;
    };
    if kept > before.len() {
        return false;
    }
    let prefix = before.iter().zip(&now).take_while(|(a, b)| a == b).count();
    let suffix = before
        .iter()
        .rev()
        .zip(now.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    // `at` is where the typed text starts in `now`: before it a start of `before`, after it
    // an end of it.
    (kept.saturating_sub(suffix)..=prefix.min(kept)).any(|at| now[at..at + text.len()] == text[..])
}

/// Presses `key` (with Shift when `shift`) `times` times in the editor.
fn press_times<D: Dom>(dom: &D, field: &D::Node, key: &str, shift: bool, times: usize) {
    let modifiers = if shift {
        vec![ChordModifier::Fixed(Modifier::Shift)]
    } else {
        Vec::new()
    };
    let chord = chord_of(modifiers, key);
    for _ in 0..times {
        press(dom, field, &chord, || {});
    }
}

/// Selects the occurrence `at` of a text in the drawn text (an empty selection after it when
/// `caret_after`) with the editor's keys: Mod+Home, ArrowDown to its line, ArrowRight to its
/// column, then Shift+ArrowRight over it. The selection is the editor's to show: the check is
/// that it drew one (a caret is checked by what is typed at it).
pub(super) async fn select_drawn<D: Dom>(
    dom: &D,
    field: &D::Node,
    drawn: &str,
    at: &TextAt,
    caret_after: bool,
) -> Result<(), Refusal> {
    let found = (at.nth > 0 && !at.text.is_empty())
        .then(|| drawn.match_indices(at.text.as_str()).nth(at.nth - 1))
        .flatten();
    let Some((byte, _)) = found else {
        let which = match at.nth {
            1 => String::new(),
            n => format!("occurrence {n} of "),
        };
        return Err(Refusal::NoSuchText(format!(
            "shows no {which}{:?} (it shows {})",
            at.text,
            shown(drawn)
        )));
    };
    let before = &drawn[..byte];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().unwrap_or("").chars().count();
    press(
        dom,
        field,
        &chord_of(vec![ChordModifier::Mod], "Home"),
        || {},
    );
    press_times(dom, field, "ArrowDown", false, line);
    press_times(dom, field, "ArrowRight", false, column);
    let length = at.text.chars().count();
    if caret_after {
        press_times(dom, field, "ArrowRight", false, length);
        dom.checkpoint().await;
        return Ok(());
    }
    press_times(dom, field, "ArrowRight", true, length);
    dom.checkpoint().await;
    // The editor draws its selection in an animation frame, which a busy machine can hold back
    // well past one task: wait for the drawing (a DOM change), within a bound.
    let deadline = dom.now_ms() + SELECTION_DRAWN_WITHIN_MS;
    loop {
        let drew_selection = editor_root(dom, field)
            .and_then(|root| dom.query(Some(&root), SELECTION).ok().flatten())
            .is_some();
        if drew_selection {
            return Ok(());
        }
        let left = deadline - dom.now_ms();
        if left <= 0.0 {
            return Err(Refusal::NoEffect(format!(
                "drew no selection after its keys selected {:?}: the editor did not take them",
                at.text
            )));
        }
        dom.settle(left).await;
    }
}

/// How long an editor may take to draw the selection its keys made.
const SELECTION_DRAWN_WITHIN_MS: f64 = 1_000.0;

/// The editor around `field`.
fn editor_root<D: Dom>(dom: &D, field: &D::Node) -> Option<D::Node> {
    let mut at = Some(field.clone());
    while let Some(node) = at {
        if dom.has_class(&node, EDITOR_ROOT_CLASS) {
            return Some(node);
        }
        at = dom.parent(&node);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_lines_show_the_text_exactly_with_tabs_at_their_stops() {
        assert!(shows("old text\nsecond", "old text\nsecond"));
        assert!(shows("\tx\nab\tc", "    x\nab  c"));
        // The new text in front of the old (the Monaco fill) is not the text.
        assert!(!shows("new", "new\nold text"));
        assert!(!shows("a  b", "a b"));
        assert!(shows("", ""));
    }

    #[test]
    fn a_long_text_drawn_in_part_shows_consecutive_lines_of_it() {
        assert!(shows("1\n2\n3\n4\n5", "2\n3\n4"));
        assert!(!shows("1\n2\n3\n4\n5", "2\n4\n5"));
    }

    #[test]
    fn typed_text_is_found_at_one_place_over_any_selection() {
        assert!(typed_into("old text", " tail", "old text tail"));
        assert!(typed_into("old text", "head ", "head old text"));
        assert!(typed_into("old text\nsecond", "2nd", "old text\n2nd"));
        assert!(typed_into("aaa", "a", "aaaa"));
        assert!(!typed_into("old text", " tail", "old text"));
        // All of it selected and typed over.
        assert!(typed_into("old text", "x", "x"));
        assert!(!typed_into("old", "x", "oldy"));
        assert!(!typed_into("abc", "x", "xabcabc"));
    }

    /// An editor that never draws the selection its keys made is waited for, within the bound,
    /// then named as not having taken them; one that drew it is done at once.
    #[test]
    fn a_selection_is_waited_for_within_a_bound_and_its_absence_named() {
        use crate::fake_dom::{FakeDom, FakeNode, block_on};
        let dom = FakeDom::default();
        let editor = dom.add(FakeNode {
            tag: "div",
            classes: vec![EDITOR_ROOT_CLASS],
            attached: true,
            ..FakeNode::default()
        });
        let field = dom.add(FakeNode {
            parent: Some(editor),
            tag: "textarea",
            attached: true,
            ..FakeNode::default()
        });
        let at = TextAt {
            text: "text".into(),
            nth: 1,
        };
        let started = dom.now_ms();
        let refused = block_on(select_drawn(&dom, &field, "old text", &at, false));
        let Err(Refusal::NoEffect(why)) = refused else {
            panic!("not refused as no effect: {refused:?}")
        };
        assert!(why.contains("drew no selection"), "{why}");
        assert!(dom.now_ms() - started >= SELECTION_DRAWN_WITHIN_MS);

        dom.add(FakeNode {
            parent: Some(editor),
            tag: "div",
            selectors: vec![SELECTION],
            attached: true,
            ..FakeNode::default()
        });
        let started = dom.now_ms();
        block_on(select_drawn(&dom, &field, "old text", &at, false)).expect("drawn");
        assert_eq!(dom.now_ms(), started, "no wait once drawn");
    }

    #[test]
    fn an_inline_styles_top_is_read() {
        assert_eq!(top_of("top:19px;height:19px;"), Some(19.0));
        assert_eq!(top_of("height: 19px; top: 38px"), Some(38.0));
        assert_eq!(top_of("height:19px"), None);
    }
}
