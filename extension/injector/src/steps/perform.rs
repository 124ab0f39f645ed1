//! One action on one element, its values resolved (issue 27): what an adapter's action step does
//! once its templates are interpolated and its element found, and what a page tool's act does
//! with the values the server read ([`act_on`]: no variables, no templates). Each kind acts
//! through the input module, so adapter steps and page tools act alike.

use super::*;
use bridge::keys::Chord;
use bridge::page_ops::{Caret, TextAt};

/// An action with its values resolved. `N` is an element (where a drag drops).
pub enum Act<'a, N> {
    /// `clicks` presses of the primary button (2: a double click).
    Click(i32),
    Hover,
    /// Checks (`true`) or unchecks a checkbox or radio button.
    Check(bool),
    /// Replaces the field's text (empty: clears it).
    Fill(&'a str),
    /// Chooses the option whose text (`by_text`) or value is `wanted`.
    Select {
        wanted: &'a str,
        by_text: bool,
    },
    /// A key chord on the element, focused first; `key` names it in errors.
    Press {
        chord: &'a Chord,
        key: &'a str,
    },
    Scroll,
    /// Puts these files (of the call's) on the element.
    Upload(&'a [String]),
    /// Types at the caret (placed first when `at` is given).
    Type {
        text: &'a str,
        at: Option<&'a Caret>,
    },
    Caret(&'a Caret),
    SelectText(Option<&'a TextAt>),
    /// Drags the element onto this one.
    Drag(N),
}

impl<'d, D: PageDom> Run<'d, D> {
    /// Performs `act` on `node`, which `who` names in errors; `label` is the step's. A fill or a
    /// typing is checked once the page settled ([`Run::settle_after`]).
    pub(super) async fn perform(
        &mut self,
        node: &D::Node,
        who: &str,
        act: &Act<'_, D::Node>,
        label: &str,
    ) -> Result<(), WireError> {
        let dom = self.dom;
        match act {
            Act::Click(clicks) => {
                let click = input::click(dom, node, *clicks, self.patience());
                crate::page::profile::span("click", click)
                    .await
                    .map_err(|r| self.refused(label, who, r))?;
            }
            Act::Hover => input::hover(dom, node, self.patience())
                .await
                .map_err(|r| self.refused(label, who, r))?,
            Act::Check(wanted) => {
                if dom.prop(node, "checked") != Value::Bool(*wanted) {
                    input::click(dom, node, 1, self.patience())
                        .await
                        .map_err(|r| self.refused(label, who, r))?;
                    if dom.prop(node, "checked") != Value::Bool(*wanted) {
                        let why = format!(
                            "is still {}checked after a click (is it a checkbox the page lets change?)",
                            if *wanted { "un" } else { "" }
                        );
                        return Err(self.refused(label, who, Refusal::NoEffect(why)));
                    }
                }
            }
            Act::Fill(text) => {
                self.note_focus(node);
                let check = input::fill(dom, node, text)
                    .await
                    .map_err(|r| self.refused(label, who, r))?;
                self.after_settle = Some((label.to_owned(), who.to_owned(), check));
            }
            Act::Select { wanted, by_text } => self.select(node, who, wanted, *by_text, label)?,
            Act::Press { chord, key } => {
                if !dom.is_connected(node) {
                    return Err(self.refused(label, who, Refusal::Detached));
                }
                // Keys go to the focused element: a person focuses the field first.
                if !dom.has_focus(node) {
                    dom.focus(node);
                }
                self.keys(node, chord, key, label).await?;
            }
            Act::Scroll => dom.scroll_into_view(node),
            Act::Upload(names) => files::upload(dom, node, who, names, label)?,
            Act::Type { text, at } => {
                self.note_focus(node);
                let check = input::type_text(dom, node, text, *at)
                    .await
                    .map_err(|r| self.refused(label, who, r))?;
                self.after_settle = Some((label.to_owned(), who.to_owned(), check));
            }
            Act::Caret(caret) => input::place_caret(dom, node, caret)
                .await
                .map_err(|r| self.refused(label, who, r))?,
            Act::SelectText(which) => input::select_text(dom, node, *which)
                .await
                .map_err(|r| self.refused(label, who, r))?,
            Act::Drag(onto) => input::drag_checked(dom, node, onto, self.patience())
                .await
                .map_err(|r| self.refused(label, who, r))?,
        }
        Ok(())
    }

    /// A chord's keys on `node` (the focused element): through Chrome's debugger where the call
    /// is trusted, else as the page's own key events.
    pub(super) async fn keys(
        &mut self,
        node: &D::Node,
        chord: &Chord,
        key: &str,
        label: &str,
    ) -> Result<(), WireError> {
        if self.dom.trusted_input() {
            input::press_trusted(self.dom, chord)
                .await
                .map_err(|r| self.refused(label, &format!("`{key}`"), r))
        } else {
            self.press(node, chord);
            Ok(())
        }
    }

    /// The field an edit starts in and its value then: Enter there commits it (`change`) only
    /// when the value differs, as in Chrome.
    fn note_focus(&mut self, node: &D::Node) {
        if let Some(before) = self.dom.value(node) {
            self.focus_value = Some((node.clone(), before));
        }
    }

    fn select(
        &mut self,
        node: &D::Node,
        who: &str,
        wanted: &str,
        by_text: bool,
        label: &str,
    ) -> Result<(), WireError> {
        let dom = self.dom;
        let options = dom.options(node).ok_or_else(|| {
            fail(
                ErrorCode::AdapterError,
                label,
                "the element is not a <select>",
            )
        })?;
        let index = options
            .iter()
            .position(|(v, t)| if by_text { t == wanted } else { v == wanted })
            .ok_or_else(|| {
                let listed: Vec<&str> = options
                    .iter()
                    .map(|(v, t)| if by_text { t.as_str() } else { v.as_str() })
                    .collect();
                fail(
                    ErrorCode::ElementNotFound,
                    label,
                    format!(
                        "no option with {} {wanted:?} (there are: {})",
                        if by_text { "text" } else { "value" },
                        listed.join(", ")
                    ),
                )
            })?;
        if !dom.is_connected(node) {
            return Err(self.refused(label, who, Refusal::Detached));
        }
        if dom.is_disabled(node) {
            return Err(self.refused(label, who, Refusal::Disabled));
        }
        dom.set_selected_index(node, index);
        dom.dispatch_select_input(node);
        dom.dispatch_change(node);
        if dom.prop(node, "selectedIndex").as_f64() != Some(index as f64) {
            return Err(self.refused(
                label,
                who,
                Refusal::NoEffect(format!(
                    "did not keep the option {wanted:?}: the page chose another"
                )),
            ));
        }
        Ok(())
    }
}

/// Performs a page tool's act on `node` (which `who` names in errors), then lets the page settle
/// and checks that it took an edit, exactly as after an adapter's step. `edited`: the text field
/// an earlier act filled and its value before, so that Enter there commits it with `change` as
/// in Chrome. Answers where the page is going when the action set another page loading (a
/// submitted form gets a moment to start its navigation, as after an adapter's step). `again`
/// finds the element anew when the page replaced it before anything was dispatched to it.
#[allow(clippy::too_many_arguments)]
pub async fn act_on<D: PageDom>(
    dom: &D,
    node: &D::Node,
    who: &str,
    act: &Act<'_, D::Node>,
    edited: Option<(D::Node, String)>,
    again: &dyn Fn() -> Option<D::Node>,
    timeout_ms: u64,
    cancelled: &Cell<bool>,
) -> Result<Option<String>, WireError> {
    const LABEL: &str = "act";
    let mut run = Run::new(dom, Vars::new(), timeout_ms, cancelled);
    run.focus_value = edited;
    dom.watch_leaving();
    run.may_start(LABEL, false)?;
    let mut done = run.perform(node, who, act, LABEL).await;
    // Refused before any input reached it (see `Refusal::Detached`): once more on the element
    // that took its place, as a person who looks again does.
    if done.is_err()
        && run.detached.take()
        && let Some(node) = again()
    {
        done = run.perform(&node, who, act, LABEL).await;
    }
    done?;
    run.settle_after().await?;
    run.leaving(false, LABEL).await
}
