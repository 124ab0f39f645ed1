//! The recorder's decisions: which step a person's input in the page becomes
//! ([`step_for`]), over [`PageDom`] so the fake DOM tests it. The browser glue
//! (`web/record.rs`) only listens (trusted events, capture phase) and sends the steps on.
//!
//! A field records what it ends up holding, not the events that put it there: typing is a
//! `fill` (one per `input` event; the worker keeps the last of a run, `bridge::recording`), a
//! `<select>` a `select`, a checkbox or radio a `check`/`uncheck` (on `change`), so the click
//! that changed them is not recorded too. Clicks without a pointer (`detail` 0: a key activated
//! the element, or a label forwarded it) are the key's: its press is recorded instead. A
//! secret's value never leaves the page: its fill carries [`Typed::Secret`]. A field is secret
//! when it is a password field, is marked as a password, a one-time code or card data
//! (`autocomplete`), is drawn masked (`-webkit-text-security`), or its label, name or id says
//! password, PIN, code or CVC; and it stays secret for the rest of the recording once it was
//! ([`Secrets`]: a page's own "show password" button does not make it a text to record).

use bridge::recording::{RecordedStep, Typed};

use crate::input::Modifiers;
use crate::page::{PageDom, aria, locate};

/// A person's input, as the glue saw it (trusted, in the capture phase).
#[derive(Debug, Clone)]
pub enum UserEvent<N> {
    /// A click made with a pointer (`detail` ≥ 1) on `target`.
    Click(N),
    /// `input`: a text field's value changed.
    Input(N),
    /// `change`: a select, checkbox or radio button changed.
    Change(N),
    /// `keydown` of `key` (the event's `key`) with its modifiers.
    Key {
        target: N,
        key: String,
        mods: Modifiers,
    },
}

/// `<input>` types that do not take text (everything else does, as in HTML).
const NOT_TEXT: &[&str] = &[
    "checkbox", "radio", "file", "submit", "button", "reset", "image", "range", "color", "hidden",
];

/// `autocomplete` tokens whose values are secrets like a password's.
const SECRET_AUTOCOMPLETE: &[&str] = &[
    "current-password",
    "new-password",
    "one-time-code",
    "cc-number",
    "cc-csc",
    "cc-exp",
    "cc-exp-month",
    "cc-exp-year",
];

/// Words in a field's label, name or id that say its value is a secret.
const SECRET_WORDS: &[&str] = &[
    "password", "passwort", "passcode", "passwd", "pwd", "pin", "code", "otp", "totp", "cvc",
    "cvv", "csc", "cvn", "secret",
];

/// At most this many fields are remembered as secret in one page (the oldest are forgotten).
const MAX_SECRET_FIELDS: usize = 512;

/// The fields of this page that were secret at some moment of the recording: they stay secret
/// whatever the page makes of them later (its own "show password" button turns a password
/// field into a text field, a script drops the mask). The glue looks when the recording starts
/// and before each event it decides.
pub struct Secrets<N> {
    fields: Vec<N>,
}

impl<N> Default for Secrets<N> {
    fn default() -> Self {
        Secrets { fields: Vec::new() }
    }
}

impl<N: Clone> Secrets<N> {
    /// Notes each field of the page that is secret now (and `also`, the event's own element,
    /// which may be in a shadow root a document query does not reach).
    pub fn look<D: PageDom<Node = N>>(&mut self, dom: &D, also: Option<&N>) {
        let fields = dom.query_all(None, "input, textarea").unwrap_or_default();
        for field in fields.iter().chain(also) {
            if !self.holds(dom, field) && is_secret(dom, field) {
                if self.fields.len() == MAX_SECRET_FIELDS {
                    self.fields.remove(0);
                }
                self.fields.push(field.clone());
            }
        }
    }

    /// Whether `node` was secret at some moment this recording looked.
    pub fn holds<D: PageDom<Node = N>>(&self, dom: &D, node: &N) -> bool {
        self.fields.iter().any(|field| dom.same(field, node))
    }
}

/// Keys recorded on their own; any other key is recorded only in a chord (Control, Alt or Meta
/// held), since what it types is recorded as the field's fill.
const KEYS: &[&str] = &["Enter", "Escape", "Tab"];

/// The step `event` records, or `None` when it records nothing (typing keys, a click on a field
/// that records its value instead, an element that is gone). A field `secrets` holds, or one
/// secret now, records no value.
pub fn step_for<D: PageDom>(
    dom: &D,
    event: &UserEvent<D::Node>,
    secrets: &Secrets<D::Node>,
) -> Option<RecordedStep> {
    match event {
        UserEvent::Click(node) => {
            let node = actionable(dom, node);
            let control = match dom.tag_name(&node).as_str() {
                "label" => dom.label_control(&node),
                _ => Some(node.clone()),
            };
            if control.is_some_and(|c| records_own_value(dom, &c)) {
                return None;
            }
            Some(RecordedStep::Click {
                target: target(dom, &node)?,
            })
        }
        UserEvent::Input(node) if takes_text(dom, node) => {
            let value = if secrets.holds(dom, node) || is_secret(dom, node) {
                Typed::Secret
            } else {
                Typed::Text(text_of(dom, node))
            };
            Some(RecordedStep::Fill {
                target: target(dom, node)?,
                label: label(dom, node),
                value,
            })
        }
        UserEvent::Input(_) => None,
        UserEvent::Change(node) => match (dom.tag_name(node).as_str(), input_type(dom, node)) {
            ("select", _) => Some(RecordedStep::Select {
                target: target(dom, node)?,
                label: label(dom, node),
                value: dom.value(node).unwrap_or_default(),
                options: dom
                    .options(node)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(value, _)| value)
                    .collect(),
            }),
            ("input", kind) if kind == "checkbox" || kind == "radio" => Some(RecordedStep::Check {
                target: target(dom, node)?,
                checked: dom.prop(node, "checked").as_bool().unwrap_or(false),
            }),
            _ => None,
        },
        UserEvent::Key {
            target: on,
            key,
            mods,
        } => {
            let chord = chord(key, *mods, takes_text(dom, on))?;
            Some(RecordedStep::Press {
                target: target(dom, on)?,
                key: chord,
            })
        }
    }
}

/// The key press `key` as a `press` step's key (`Enter`, `Control+s`), or `None` when it is not
/// recorded: a lone key that types (its fill says what it typed), or a modifier by itself.
fn chord(key: &str, mods: Modifiers, in_text: bool) -> Option<String> {
    if matches!(
        key,
        "Control" | "Alt" | "Meta" | "Shift" | "Dead" | "Unidentified" | ""
    ) {
        return None;
    }
    let key = match key {
        " " => "Space",
        other => other,
    };
    let held: Vec<&str> = mods.held().collect();
    let chorded = mods.control || mods.alt || mods.meta;
    // Space types in a field and activates a button (whose click has no pointer, so is not
    // recorded itself).
    let alone = KEYS.contains(&key) || (key == "Space" && !in_text);
    if !chorded && !alone {
        return None;
    }
    bridge::keys::parse_key(key).ok()?;
    let mut chord = held.join("+");
    if !chord.is_empty() {
        chord.push('+');
    }
    chord.push_str(key);
    Some(chord)
}

/// The element a click acts on: the nearest one a person acts on (a button around an icon).
fn actionable<D: PageDom>(dom: &D, node: &D::Node) -> D::Node {
    let mut at = Some(node.clone());
    while let Some(here) = at {
        let tag = dom.tag_name(&here);
        if tag == "label" || aria::is_actionable(&aria::role(dom, &here)) {
            return here;
        }
        at = dom.parent(&here);
    }
    node.clone()
}

fn input_type<D: PageDom>(dom: &D, node: &D::Node) -> String {
    dom.attr(node, "type")
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// A text field: `<textarea>`, an `<input>` that takes text, or an editing host.
fn takes_text<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    match dom.tag_name(node).as_str() {
        "textarea" => true,
        "input" => !NOT_TEXT.contains(&input_type(dom, node).as_str()),
        _ => dom
            .attr(node, "contenteditable")
            .is_some_and(|v| !v.eq_ignore_ascii_case("false")),
    }
}

/// A control whose `input`/`change` records it, so a click on it records nothing.
fn records_own_value<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    takes_text(dom, node)
        || dom.tag_name(node) == "select"
        || matches!(input_type(dom, node).as_str(), "checkbox" | "radio")
}

/// Whether the value of text field `node` is a secret now (see the module's doc).
fn is_secret<D: PageDom>(dom: &D, node: &D::Node) -> bool {
    if !takes_text(dom, node) {
        return false;
    }
    input_type(dom, node) == "password"
        || dom.attr(node, "autocomplete").is_some_and(|tokens| {
            tokens
                .split_ascii_whitespace()
                .any(|t| SECRET_AUTOCOMPLETE.contains(&t.to_ascii_lowercase().as_str()))
        })
        || ["name", "id"]
            .into_iter()
            .filter_map(|attr| dom.attr(node, attr))
            .any(|said| says_secret(&said))
        || dom.masked(node)
        || says_secret(&aria::name(dom, node, &aria::role(dom, node)))
}

/// Whether a field's label, name or id says its value is a secret: one of [`SECRET_WORDS`] as a
/// word (`card_pin`, `cardPin`, `PIN code`), or "password" anywhere (`userpassword`).
fn says_secret(said: &str) -> bool {
    let mut words = String::with_capacity(said.len() + 8);
    let mut last_lower = false;
    for c in said.chars() {
        // `cardPin` is the words `card` and `pin`.
        if c.is_uppercase() && last_lower {
            words.push(' ');
        }
        last_lower = c.is_lowercase();
        words.extend(c.to_lowercase());
    }
    words.contains("password")
        || words
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| SECRET_WORDS.contains(&word))
}

fn text_of<D: PageDom>(dom: &D, node: &D::Node) -> String {
    dom.value(node).unwrap_or_else(|| dom.text(node))
}

/// What a person reads for a field: its accessible name (label, `aria-label`, placeholder…), else
/// its `name` or `id`; it names the parameter.
fn label<D: PageDom>(dom: &D, node: &D::Node) -> String {
    let role = aria::role(dom, node);
    let name = aria::name(dom, node, &role);
    [Some(name), dom.attr(node, "name"), dom.attr(node, "id")]
        .into_iter()
        .flatten()
        .map(|v| aria::squash(&v))
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

/// The step's locator: the most robust one naming `node` alone (`locate::best`), else a CSS path
/// from the nearest ancestor with an id; `None` when the element is no longer in the page.
fn target<D: PageDom>(dom: &D, node: &D::Node) -> Option<String> {
    if !dom.is_connected(node) {
        return None;
    }
    if let Some(best) = locate::best(dom, node) {
        return Some(best.to_string());
    }
    css_path(dom, node)
}

/// `#main > form:nth-of-type(2) > button:nth-of-type(1)`: each step the element's place among
/// its parent's children of its tag, up to an ancestor with a plain id or the document element.
fn css_path<D: PageDom>(dom: &D, node: &D::Node) -> Option<String> {
    let mut parts = Vec::new();
    let mut at = node.clone();
    loop {
        let tag = dom.tag_name(&at);
        if let Some(id) = dom
            .attr(&at, "id")
            .filter(|id| {
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            })
            .filter(|id| id.starts_with(|c: char| c.is_ascii_alphabetic()))
        {
            parts.push(format!("#{id}"));
            break;
        }
        let Some(parent) = dom.parent(&at) else {
            parts.push(tag);
            break;
        };
        let siblings = dom
            .query_all(Some(&parent), &format!(":scope > {tag}"))
            .ok()?;
        let nth = siblings.iter().position(|s| dom.same(s, &at))? + 1;
        parts.push(format!("{tag}:nth-of-type({nth})"));
        at = parent;
    }
    parts.reverse();
    Some(parts.join(" > "))
}

#[cfg(test)]
mod tests;
