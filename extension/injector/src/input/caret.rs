//! Caret and selection, as a person places and drags them: where text goes in a field or editor
//! (start, end, after a given text), text typed at the caret that keeps the rest, and text
//! selected (all, or an occurrence of a text) so that a key, a toolbar button or typing acts on it.
//! Every one is read back: the caret or selection where it was put, the field holding the text
//! it should (`FillCheck`). Offsets are UTF-16 code units of a text control's value or of an
//! editor's text content, as the DOM's selection APIs count them.

use bridge::keys::ChordModifier;
use bridge::page_ops::{Caret, TextAt};
use bridge::trusted_input;

use super::{
    Edit, FillCheck, Refusal, TextEntry, chord_of, drawn_lines, edit_editor, editable,
    insert_typed, line_edits, perform_trusted, press, press_trusted,
};
use crate::dom::Dom;

/// What the field holds: a control's value, an editor's text.
fn content<D: Dom>(dom: &D, entry: TextEntry, field: &D::Node) -> String {
    match entry {
        TextEntry::Control => dom.value(field).unwrap_or_default(),
        TextEntry::ContentEditable | TextEntry::EditContext => dom.text(field),
    }
}

fn utf16(text: &str) -> Vec<u16> {
    text.encode_utf16().collect()
}

/// The UTF-16 range of the `nth` (from 1) occurrence of `at.text` in `text`.
fn find(text: &str, at: &TextAt) -> Option<(usize, usize)> {
    if at.text.is_empty() || at.nth == 0 {
        return None;
    }
    let (byte, _) = text.match_indices(at.text.as_str()).nth(at.nth - 1)?;
    let start = text[..byte].encode_utf16().count();
    Some((start, start + at.text.encode_utf16().count()))
}

fn not_there(at: &TextAt, holds: &str) -> Refusal {
    let which = match at.nth {
        1 => String::new(),
        n => format!("occurrence {n} of "),
    };
    Refusal::NoSuchText(format!(
        "holds no {which}{:?} (it holds {})",
        at.text,
        super::shown(holds)
    ))
}

/// An editor that keeps its text and selection in its own model (EditContext, Monaco): only its
/// keys move the caret, so only the start and the end can be reached by them.
fn model_only(what: &str) -> Refusal {
    Refusal::Unsupported(format!(
        "keeps its text in its own model (EditContext): {what} cannot be placed in it by \
         selection; use start or end, or keys (press Mod+Home, Mod+End, arrows)"
    ))
}

/// Puts the caret or selection at `start..end` and checks, once the editor had its
/// `selectionchange`, that it stayed there.
async fn put_selection<D: Dom>(
    dom: &D,
    entry: TextEntry,
    field: &D::Node,
    start: usize,
    end: usize,
) -> Result<(), Refusal> {
    let mut now = None;
    // An editor busy with its own update (a render after the last edit) may put its own
    // selection back over ours once: it is given a few tries.
    for _ in 0..SELECT_TRIES {
        dom.select_range(field, entry, start, end);
        // Editors take the selection from `selectionchange`, a task of its own.
        dom.checkpoint().await;
        now = dom.selection_range(field, entry);
        if now == Some((start, end)) {
            return Ok(());
        }
        dom.settle(SELECT_RETRY_MS).await;
    }
    Err(Refusal::NoEffect(format!(
        "did not keep the selection at {start}..{end} (it is {}): the editor moved it",
        now.map_or("outside it".to_owned(), |(s, e)| format!("at {s}..{e}"))
    )))
}

/// Times a selection is put before the editor is said to refuse it.
const SELECT_TRIES: usize = 3;
/// How long the editor is given to finish its own update between two tries.
const SELECT_RETRY_MS: f64 = 30.0;

/// Presses `key` with Mod (`Mod+Home`) in an EditContext editor, as a person moves its caret.
async fn model_key<D: Dom>(dom: &D, field: &D::Node, key: &str) -> Result<(), Refusal> {
    let chord = chord_of(vec![ChordModifier::Mod], key);
    if dom.trusted_input() {
        press_trusted(dom, &chord).await?;
    } else {
        press(dom, field, &chord, || {});
    }
    dom.checkpoint().await;
    Ok(())
}

/// Places the caret in the field or editor `node` names.
pub async fn place_caret<D: Dom>(dom: &D, node: &D::Node, caret: &Caret) -> Result<(), Refusal> {
    let (entry, field) = editable(dom, node)?;
    if entry == TextEntry::EditContext {
        return match caret {
            Caret::Start => model_key(dom, &field, "Home").await,
            Caret::End => model_key(dom, &field, "End").await,
            Caret::After(at) => match drawn_lines::drawn_text(dom, &field) {
                Some(drawn) => drawn_lines::select_drawn(dom, &field, &drawn, at, true).await,
                None => Err(model_only("a caret after a text")),
            },
        };
    }
    let holds = content(dom, entry, &field);
    let at = match caret {
        Caret::Start => 0,
        Caret::End => utf16(&holds).len(),
        Caret::After(at) => find(&holds, at).ok_or_else(|| not_there(at, &holds))?.1,
    };
    put_selection(dom, entry, &field, at, at).await
}

/// Selects all of the field or editor `node` names, or an occurrence of a text in it.
pub async fn select_text<D: Dom>(
    dom: &D,
    node: &D::Node,
    which: Option<&TextAt>,
) -> Result<(), Refusal> {
    let (entry, field) = editable(dom, node)?;
    let holds = content(dom, entry, &field);
    let (start, end) = match which {
        None if entry == TextEntry::EditContext => {
            return model_key(dom, &field, "a").await;
        }
        Some(at) if entry == TextEntry::EditContext => {
            return match drawn_lines::drawn_text(dom, &field) {
                Some(drawn) => drawn_lines::select_drawn(dom, &field, &drawn, at, false).await,
                None => Err(model_only("a selection")),
            };
        }
        None => (0, utf16(&holds).len()),
        Some(at) => find(&holds, at).ok_or_else(|| not_there(at, &holds))?,
    };
    put_selection(dom, entry, &field, start, end).await
}

/// Types `text` at the caret of the field or editor `node` names (placed first when `at` is
/// given; else where it is, or at the end when it is not in the field), replacing only what is
/// selected, as a person types; the check afterwards reads back the whole field.
pub async fn type_text<D: Dom>(
    dom: &D,
    node: &D::Node,
    text: &str,
    at: Option<&Caret>,
) -> Result<FillCheck<D>, Refusal> {
    let (entry, field) = editable(dom, node)?;
    let text = text.replace("\r\n", "\n");
    match at {
        Some(caret) => place_caret(dom, &field, caret).await?,
        None if entry != TextEntry::EditContext && dom.selection_range(&field, entry).is_none() => {
            place_caret(dom, &field, &Caret::End).await?;
        }
        None => {}
    }
    let holds = content(dom, entry, &field);
    let wanted = match dom.selection_range(&field, entry) {
        Some((start, end)) if entry != TextEntry::EditContext => {
            let units = utf16(&holds);
            let (start, end) = (start.min(units.len()), end.min(units.len()));
            let mut out = String::from_utf16_lossy(&units[..start]);
            out.push_str(&text);
            out.push_str(&String::from_utf16_lossy(&units[end..]));
            out
        }
        // Where an EditContext editor's caret is only it knows: that it changed is checked.
        _ => text.clone(),
    };
    let check = match drawn_lines::drawn_text(dom, &field) {
        Some(before) if entry == TextEntry::EditContext => {
            FillCheck::typed_into_drawn(field.clone(), text.clone(), before)
        }
        _ => FillCheck::new(field.clone(), wanted, entry, dom).without_line_breaks(),
    };
    if dom.trusted_input() {
        let mut commands = Vec::new();
        match entry {
            TextEntry::Control | TextEntry::EditContext => {
                commands.push(trusted_input::insert_text(&text));
            }
            TextEntry::ContentEditable => {
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        let enter = chord_of(Vec::new(), "Enter");
                        commands.extend(trusted_input::chord(&enter, dom.platform()));
                    }
                    if !line.is_empty() {
                        commands.push(trusted_input::insert_text(line));
                    }
                }
            }
        }
        perform_trusted(dom, commands).await?;
        return Ok(check);
    }
    match entry {
        // The browser's own editing command inserts at the control's selection, fires `input`
        // and keeps the undo history, as a person's typing does.
        TextEntry::Control => {
            let edit = Edit::InsertText(text.clone());
            if dom.before_input(&field, &edit)
                && dom.text_input(&field, &text)
                && !dom.exec_edit(&field, &edit)
            {
                dom.set_value(&field, &check.wanted);
                dom.input_event(&field, &edit);
            }
        }
        TextEntry::ContentEditable => edit_editor(dom, &field, &line_edits(&text)).await,
        TextEntry::EditContext => {
            dom.paste(&field, &text);
        }
    }
    Ok(check)
}

/// Printable text a key types into the focused field or editor (`press` of `a`, `Shift+1`),
/// where the page left the key's default action to the browser; `None` for a key that types
/// nothing there (Enter, Tab, a chord with Control, Alt or Meta).
pub fn typed_by(chord: &bridge::keys::Chord, shift: bool) -> Option<String> {
    let typed = chord.key.key_with(shift);
    (chord.key.types && typed.chars().count() == 1).then(|| typed.to_owned())
}

/// Inserts a key's `text` at the caret of the field or editor the key was pressed in, as the
/// browser's default action for a printable key (synthetic keys have none). A key pressed on
/// anything else (a shortcut on the page) types nothing, even where a field is inside it.
pub fn key_types<D: Dom>(dom: &D, node: &D::Node, text: &str) {
    let Some((entry, field)) = dom.text_entry(node) else {
        return;
    };
    if !dom.contains(&field, node)
        || entry == TextEntry::EditContext
        || dom.is_read_only(&field)
        || dom.is_disabled(&field)
    {
        return;
    }
    insert_typed(dom, &field, &Edit::InsertText(text.to_owned()), text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, nth: usize) -> TextAt {
        TextAt {
            text: text.into(),
            nth,
        }
    }

    #[test]
    fn an_occurrence_is_found_in_utf16_units_as_the_selection_apis_count() {
        let text = "😀 old text\nsecond old line";
        // The emoji is two UTF-16 units: offsets are the DOM's, not bytes or chars.
        assert_eq!(find(text, &at("old", 1)), Some((3, 6)));
        assert_eq!(find(text, &at("old", 2)), Some((19, 22)));
        assert_eq!(find(text, &at("old", 3)), None);
        assert_eq!(find(text, &at("", 1)), None);
        assert_eq!(find(text, &at("old", 0)), None);
    }

    #[test]
    fn a_missing_text_says_which_occurrence_and_what_the_field_holds() {
        let refusal = not_there(&at("x", 3), "abc");
        assert_eq!(
            refusal.to_string(),
            "holds no occurrence 3 of \"x\" (it holds \"abc\")"
        );
        assert_eq!(
            not_there(&at("x", 1), "abc").to_string(),
            "holds no \"x\" (it holds \"abc\")"
        );
    }

    #[test]
    fn a_printable_key_types_its_character_and_others_type_nothing() {
        let chord = |text: &str| bridge::keys::parse_chord(text).unwrap();
        assert_eq!(typed_by(&chord("a"), false).as_deref(), Some("a"));
        assert_eq!(typed_by(&chord("Shift+7"), true).as_deref(), Some("&"));
        assert_eq!(typed_by(&chord("Enter"), false), None);
        assert_eq!(typed_by(&chord("Tab"), false), None);
    }
}
