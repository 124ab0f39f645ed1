//! The steps of a tool's handler, as the runtime executes them. Choices a file makes with one of
//! two fields (`value` or `label`, `text_equals` or `text_contains`, `selector` or `items` with
//! `as`, `selector` or `var`, `fields` only with a JSON `response`) are enums here, so a step the
//! decoder accepted cannot hold both or neither. Files write steps flat (`{"step": "select",
//! "selector": "#size", "label": "Large"}`): `super::decode` reads them, and `Serialize` below
//! writes them back the same way.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// One step of a tool's handler. Strings may hold `{{name}}` templates (see [`crate::template`]).
///
/// Steps that act on an element take it from `selector`, searched inside the current scope (the
/// element a `within`/`for_each` picked; the document at the top), or act on the scope element
/// itself when `selector` is absent. They find it at once and fail with `ELEMENT_NOT_FOUND` when it is
/// not there: waiting is explicit (`wait`, or `within` with `timeout_ms`), so a tool never
/// stalls silently on a selector that a page change broke. ADAPTERS.md is the reference.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Wait until an element matching `selector` is visible / attached / gone.
    Wait {
        selector: String,
        until: WaitUntil,
        /// Defaults to the rest of the call's time.
        timeout_ms: Option<u64>,
    },
    /// A person's click: the full press sequence at the element's visible centre (see ADAPTERS.md),
    /// after checking that it is attached, enabled and not covered. With `navigates`, the click
    /// leads to a new page (a submit button, a link) and the call goes on there (ADAPTERS.md,
    /// "Steps that load a new page").
    Click {
        selector: Option<String>,
        navigates: bool,
    },
    /// A double click (two presses, then `dblclick`), e.g. to start editing an item.
    Dblclick { selector: Option<String> },
    /// The pointer and mouse events of moving the pointer onto the element (CSS `:hover` does not
    /// apply).
    Hover { selector: Option<String> },
    /// Scroll the element into the middle of the view (lazy lists load what becomes visible).
    ScrollIntoView { selector: Option<String> },
    /// Set the text of an input, textarea or contenteditable (or the one inside the element) as
    /// typing would, firing `beforeinput` and `input` (and nothing that commits it: `press` Enter or
    /// `blur` does). Rich editors get it through the browser's editing commands (ADAPTERS.md).
    Fill { selector: String, value: String },
    /// Empty an input, textarea or contenteditable as a person does (select all, delete), firing
    /// `beforeinput`/`input` with `deleteContentBackward`.
    Clear { selector: String },
    /// Type `value` at the caret, keeping the rest (placed first at `at`: `start`, `end`, or
    /// after the `nth` occurrence of a text), as a person types; read back like `fill`.
    Type {
        selector: String,
        value: String,
        at: Option<String>,
        nth: Option<u64>,
    },
    /// Place the caret at `at` (`start`, `end`, or after the `nth` occurrence of a text).
    Caret {
        selector: String,
        at: String,
        nth: Option<u64>,
    },
    /// Select the `nth` occurrence of `value` in a field or editor (all of it without `value`),
    /// for a key, a toolbar button or `type` to act on.
    SelectText {
        selector: String,
        value: Option<String>,
        nth: Option<u64>,
    },
    /// Drag the element onto the one `to` names (a pressed pointer's moves, or HTML5 drag and
    /// drop from a draggable element), which must change the page.
    Drag { selector: String, to: String },
    /// Leave the field (`selector`, or the focused element): `change` if its value changed since
    /// `fill` focused it, then `blur`/`focusout`.
    Blur { selector: Option<String> },
    /// Press a key on `selector` (or the focused element), with the events a real key press fires.
    Press {
        selector: Option<String>,
        key: String,
        /// The key leads to a new page (Enter in a form), as for `click`.
        navigates: bool,
    },
    /// Choose the `<option>` of a `<select>` by its value or its text, firing `input` and `change`.
    Select {
        selector: String,
        option: OptionChoice,
    },
    /// Make a checkbox checked (clicking it only when it is not), and fail if it did not take.
    Check { selector: Option<String> },
    /// Make a checkbox unchecked (clicking it only when it is checked).
    Uncheck { selector: Option<String> },
    /// Put files on the `<input type=file>` matching `selector` as a person's choice in the file
    /// picker does (`input`, `change`), or drop them on any other element (`dragenter`,
    /// `dragover`, `drop` with the files). `files` is `"{{argument}}"`: an argument holding a name
    /// or a list of names in the user's uploads directory, which the server reads and sends with
    /// the call (see [`crate::upload`]).
    Upload { selector: String, files: String },
    /// Read one thing from one element (absent `selector`: the scope element) into `into`.
    Read {
        selector: Option<String>,
        read: Read,
        into: String,
        /// When set, a missing element reads as `null` instead of failing.
        optional: bool,
    },
    /// Read a list of records, one per element matching `selector`, into `into`.
    Extract {
        selector: String,
        fields: BTreeMap<String, Field>,
        into: String,
    },
    /// Run `steps` scoped to the first element matching `selector` whose text (or the text of its
    /// `text_selector` descendant), trimmed, matches `text`. `read` compares something else than
    /// the text, e.g. `attr:data-id`. With `timeout_ms`, waits up to that long for such an element.
    Within {
        selector: String,
        text_selector: Option<String>,
        read: Read,
        text: TextMatch,
        timeout_ms: Option<u64>,
        steps: Vec<Step>,
    },
    /// Run `steps` once per element matching a selector, scoped to it, or once per element of an
    /// array bound to a variable (see [`Loop`]). With `into`: a list with one object per round
    /// holding the variables its steps read (and the item).
    ForEach {
        over: Loop,
        steps: Vec<Step>,
        into: Option<String>,
    },
    /// Run `then` when `condition` holds now, else `otherwise`.
    If {
        condition: Condition,
        then: Vec<Step>,
        otherwise: Vec<Step>,
    },
    /// Run `steps` inside the same-origin `<iframe>` matching `selector` (editors often live in one).
    Frame { selector: String, steps: Vec<Step> },
    /// Load `url` (relative to the page; arguments in it are percent-encoded) and continue with
    /// the next step in the new page once its runtime is ready. Only a top-level step.
    Navigate { url: String },
    /// End the call with this value (a JSON template).
    Return { value: Value },
    /// End the call with a `REFUSED` error saying `message` (a text template): the site refused
    /// what the call asked, in its own words (a form's validation message).
    Fail { message: String },
    /// Answer the page's next `confirm`, `prompt` or leave-page prompt this way (a prompt's `text`
    /// is a text template). Without it, such a dialog is dismissed and the call fails with `DIALOG`.
    Dialog { answer: crate::dialog::DialogAnswer },
    /// GET `url`, a path on the page's own origin (arguments in it are percent-encoded), with the
    /// page's cookies, and store the response, read as `body` says, in `into`.
    Fetch {
        url: String,
        into: String,
        body: FetchBody,
        /// Defaults to the rest of the call's time.
        timeout_ms: Option<u64>,
    },
}

/// Which `<option>` a `select` step chooses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionChoice {
    /// The option whose `value` is this (written `"value"`).
    Value(String),
    /// The option whose text is this (written `"label"`).
    Label(String),
}

/// How a `within` step compares an element's text (written `text_equals` / `text_contains`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextMatch {
    Equals(String),
    Contains(String),
}

/// What a `for_each` step goes through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loop {
    /// Each element matching `selector`; the steps are scoped to it.
    Elements { selector: String },
    /// Each element of the array in one variable (`items`: `"{{tags}}"`), bound to `item_var`
    /// (written `as`) inside the steps; `null` runs them zero times.
    Items { items: String, item_var: String },
}

/// What an `if` step tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    /// An element matches this selector now (written `selector`).
    Element(String),
    /// This variable is set and neither `null`, `false` nor empty (written `var`).
    Var(String),
}

/// How a `fetch` step reads the response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FetchBody {
    /// Parsed as JSON (anything else fails the step).
    Json,
    /// The body as a string (`"response": "text"`).
    Text,
    /// JSON, made a list of records: one per item of the array at the pointer `records`
    /// (default: the whole body), with `fields` (name → JSON pointer), as `extract` makes them
    /// from elements.
    Records {
        records: Option<String>,
        fields: BTreeMap<String, String>,
    },
}

#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    #[default]
    Visible,
    Attached,
    Gone,
}

/// One field of an extracted record.
#[derive(serde::Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Relative to the record's element; absent: the element itself.
    #[serde(default)]
    pub selector: Option<String>,
    #[serde(default)]
    pub read: Read,
}

/// What to read from an element. Written as a string: `text`, `value`, `exists`, `count`,
/// `attr:<name>`, `prop:<name>` or `has_class:<name>`; or, in a `read` step without a selector,
/// the page's own address: `url`, or `url:<n>` for one segment of its path.
#[derive(serde::Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(try_from = "String", into = "String")]
pub enum Read {
    /// The trimmed text content.
    #[default]
    Text,
    /// The trimmed text of the element's own text nodes (not of its child elements).
    OwnText,
    /// A form control's current value.
    Value,
    /// Whether the element exists (never fails).
    Exists,
    /// How many elements the selector matches in the scope (0 when none; never fails). Needs a
    /// selector: a count of the scope itself says nothing.
    Count,
    Attr(String),
    Prop(String),
    HasClass(String),
    /// The page's URL (`location.href`, e.g. where a form's redirect landed), or with a segment
    /// index, that segment of its path (`url:1` of `/ticket/7` is `"7"`; `url:-1` is the last).
    Url(Option<i32>),
}

const READ_KINDS: &str = "text, own_text, value, exists, count, attr:<name>, prop:<name>, has_class:<name>, url or url:<segment>";

impl TryFrom<String> for Read {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        let with_name = |name: &str, make: fn(String) -> Read| {
            if name.is_empty() {
                Err(format!("{s:?} needs a name after the colon"))
            } else {
                Ok(make(name.to_owned()))
            }
        };
        match s.split_once(':') {
            None => match s.as_str() {
                "text" => Ok(Read::Text),
                "own_text" => Ok(Read::OwnText),
                "value" => Ok(Read::Value),
                "exists" => Ok(Read::Exists),
                "count" => Ok(Read::Count),
                "url" => Ok(Read::Url(None)),
                _ => Err(format!("unknown read {s:?}: expected {READ_KINDS}")),
            },
            Some(("attr", name)) => with_name(name, Read::Attr),
            Some(("prop", name)) => with_name(name, Read::Prop),
            Some(("has_class", name)) => with_name(name, Read::HasClass),
            Some(("url", segment)) => segment.parse().map(|n| Read::Url(Some(n))).map_err(|_| {
                format!("{s:?}: expected a path segment's index after \"url:\" (0 the first, -1 the last)")
            }),
            Some(_) => Err(format!("unknown read {s:?}: expected {READ_KINDS}")),
        }
    }
}

impl From<Read> for String {
    fn from(read: Read) -> String {
        match read {
            Read::Text => "text".into(),
            Read::OwnText => "own_text".into(),
            Read::Value => "value".into(),
            Read::Exists => "exists".into(),
            Read::Count => "count".into(),
            Read::Attr(n) => format!("attr:{n}"),
            Read::Prop(n) => format!("prop:{n}"),
            Read::HasClass(n) => format!("has_class:{n}"),
            Read::Url(None) => "url".into(),
            Read::Url(Some(segment)) => format!("url:{segment}"),
        }
    }
}

impl Read {
    /// Whether reading never fails for want of an element (it answers `false` or 0 instead).
    pub fn answers_when_missing(&self) -> bool {
        matches!(self, Read::Exists | Read::Count)
    }
}

impl Step {
    /// Whether the file says this step leads to a new page (`"navigates": true`).
    pub fn navigates(&self) -> bool {
        match self {
            Step::Click { navigates, .. } | Step::Press { navigates, .. } => *navigates,
            _ => false,
        }
    }

    /// Whether the step acts on the page as a person's input does (see [`super::StepKind`]).
    pub fn acts_on_page(&self) -> bool {
        self.kind().acts_on_page()
    }

    /// The steps nested in this one (`within`, `for_each`, `frame`, both branches of `if`).
    pub fn children(&self) -> impl Iterator<Item = &Step> {
        let (a, b, _) = self.parts();
        a.iter().chain(b)
    }

    /// The variable this step itself reads into, if any.
    pub fn assigns(&self) -> Option<&str> {
        self.parts().2
    }

    /// Its nested steps (two lists: `if` has two branches) and the variable it reads into.
    fn parts(&self) -> (&[Step], &[Step], Option<&str>) {
        match self {
            Step::Within { steps, .. } | Step::Frame { steps, .. } => (steps, &[], None),
            Step::ForEach { steps, into, .. } => (steps, &[], into.as_deref()),
            Step::If {
                then, otherwise, ..
            } => (then, otherwise, None),
            Step::Read { into, .. } | Step::Extract { into, .. } | Step::Fetch { into, .. } => {
                (&[], &[], Some(into))
            }
            Step::Wait { .. }
            | Step::Click { .. }
            | Step::Dblclick { .. }
            | Step::Hover { .. }
            | Step::ScrollIntoView { .. }
            | Step::Fill { .. }
            | Step::Clear { .. }
            | Step::Type { .. }
            | Step::Caret { .. }
            | Step::SelectText { .. }
            | Step::Drag { .. }
            | Step::Blur { .. }
            | Step::Press { .. }
            | Step::Select { .. }
            | Step::Check { .. }
            | Step::Uncheck { .. }
            | Step::Upload { .. }
            | Step::Navigate { .. }
            | Step::Return { .. }
            | Step::Fail { .. }
            | Step::Dialog { .. } => (&[], &[], None),
        }
    }
}

/// The variables `steps` (and the steps nested in them) read into, in order, without repeats.
pub fn assigned_names(steps: &[Step]) -> Vec<&str> {
    fn collect<'a>(steps: &'a [Step], out: &mut Vec<&'a str>) {
        for step in steps {
            for child in step.children() {
                collect(std::slice::from_ref(child), out);
            }
            if let Some(name) = step.assigns()
                && !out.contains(&name)
            {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    collect(steps, &mut out);
    out
}

/// Writes a step flat, as files have it: `step` first, then the fields it has.
impl Serialize for Step {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("step", self.kind().name())?;
        let optional_selector =
            |map: &mut S::SerializeMap, selector: &Option<String>| match selector {
                Some(selector) => map.serialize_entry("selector", selector),
                None => Ok(()),
            };
        match self {
            Step::Wait {
                selector,
                until,
                timeout_ms,
            } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("until", until)?;
                if let Some(timeout_ms) = timeout_ms {
                    map.serialize_entry("timeout_ms", timeout_ms)?;
                }
            }
            Step::Click {
                selector: s,
                navigates,
            } => {
                optional_selector(&mut map, s)?;
                if *navigates {
                    map.serialize_entry("navigates", navigates)?;
                }
            }
            Step::Dblclick { selector: s }
            | Step::Hover { selector: s }
            | Step::ScrollIntoView { selector: s }
            | Step::Blur { selector: s }
            | Step::Check { selector: s }
            | Step::Uncheck { selector: s } => optional_selector(&mut map, s)?,
            Step::Fill { selector, value } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("value", value)?;
            }
            Step::Clear { selector } => map.serialize_entry("selector", selector)?,
            Step::Type {
                selector,
                value,
                at,
                nth,
            } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("value", value)?;
                if let Some(at) = at {
                    map.serialize_entry("at", at)?;
                }
                if let Some(nth) = nth {
                    map.serialize_entry("nth", nth)?;
                }
            }
            Step::Caret { selector, at, nth } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("at", at)?;
                if let Some(nth) = nth {
                    map.serialize_entry("nth", nth)?;
                }
            }
            Step::Drag { selector, to } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("to", to)?;
            }
            Step::SelectText {
                selector,
                value,
                nth,
            } => {
                map.serialize_entry("selector", selector)?;
                if let Some(value) = value {
                    map.serialize_entry("value", value)?;
                }
                if let Some(nth) = nth {
                    map.serialize_entry("nth", nth)?;
                }
            }
            Step::Press {
                selector: s,
                key,
                navigates,
            } => {
                optional_selector(&mut map, s)?;
                map.serialize_entry("key", key)?;
                if *navigates {
                    map.serialize_entry("navigates", navigates)?;
                }
            }
            Step::Select { selector, option } => {
                map.serialize_entry("selector", selector)?;
                match option {
                    OptionChoice::Value(value) => map.serialize_entry("value", value)?,
                    OptionChoice::Label(label) => map.serialize_entry("label", label)?,
                }
            }
            Step::Read {
                selector: s,
                read,
                into,
                optional,
            } => {
                optional_selector(&mut map, s)?;
                map.serialize_entry("read", read)?;
                map.serialize_entry("into", into)?;
                if *optional {
                    map.serialize_entry("optional", optional)?;
                }
            }
            Step::Extract {
                selector,
                fields,
                into,
            } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("fields", fields)?;
                map.serialize_entry("into", into)?;
            }
            Step::Within {
                selector,
                text_selector,
                read,
                text,
                timeout_ms,
                steps,
            } => {
                map.serialize_entry("selector", selector)?;
                if let Some(text_selector) = text_selector {
                    map.serialize_entry("text_selector", text_selector)?;
                }
                map.serialize_entry("read", read)?;
                match text {
                    TextMatch::Equals(t) => map.serialize_entry("text_equals", t)?,
                    TextMatch::Contains(t) => map.serialize_entry("text_contains", t)?,
                }
                if let Some(timeout_ms) = timeout_ms {
                    map.serialize_entry("timeout_ms", timeout_ms)?;
                }
                map.serialize_entry("steps", steps)?;
            }
            Step::ForEach { over, steps, into } => {
                match over {
                    Loop::Elements { selector } => map.serialize_entry("selector", selector)?,
                    Loop::Items { items, item_var } => {
                        map.serialize_entry("items", items)?;
                        map.serialize_entry("as", item_var)?;
                    }
                }
                map.serialize_entry("steps", steps)?;
                if let Some(into) = into {
                    map.serialize_entry("into", into)?;
                }
            }
            Step::If {
                condition,
                then,
                otherwise,
            } => {
                match condition {
                    Condition::Element(selector) => map.serialize_entry("selector", selector)?,
                    Condition::Var(var) => map.serialize_entry("var", var)?,
                }
                map.serialize_entry("then", then)?;
                map.serialize_entry("else", otherwise)?;
            }
            Step::Frame { selector, steps } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("steps", steps)?;
            }
            Step::Upload { selector, files } => {
                map.serialize_entry("selector", selector)?;
                map.serialize_entry("files", files)?;
            }
            Step::Navigate { url } => map.serialize_entry("url", url)?,
            Step::Return { value } => map.serialize_entry("value", value)?,
            Step::Fail { message } => map.serialize_entry("message", message)?,
            Step::Dialog { answer } => match answer {
                crate::dialog::DialogAnswer::Accept { text } => {
                    map.serialize_entry("answer", "accept")?;
                    if let Some(text) = text {
                        map.serialize_entry("text", text)?;
                    }
                }
                crate::dialog::DialogAnswer::Dismiss => map.serialize_entry("answer", "dismiss")?,
            },
            Step::Fetch {
                url,
                into,
                body,
                timeout_ms,
            } => {
                map.serialize_entry("url", url)?;
                map.serialize_entry("into", into)?;
                match body {
                    FetchBody::Json => {}
                    FetchBody::Text => map.serialize_entry("response", "text")?,
                    FetchBody::Records { records, fields } => {
                        if let Some(records) = records {
                            map.serialize_entry("records", records)?;
                        }
                        map.serialize_entry("fields", fields)?;
                    }
                }
                if let Some(timeout_ms) = timeout_ms {
                    map.serialize_entry("timeout_ms", timeout_ms)?;
                }
            }
        }
        map.end()
    }
}
