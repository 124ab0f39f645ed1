//! The read-back of every edit (a fill, a clear, text typed at the caret): once the page has
//! settled, the field or editor must hold what the edit should have left in it, compared exactly
//! but for what rendering changes; else the edit did not stick and the error says what it holds.

use super::{Refusal, TextEntry, drawn_lines};
use crate::dom::Dom;

/// What to check once the page has settled after an edit (a fill, a clear, text typed at the
/// caret): that the field or editor holds what the edit should have left in it.
pub struct FillCheck<D: Dom> {
    field: D::Node,
    /// The whole text the field should hold now.
    pub(super) wanted: String,
    took: Took<D>,
}

enum Took<D: Dom> {
    /// A text control: its value must be `wanted`.
    Value,
    /// A contenteditable editor: its rendered text must be `wanted` (see [`as_rendered`]); with
    /// `lines` false without comparing line breaks (`wanted` was made from the editor's
    /// `textContent`, which has none between blocks: text typed at a caret).
    Text { lines: bool },
    /// An editor whose text lives elsewhere (EditContext): something in the document changed.
    Changed(D::Watch),
    /// An editor that draws its own lines (Monaco): what it draws must show `wanted`
    /// ([`drawn_lines::shows`]).
    Drawn,
    /// The same editor after text typed at its caret: what it draws must be what it drew
    /// `before`, with `wanted` (the typed text) typed at one place in it.
    DrawnTyped { before: String },
}

/// Text without its whitespace nor zero-width characters: a placeholder's text against the
/// editor's, which tells only whether the placeholder is all it shows.
fn squeeze(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !is_zero_width(*c))
        .collect()
}

fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200b}' | '\u{feff}')
}

/// Text as an editor's rendered text (`innerText`) can be compared with what was typed: only what
/// the DOM really differs in is made equal — a no-break space (how editors keep a run of spaces)
/// is a space, zero-width characters around widgets go, a line break is one however many
/// `innerText` counts between two blocks (two after a paragraph, one after a `<br>`), and line
/// breaks at the start and end (an editor's trailing `<br>`) go. Every other space, tab and
/// character counts.
fn as_rendered(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{a0}' => out.push(' '),
            '\r' => {}
            '\n' if out.ends_with('\n') => {}
            c if is_zero_width(c) => {}
            c => out.push(c),
        }
    }
    out.trim_matches('\n').to_owned()
}

/// How long an edit's check waits for an editor that renders on its next animation frame
/// (Monaco) or syncs its model late, before it says the page did not take the text.
const RENDER_GRACE_MS: f64 = 250.0;

/// Shown of a field's content in an error at most.
const SHOWN_CHARS: usize = 200;

pub(super) fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{:?}… ({} characters)", &text[..cut], text.chars().count()),
        None => format!("{text:?}"),
    }
}

impl<D: Dom> FillCheck<D> {
    pub(crate) fn new(field: D::Node, wanted: String, entry: TextEntry, dom: &D) -> FillCheck<D> {
        let took = match entry {
            TextEntry::Control => Took::Value,
            TextEntry::ContentEditable => Took::Text { lines: true },
            TextEntry::EditContext if drawn_lines::drawn_text(dom, &field).is_some() => Took::Drawn,
            TextEntry::EditContext => Took::Changed(dom.watch(&field)),
        };
        FillCheck {
            field,
            wanted,
            took,
        }
    }

    /// The check of `typed` typed at the caret of an editor that drew `before`.
    pub(crate) fn typed_into_drawn(field: D::Node, typed: String, before: String) -> FillCheck<D> {
        FillCheck {
            field,
            wanted: typed,
            took: Took::DrawnTyped { before },
        }
    }

    /// The same check, line breaks aside: for text typed at a caret, whose `wanted` was made
    /// from the editor's `textContent`.
    pub(crate) fn without_line_breaks(mut self) -> FillCheck<D> {
        if let Took::Text { lines } = &mut self.took {
            *lines = false;
        }
        self
    }

    /// `Err(NoEffect)` when the field does not hold what the edit should have left: a text
    /// control whose value differs (kept, put back, reformatted, cut), an editor whose text differs
    /// (the edit did not stick, or the editor reset itself), given a moment to render; an
    /// EditContext editor whose document did not change at all. The error says what it holds.
    pub async fn verify(self, dom: &D) -> Result<(), Refusal> {
        let compared = |text: &str| match self.took {
            Took::Text { lines: false } => as_rendered(text).replace('\n', ""),
            Took::Value
            | Took::Text { lines: true }
            | Took::Changed(_)
            | Took::Drawn
            | Took::DrawnTyped { .. } => as_rendered(text),
        };
        let wanted = compared(&self.wanted);
        let holds = || match self.took {
            Took::Value => dom.value(&self.field).unwrap_or_default(),
            Took::Text { .. } => as_rendered(&dom.rendered_text(&self.field)),
            Took::Changed(_) => dom.text(&self.field),
            Took::Drawn | Took::DrawnTyped { .. } => {
                drawn_lines::drawn_text(dom, &self.field).unwrap_or_default()
            }
        };
        let took = || match &self.took {
            Took::Value => dom.value(&self.field).unwrap_or_default() == self.wanted,
            Took::Text { .. } => {
                let now = compared(&dom.rendered_text(&self.field));
                now == wanted || (wanted.is_empty() && only_placeholder(dom, &self.field))
            }
            Took::Changed(watch) => dom.saw_change(watch),
            Took::Drawn => drawn_lines::drawn_text(dom, &self.field)
                .is_some_and(|drawn| drawn_lines::shows(&self.wanted, &drawn)),
            Took::DrawnTyped { before } => drawn_lines::drawn_text(dom, &self.field)
                .is_some_and(|drawn| drawn_lines::typed_into(before, &self.wanted, &drawn)),
        };
        if rendered(dom, took).await.is_ok() {
            return Ok(());
        }
        Err(Refusal::NoEffect(match &self.took {
            Took::Changed(_) => format!(
                "did not change: the editor took none of {}",
                shown(&self.wanted)
            ),
            Took::DrawnTyped { before } => format!(
                "shows {} after {} was typed, which is not what it showed ({}) with that typed \
                 in one place: the edit did not stick",
                shown(&holds()),
                shown(&self.wanted),
                shown(before)
            ),
            Took::Value | Took::Text { .. } | Took::Drawn => format!(
                "holds {} after the edit, not {}: the edit did not stick",
                shown(&holds()),
                shown(&self.wanted)
            ),
        }))
    }
}

/// Whether an emptied editor's only text is its placeholder (an element of its own inside
/// it, as CodeMirror's `cm-placeholder`), which is not content.
fn only_placeholder<D: Dom>(dom: &D, field: &D::Node) -> bool {
    let Ok(Some(placeholder)) = dom.query(Some(field), "[class*=placeholder]") else {
        return false;
    };
    squeeze(&dom.text(&placeholder)) == squeeze(&dom.text(field))
}

/// Whether `took` holds now or after the page's next changes, within [`RENDER_GRACE_MS`].
async fn rendered<D: Dom>(dom: &D, took: impl Fn() -> bool) -> Result<(), ()> {
    let deadline = dom.now_ms() + RENDER_GRACE_MS;
    while !took() {
        let left = deadline - dom.now_ms();
        if left <= 0.0 {
            return Err(());
        }
        dom.settle(left).await;
    }
    Ok(())
}
