//! The page tools (`page_snapshot`, `page_act`, `page_read`, `page_find`, `page_wait`): the closed
//! set of operations that work on any page, with no adapter. One source of truth for the server
//! (the tools' specs, the check of a call's arguments) and the page runtime (which reads the same
//! arguments into a [`PageOp`] again, with the same words when they are wrong).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::TabId;
use crate::args;
use crate::dialog::{self, DialogAnswer};

mod wire;
pub use wire::WireOp;

pub const SNAPSHOT: &str = "page_snapshot";
pub const ACT: &str = "page_act";
pub const READ: &str = "page_read";
pub const FIND: &str = "page_find";
pub const WAIT: &str = "page_wait";

/// The page tools' names, in the order they are listed.
pub const PAGE_TOOLS: &[&str] = &[SNAPSHOT, ACT, READ, FIND, WAIT];

/// How much text a snapshot or a read returns at most when the call does not say.
pub const DEFAULT_MAX_CHARS: usize = 12_000;
/// The bounds of `max_chars`.
pub const MIN_MAX_CHARS: usize = 200;
pub const MAX_MAX_CHARS: usize = 100_000;
/// How long `page_wait` waits when the call does not say, and at most.
pub const DEFAULT_WAIT_MS: u64 = 5_000;
pub const MAX_WAIT_MS: u64 = 30_000;

/// How long a cross-origin frame gets to answer its part of a snapshot (then it is shown as not
/// answering): well under a call's own deadline, so a frame that hangs never hangs the call.
pub const FRAME_ANSWER_MS: u64 = 2_000;

/// Whether `name` is a page tool's.
pub fn is_page_tool(name: &str) -> bool {
    PAGE_TOOLS.contains(&name)
}

/// A browser's frame id: Chrome's fit in 32 bits, Firefox's do not (`17179869185`), and the
/// browser hands them to the extension as JS numbers, exact up to 2^53.
pub type FrameId = u64;

/// A ref from a snapshot: element `n` of the tab's top document (`e12`), or of the cross-origin
/// frame whose Chrome frame id is `frame` (`f3e12`), whose own runtime gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ref {
    /// 0: the top document (the frame id of a tab's top frame).
    pub frame: FrameId,
    pub n: u32,
}

impl Ref {
    pub fn top(n: u32) -> Ref {
        Ref { frame: 0, n }
    }
}

impl std::fmt::Display for Ref {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.frame != 0 {
            write!(f, "f{}", self.frame)?;
        }
        write!(f, "e{}", self.n)
    }
}

/// The element an operation is about: a ref from a snapshot (`e12`, `f3e12`) or a CSS selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Ref(Ref),
    Selector(String),
}

/// What `page_act` does to its element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Click,
    Dblclick,
    Hover,
    Fill(String),
    Clear,
    /// Chooses the option with this value or text.
    Select(String),
    Check,
    Uncheck,
    /// A key or chord (`Enter`, `Shift+Tab`, `Mod+a`), checked by [`crate::keys::parse_chord`].
    Press(String),
    /// Scrolls the element into view (the page, for a scroll without target, by one screen).
    Scroll,
    /// Puts these files (names in the user's uploads directory, which the server reads and sends
    /// with the call: [`crate::upload`]) on a file input, or drops them on the element.
    Upload(Vec<String>),
    /// Inserts text at the caret (placed first when `at` is given), keeping the rest.
    Type {
        text: String,
        at: Option<Caret>,
    },
    /// Places the caret in a field or editor.
    Caret(Caret),
    /// Selects text in a field or editor: all of it (`None`), or an occurrence of a text.
    SelectText(Option<TextAt>),
    /// Drags the element onto another (a pointer drag, and HTML5 drag and drop where the source
    /// is draggable).
    Drag(Target),
}

/// Where a caret goes in a field or editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caret {
    Start,
    End,
    /// Right after an occurrence of a text.
    After(TextAt),
}

/// The `nth` (from 1) occurrence of `text` in a field or editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextAt {
    pub text: String,
    pub nth: usize,
}

impl Caret {
    /// `at` as `page_act` takes it: `start`, `end`, or the text to put the caret after.
    pub fn parse(at: &str, nth: usize) -> Caret {
        match at {
            "start" => Caret::Start,
            "end" => Caret::End,
            text => Caret::After(TextAt {
                text: text.to_owned(),
                nth,
            }),
        }
    }
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Click => "click",
            Action::Dblclick => "dblclick",
            Action::Hover => "hover",
            Action::Fill(_) => "fill",
            Action::Clear => "clear",
            Action::Select(_) => "select",
            Action::Check => "check",
            Action::Uncheck => "uncheck",
            Action::Press(_) => "press",
            Action::Scroll => "scroll",
            Action::Upload(_) => "upload",
            Action::Type { .. } => "type",
            Action::Caret(_) => "caret",
            Action::SelectText(_) => "select_text",
            Action::Drag(_) => "drag",
        }
    }
}

const ACTIONS: &[&str] = &[
    "click",
    "dblclick",
    "hover",
    "fill",
    "clear",
    "select",
    "check",
    "uncheck",
    "press",
    "scroll",
    "upload",
    "type",
    "caret",
    "select_text",
    "drag",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFormat {
    Text,
    Markdown,
}

/// `page_read`'s formats, by name.
const READ_FORMATS: &[&str] = &["text", "markdown"];

impl ReadFormat {
    pub fn name(self) -> &'static str {
        match self {
            ReadFormat::Text => "text",
            ReadFormat::Markdown => "markdown",
        }
    }
}

/// What `page_find` looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindBy {
    /// The snapshot's lines that match.
    Lines(LineMatch),
    /// The snapshot's element `eN`: the most robust locator that names it alone
    /// (`bridge::locator`), for an adapter's step.
    Ref(Ref),
}

/// Which snapshot lines `page_find` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineMatch {
    /// Elements whose accessible name or text contains this (case-insensitive).
    Text(String),
    /// Elements of this role, optionally whose name contains `name`.
    Role { role: String, name: Option<String> },
}

/// What `page_wait` waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitFor {
    Text(String),
    Element(Target),
}

/// One call of a page tool, its arguments read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOp {
    Snapshot {
        within: Option<Target>,
        max_chars: usize,
        cursor: usize,
    },
    Act {
        target: Target,
        action: Action,
        /// Answer with the whole snapshot after the act, not only what changed.
        snapshot: bool,
        /// How to answer a dialog the act makes the page open (see [`crate::dialog`]).
        dialog: Option<DialogAnswer>,
    },
    Read {
        within: Option<Target>,
        format: ReadFormat,
        max_chars: usize,
        cursor: usize,
    },
    Find {
        by: FindBy,
    },
    Wait {
        what: WaitFor,
        gone: bool,
        timeout_ms: u64,
    },
}

impl PageOp {
    /// A `page_snapshot` with no arguments: the whole page, from its start, in the default budget.
    pub fn whole_page() -> PageOp {
        PageOp::Snapshot {
            within: None,
            max_chars: DEFAULT_MAX_CHARS,
            cursor: 0,
        }
    }

    /// The page tool it is a call of.
    pub fn tool(&self) -> &'static str {
        match self {
            PageOp::Snapshot { .. } => SNAPSHOT,
            PageOp::Act { .. } => ACT,
            PageOp::Read { .. } => READ,
            PageOp::Find { .. } => FIND,
            PageOp::Wait { .. } => WAIT,
        }
    }

    /// Whether the operation may change the page.
    pub fn acts(&self) -> bool {
        matches!(self, PageOp::Act { .. })
    }

    /// How the call said to answer the page's next dialog.
    pub fn dialog_answer(&self) -> Option<&DialogAnswer> {
        match self {
            PageOp::Act { dialog, .. } => dialog.as_ref(),
            PageOp::Snapshot { .. }
            | PageOp::Read { .. }
            | PageOp::Find { .. }
            | PageOp::Wait { .. } => None,
        }
    }

    /// The files the operation puts on the page (names in the uploads directory), if any.
    pub fn upload_files(&self) -> Option<&[String]> {
        match self {
            PageOp::Act {
                action: Action::Upload(files),
                ..
            } => Some(files),
            PageOp::Act { .. }
            | PageOp::Snapshot { .. }
            | PageOp::Read { .. }
            | PageOp::Find { .. }
            | PageOp::Wait { .. } => None,
        }
    }

    /// The ref the operation names, if any (the server routes a call by it).
    pub fn named_ref(&self) -> Option<Ref> {
        let target = match self {
            PageOp::Snapshot { within, .. } | PageOp::Read { within, .. } => within.as_ref(),
            PageOp::Act { target, .. } => Some(target),
            PageOp::Wait {
                what: WaitFor::Element(target),
                ..
            } => Some(target),
            PageOp::Find { by: FindBy::Ref(n) } => return Some(*n),
            PageOp::Find { .. } | PageOp::Wait { .. } => None,
        };
        match target {
            Some(Target::Ref(n)) => Some(*n),
            _ => None,
        }
    }
}

/// A page tool's answer, paired with [`PageOp`]: the page builds it ([`PageAnswer::into_value`],
/// written out by hand so the page's wasm carries no serializer for it); the server reads it,
/// with what was added on the way, as a [`PageReply`], and then reads fields, never string keys.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PageAnswer {
    /// The document the answer's refs belong to.
    pub doc: String,
    pub url: String,
    pub title: String,
    /// What the model reads.
    pub text: String,
    /// The refs the text shows (`e12`, `f3e12`).
    pub refs: Vec<String>,
    /// The cross-origin frame whose runtime answered (Chrome's frame id; 0: the top document).
    #[serde(skip_serializing_if = "is_top")]
    pub frame: FrameId,
    /// The document each cross-origin frame the answer showed was on, by Chrome frame id.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "frame_documents"
    )]
    pub frames: BTreeMap<FrameId, String>,
    /// The URL an act set loading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaving: Option<String>,
    /// What the page asks a person for that a model should not type (issue 28: `password`,
    /// `one-time code`, `CAPTCHA`), said by a whole page's first snapshot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub asks: Vec<String>,
}

/// A page tool's answer as the server receives it: the page's [`PageAnswer`], and what was added
/// on the way — the tab (by the page's runtime), where an act's load landed (by the hub), the
/// dialogs the call met (by [`dialog::settle`]; [`dialog::lines`] words them).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct PageReply {
    #[serde(flatten)]
    pub page: PageAnswer,
    #[serde(default)]
    pub tab: Option<TabId>,
    #[serde(default)]
    pub landed: Option<String>,
    #[serde(default)]
    pub dialogs: Option<Value>,
}

fn is_top(frame: &FrameId) -> bool {
    *frame == 0
}

/// Frame ids are JSON object keys, so text: read through text, because a [`PageReply`] reads
/// its [`PageAnswer`] flattened, and serde's flattening keeps keys as text for every field.
fn frame_documents<'de, D: serde::Deserializer<'de>>(
    frames: D,
) -> Result<BTreeMap<FrameId, String>, D::Error> {
    let by_text = BTreeMap::<String, String>::deserialize(frames)?;
    by_text
        .into_iter()
        .map(|(frame, doc)| match frame.parse() {
            Ok(frame) => Ok((frame, doc)),
            Err(_) => Err(serde::de::Error::custom(format!(
                "frame id {frame:?} is not a number"
            ))),
        })
        .collect()
}

impl PageAnswer {
    /// The answer as it travels: the same JSON as its `Serialize` makes (a test holds them
    /// together). Inlined: the page is its one caller, and its wasm is then no larger than when
    /// it built this JSON in place.
    #[inline(always)]
    pub fn into_value(self) -> Value {
        let mut answer = json!({"doc": self.doc, "url": self.url, "title": self.title,
                                "text": self.text, "refs": self.refs});
        if self.frame != 0 {
            answer["frame"] = self.frame.into();
        }
        if !self.frames.is_empty() {
            answer["frames"] = json!(self.frames);
        }
        if let Some(to) = self.leaving {
            answer["leaving"] = to.into();
        }
        if !self.asks.is_empty() {
            answer["asks"] = json!(self.asks);
        }
        answer
    }
}

/// A ref as the model sees it.
pub fn ref_name(r: Ref) -> String {
    r.to_string()
}

/// Reads a ref (`e12`, or `f3e12` in frame 3); `None` when it is not one.
pub fn parse_ref(text: &str) -> Option<Ref> {
    let text = text.trim();
    let (frame, element) = match text.strip_prefix('f') {
        Some(rest) => {
            let (frame, element) = rest.split_once('e')?;
            (positive(frame)?, element)
        }
        None => (0, text.strip_prefix('e')?),
    };
    Some(Ref {
        frame,
        n: positive(element)?,
    })
}

/// A number written without sign or leading zero, above 0 (a frame id's or an element's).
fn positive<N: std::str::FromStr>(digits: &str) -> Option<N> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The schema of a page tool that acts on a target (`ref` or `selector`) and takes `properties`
/// besides: every page tool but `page_find`.
fn targeted(properties: Value, required: &[&str]) -> Value {
    let Value::Object(properties) = properties else {
        unreachable!("the properties are written as a json! object")
    };
    let mut all = Map::new();
    all.insert(
        "ref".into(),
        json!({"type": "string", "description": "e.g. e12, f3e12"}),
    );
    all.insert(
        "selector".into(),
        json!({"type": "string", "description": "CSS, or role=button[name=\"Save\"], text=…, label=…"}),
    );
    all.extend(properties);
    object(Value::Object(all), required)
}

/// The input schema of page tool `name` (without `tab_id`, which the server adds to every
/// browser tool; what else the server lists of a page tool is its own, `mcp/page.rs`).
pub fn input_schema(name: &str) -> Option<Value> {
    let budget = json!({"type": "integer", "minimum": MIN_MAX_CHARS, "maximum": MAX_MAX_CHARS,
                        "description": format!("default {DEFAULT_MAX_CHARS}")});
    let cursor = json!({"type": "integer", "minimum": 0, "description": "from a truncated answer"});
    Some(match name {
        SNAPSHOT => targeted(json!({"max_chars": budget, "cursor": cursor}), &[]),
        ACT => targeted(
            json!({
                "action": {"type": "string", "enum": ACTIONS},
                "value": {"type": "string", "description": "fill, type: text; select: option value or text; select_text: text (default all)"},
                "to": {"type": "string", "description": "drag: target ref or selector"},
                "at": {"type": "string", "description": "caret, type: start, end, or text to go after"},
                "nth": {"type": "integer", "minimum": 1, "description": "which occurrence (default 1)"},
                "key": {"type": "string", "description": "press: Enter, Shift+Tab, Mod+a…"},
                "files": {"type": "array", "items": {"type": "string"},
                          "description": "upload: file names in the uploads dir"},
                "snapshot": {"type": "boolean", "description": "answer with the full snapshot (of the page it loads, if it loads one)"},
                "dialog": {"type": "string", "enum": dialog::ANSWERS,
                           "description": "for a dialog it opens (default: dismiss)"},
                "dialog_text": {"type": "string", "description": "prompt's answer (with accept)"},
            }),
            &["action"],
        ),
        READ => targeted(
            json!({
                "format": {"type": "string", "enum": READ_FORMATS},
                "max_chars": budget,
                "cursor": cursor,
            }),
            &[],
        ),
        FIND => object(
            json!({
                "text": {"type": "string"},
                "role": {"type": "string", "description": "e.g. button"},
                "name": {"type": "string"},
                "ref": {"type": "string", "description": "its robust locator, for an adapter"},
            }),
            &[],
        ),
        WAIT => targeted(
            json!({
                "text": {"type": "string"},
                "gone": {"type": "boolean", "description": "wait for it to disappear"},
                "timeout_ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS},
            }),
            &[],
        ),
        _ => return None,
    })
}

fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({"type": "object", "properties": properties,
                            "additionalProperties": false});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// Reads the arguments of a call of page tool `tool` (`tab_id` already taken out). The error
/// names what was wrong, for an `INVALID_ARGS` failure.
pub fn parse(tool: &str, args: Value) -> Result<PageOp, String> {
    let schema = input_schema(tool).ok_or_else(|| format!("{tool} is not a page tool"))?;
    let args = args::checked(&schema, args).map_err(|e| e.to_string())?;
    let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
    let number = |name: &str| args.get(name).and_then(Value::as_u64);
    let max_chars = number("max_chars").map_or(DEFAULT_MAX_CHARS, |n| {
        usize::try_from(n)
            .unwrap_or(MAX_MAX_CHARS)
            .clamp(MIN_MAX_CHARS, MAX_MAX_CHARS)
    });
    let cursor = number("cursor").map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let target = || -> Result<Option<Target>, String> {
        match (text("ref"), text("selector")) {
            (Some(_), Some(_)) => Err("give `ref` or `selector`, not both".into()),
            (Some(r), None) => parse_ref(&r).map(|n| Some(Target::Ref(n))).ok_or_else(|| {
                format!("`ref` {r:?} is not a ref from a snapshot (like e12 or f3e12)")
            }),
            (None, Some(s)) if s.trim().is_empty() => Err("`selector` is empty".into()),
            (None, Some(s)) => Ok(Some(Target::Selector(s))),
            (None, None) => Ok(None),
        }
    };
    Ok(match tool {
        SNAPSHOT => PageOp::Snapshot {
            within: target()?,
            max_chars,
            cursor,
        },
        READ => PageOp::Read {
            within: target()?,
            format: match text("format").as_deref() {
                Some("markdown") => ReadFormat::Markdown,
                _ => ReadFormat::Text,
            },
            max_chars,
            cursor,
        },
        ACT => {
            let action = text("action").unwrap_or_default();
            let value = text("value");
            let nth = number("nth").map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX));
            let needs = |what: &str| format!("`{action}` needs `{what}`");
            let action = match action.as_str() {
                "click" => Action::Click,
                "dblclick" => Action::Dblclick,
                "hover" => Action::Hover,
                "fill" => Action::Fill(value.clone().ok_or_else(|| needs("value"))?),
                "clear" => Action::Clear,
                "select" => Action::Select(value.clone().ok_or_else(|| needs("value"))?),
                "check" => Action::Check,
                "uncheck" => Action::Uncheck,
                "press" => {
                    let key = text("key").ok_or_else(|| needs("key"))?;
                    crate::keys::parse_chord(&key).map_err(|e| format!("`key`: {e}"))?;
                    Action::Press(key)
                }
                "scroll" => Action::Scroll,
                "upload" => {
                    let files = args.get("files").ok_or_else(|| needs("files"))?;
                    Action::Upload(
                        crate::upload::names_in(files).map_err(|e| format!("`files`: {e}"))?,
                    )
                }
                "type" => Action::Type {
                    text: value.clone().ok_or_else(|| needs("value"))?,
                    at: text("at").map(|at| Caret::parse(&at, nth)),
                },
                "caret" => {
                    Action::Caret(Caret::parse(&text("at").ok_or_else(|| needs("at"))?, nth))
                }
                "select_text" => Action::SelectText(value.clone().map(|text| TextAt { text, nth })),
                "drag" => {
                    let to = text("to").ok_or_else(|| needs("to"))?;
                    Action::Drag(match parse_ref(&to) {
                        Some(r) => Target::Ref(r),
                        None => Target::Selector(to),
                    })
                }
                other => return Err(format!("unknown action {other:?}")),
            };
            if args.contains_key("to") && !matches!(action, Action::Drag(_)) {
                return Err(format!("`{}` takes no `to`", action.name()));
            }
            if args.contains_key("at") && !matches!(action, Action::Type { .. } | Action::Caret(_))
            {
                return Err(format!("`{}` takes no `at`", action.name()));
            }
            if args.contains_key("files") && !matches!(action, Action::Upload(_)) {
                return Err(format!("`{}` takes no `files`", action.name()));
            }
            if value.is_some()
                && !matches!(
                    action,
                    Action::Fill(_)
                        | Action::Select(_)
                        | Action::Type { .. }
                        | Action::SelectText(_)
                )
            {
                return Err(format!("`{}` takes no `value`", action.name()));
            }
            let target = match target()? {
                Some(target) => target,
                // Keys go to the focused element, scrolling to the page.
                None if matches!(action, Action::Press(_) | Action::Scroll) => {
                    Target::Selector(":focus".into())
                }
                None => return Err(format!("`{}` needs `ref` or `selector`", action.name())),
            };
            let dialog = match (text("dialog"), text("dialog_text")) {
                (None, None) => None,
                (None, Some(_)) => return Err("`dialog_text` goes with dialog: \"accept\"".into()),
                (Some(answer), text) => {
                    Some(DialogAnswer::parse(&answer, text).map_err(|e| format!("`dialog`: {e}"))?)
                }
            };
            PageOp::Act {
                target,
                action,
                snapshot: args
                    .get("snapshot")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                dialog,
            }
        }
        FIND => PageOp::Find {
            by: match (text("text"), text("role"), text("name"), text("ref")) {
                (Some(t), None, None, None) if !t.trim().is_empty() => {
                    FindBy::Lines(LineMatch::Text(t))
                }
                (None, Some(role), name, None) => FindBy::Lines(LineMatch::Role {
                    role: role.trim().to_ascii_lowercase(),
                    name,
                }),
                (None, None, None, Some(r)) => match parse_ref(&r) {
                    Some(n) => FindBy::Ref(n),
                    None => return Err(format!("{r:?} is not a ref (refs look like e12)")),
                },
                _ => {
                    return Err("give `text`, or `role` (and optionally `name`), or `ref`".into());
                }
            },
        },
        WAIT => PageOp::Wait {
            what: match (text("text"), target()?) {
                (Some(t), None) if !t.is_empty() => WaitFor::Text(t),
                (None, Some(target)) => WaitFor::Element(target),
                _ => return Err("give one of `text`, `ref` or `selector`".into()),
            },
            gone: args.get("gone").and_then(Value::as_bool).unwrap_or(false),
            timeout_ms: number("timeout_ms")
                .unwrap_or(DEFAULT_WAIT_MS)
                .min(MAX_WAIT_MS),
        },
        _ => unreachable!("spec() knows only the page tools"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_page_answer_travels_as_its_serialize_says_and_reads_back_whole() {
        let full = super::PageAnswer {
            doc: "d".into(),
            url: "http://a.test/".into(),
            title: "T".into(),
            text: "clicked e1\n".into(),
            refs: vec!["e1".into(), "f7e2".into()],
            frame: 7,
            frames: [(9, "fd9".to_owned())].into_iter().collect(),
            leaving: Some("http://a.test/next".into()),
            asks: vec!["password".into()],
        };
        for answer in [full.clone(), super::PageAnswer::default()] {
            let value = answer.clone().into_value();
            assert_eq!(value, serde_json::to_value(&answer).unwrap());
            assert_eq!(
                serde_json::from_value::<super::PageAnswer>(value).unwrap(),
                answer
            );
        }
        // With what the runtime, the hub and the dialogs added on the way.
        let mut value = full.clone().into_value();
        value["tab"] = 3.into();
        value["landed"] = "http://b.test/".into();
        value["dialogs"] = serde_json::json!([{"kind": "alert"}]);
        let reply: super::PageReply = serde_json::from_value(value).unwrap();
        assert_eq!(
            reply,
            super::PageReply {
                page: full,
                tab: Some(3),
                landed: Some("http://b.test/".into()),
                dialogs: Some(serde_json::json!([{"kind": "alert"}])),
            }
        );
    }

    use super::*;

    #[test]
    fn refs_are_short_and_strict() {
        assert_eq!(parse_ref("e12"), Some(Ref::top(12)));
        assert_eq!(ref_name(Ref::top(12)), "e12");
        let framed = Ref { frame: 3, n: 12 };
        assert_eq!(parse_ref("f3e12"), Some(framed));
        assert_eq!(ref_name(framed), "f3e12");
        for bad in [
            "12", "e", "e01", "ex", "E1", "e1.5", "e-1", "f0e1", "f3", "fe1", "f03e1", "f3e0",
            "f3x1", "g3e1",
        ] {
            assert_eq!(parse_ref(bad), None, "{bad}");
        }
        // Firefox's frame ids pass 32 bits.
        let firefox = Ref {
            frame: 17_179_869_185,
            n: 4,
        };
        assert_eq!(parse_ref("f17179869185e4"), Some(firefox));
        assert_eq!(ref_name(firefox), "f17179869185e4");
    }

    #[test]
    fn every_tool_has_a_closed_object_schema() {
        for name in PAGE_TOOLS {
            let schema = input_schema(name).expect("every page tool has a schema");
            assert_eq!(schema["type"], "object", "{name}");
            assert_eq!(schema["additionalProperties"], false);
            assert!(is_page_tool(name));
        }
        assert!(!is_page_tool("page_nope"));
    }

    #[test]
    fn the_whole_page_is_a_snapshot_called_with_no_arguments() {
        assert_eq!(parse(SNAPSHOT, json!({})), Ok(PageOp::whole_page()));
    }

    #[test]
    fn act_reads_its_action_and_refuses_what_does_not_fit() {
        assert_eq!(
            parse(ACT, json!({"ref": "e3", "action": "fill", "value": "x"})),
            Ok(PageOp::Act {
                target: Target::Ref(Ref::top(3)),
                action: Action::Fill("x".into()),
                snapshot: false,
                dialog: None,
            })
        );
        let press = parse(ACT, json!({"action": "press", "key": "Shift+Enter"})).unwrap();
        assert_eq!(
            press,
            PageOp::Act {
                target: Target::Selector(":focus".into()),
                action: Action::Press("Shift+Enter".into()),
                snapshot: false,
                dialog: None,
            }
        );
        let accept = parse(
            ACT,
            json!({"ref": "e3", "action": "click", "dialog": "accept", "dialog_text": "Ann"}),
        )
        .unwrap();
        assert_eq!(
            accept.dialog_answer(),
            Some(&DialogAnswer::Accept {
                text: Some("Ann".into())
            })
        );
        let err = |args: Value| parse(ACT, args).unwrap_err();
        assert!(err(json!({"ref": "e3", "action": "fill"})).contains("needs `value`"));
        assert!(err(json!({"ref": "e3", "action": "click", "value": "x"})).contains("no `value`"));
        assert!(err(json!({"ref": "x3", "action": "click"})).contains("not a ref"));
        assert!(err(json!({"ref": "e3", "selector": "a", "action": "click"})).contains("not both"));
        assert!(err(json!({"action": "click"})).contains("needs `ref` or `selector`"));
        assert!(err(json!({"ref": "e3", "action": "press", "key": "Hyper+q"})).contains("`key`"));
        assert!(err(json!({"ref": "e3", "action": "explode"})).contains("action"));
        let upload = parse(
            ACT,
            json!({"ref": "e3", "action": "upload", "files": ["a.pdf", "b.png"]}),
        );
        assert_eq!(
            upload.unwrap().upload_files(),
            Some(&["a.pdf".to_owned(), "b.png".to_owned()][..])
        );
        assert!(err(json!({"ref": "e3", "action": "upload"})).contains("needs `files`"));
        assert!(
            err(json!({"ref": "e3", "action": "upload", "files": []})).contains("at least one")
        );
        assert!(
            err(json!({"ref": "e3", "action": "click", "files": ["a"]})).contains("no `files`")
        );
        assert!(
            err(json!({"action": "upload", "files": ["a"]})).contains("needs `ref` or `selector`")
        );
        assert!(err(json!({"ref": "e3", "action": "click", "bogus": 1})).contains("bogus"));
        assert!(
            err(json!({"ref": "e3", "action": "click", "dialog_text": "x"})).contains("goes with")
        );
        assert!(
            err(json!({"ref": "e3", "action": "click", "dialog": "dismiss", "dialog_text": "x"}))
                .contains("`dialog`")
        );
        assert!(err(json!({"ref": "e3", "action": "click", "dialog": "ok"})).contains("dialog"));
    }

    #[test]
    fn budgets_and_waits_are_bounded() {
        let PageOp::Snapshot { max_chars, .. } = parse(SNAPSHOT, json!({})).unwrap() else {
            panic!()
        };
        assert_eq!(max_chars, DEFAULT_MAX_CHARS);
        let PageOp::Snapshot { max_chars, .. } = parse(SNAPSHOT, json!({"max_chars": 5})).unwrap()
        else {
            panic!()
        };
        assert_eq!(max_chars, MIN_MAX_CHARS);
        let PageOp::Wait { timeout_ms, .. } = parse(WAIT, json!({"text": "x"})).unwrap() else {
            panic!()
        };
        assert_eq!(timeout_ms, DEFAULT_WAIT_MS);
        assert!(parse(WAIT, json!({})).is_err());
        assert!(parse(FIND, json!({})).is_err());
        assert_eq!(
            parse(FIND, json!({"role": "Button", "name": "Save"})),
            Ok(PageOp::Find {
                by: FindBy::Lines(LineMatch::Role {
                    role: "button".into(),
                    name: Some("Save".into())
                })
            })
        );
    }
}
