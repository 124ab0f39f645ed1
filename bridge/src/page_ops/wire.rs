//! A page tool's operation as it travels (issue 27): the server reads a call's arguments once
//! into a [`PageOp`] ([`super::parse`]) and sends that, encoded by [`WireOp::of`]; the worker
//! passes it on without decoding it (it reads only its tool); the page decodes it with
//! [`WireOp::decode`], with no second check of the client's arguments. The encoding and its
//! decoding sit side by side, held together by a test. Both are written by hand, field by field
//! through [`crate::tagged`], so the page's wasm carries no derived deserializer for them.
//!
//! The encoding: an object tagged by `"tool"` (the page tool's name), a target as `{"ref": "e3"}`
//! or `{"selector": "…"}`, an action tagged by `"do"`, a caret by `"at"`, a dialog's answer as
//! the page's dialog shim reads it ([`DialogAnswer::to_plan`]).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    ACT, Action, Caret, FIND, FindBy, LineMatch, PageOp, READ, READ_FORMATS, ReadFormat, SNAPSHOT,
    Target, TextAt, WAIT, WaitFor, parse_ref,
};
use crate::dialog::DialogAnswer;
use crate::tagged::{self, Fields};

/// A [`PageOp`], encoded for the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WireOp(Value);

type Decoded<T> = Result<T, serde_json::Error>;

impl WireOp {
    /// The operation's encoding.
    pub fn of(op: &PageOp) -> WireOp {
        WireOp(match op {
            PageOp::Snapshot {
                within,
                max_chars,
                cursor,
            } => snapshot(within.as_ref(), *max_chars, *cursor),
            PageOp::Read {
                within,
                format,
                max_chars,
                cursor,
            } => read(within.as_ref(), *format, *max_chars, *cursor),
            PageOp::Act {
                target: on,
                action,
                snapshot,
                dialog,
            } => json!({"tool": ACT, "target": target(on), "action": act(action),
                        "snapshot": snapshot, "dialog": dialog.as_ref().map(DialogAnswer::to_plan)}),
            PageOp::Find { by } => match by {
                FindBy::Lines(LineMatch::Text(text)) => json!({"tool": FIND, "text": text}),
                FindBy::Lines(LineMatch::Role { role, name }) => {
                    json!({"tool": FIND, "role": role, "name": name})
                }
                FindBy::Ref(r) => json!({"tool": FIND, "ref": r.to_string()}),
            },
            PageOp::Wait {
                what,
                gone,
                timeout_ms,
            } => {
                let mut wait = json!({"tool": WAIT, "gone": gone, "timeout_ms": timeout_ms});
                match what {
                    WaitFor::Text(text) => wait["text"] = text.as_str().into(),
                    WaitFor::Element(on) => wait["element"] = target(on),
                }
                wait
            }
        })
    }

    /// A whole document's snapshot of at most `max_chars` (what a top frame asks of a
    /// cross-origin child frame's runtime): encoded without the encoder of every operation.
    pub fn whole_snapshot(max_chars: usize) -> WireOp {
        WireOp(snapshot(None, max_chars, 0))
    }

    /// The `op` field of a message: decoded as the JSON value it is (the worker reads no more).
    pub(crate) fn take(f: &mut Fields) -> Decoded<WireOp> {
        f.req::<Value>("op").map(WireOp)
    }

    /// The page tool it is a call of (`page_act`, …); `None` when it names none (the worker
    /// answers such a call with what was wrong; the page's [`WireOp::decode`] refuses it).
    pub fn tool(&self) -> Option<&str> {
        self.0.get("tool").and_then(Value::as_str)
    }

    /// The operation it encodes.
    pub fn decode(self) -> Decoded<PageOp> {
        let (tool, mut f) = tagged::split_by(self.0, "tool")?;
        Ok(match tool.as_str() {
            SNAPSHOT => PageOp::Snapshot {
                within: within(&mut f)?,
                max_chars: f.req("max_chars")?,
                cursor: f.opt("cursor")?,
            },
            READ => PageOp::Read {
                within: within(&mut f)?,
                format: match f.req::<String>("format")?.as_str() {
                    "markdown" => ReadFormat::Markdown,
                    "text" => ReadFormat::Text,
                    other => return Err(tagged::unknown_type(other, READ_FORMATS)),
                },
                max_chars: f.req("max_chars")?,
                cursor: f.opt("cursor")?,
            },
            ACT => PageOp::Act {
                target: read_target(f.req("target")?)?,
                action: read_act(f.req("action")?)?,
                snapshot: f.opt("snapshot")?,
                dialog: match f.opt::<Option<Value>>("dialog")? {
                    Some(plan) => {
                        let mut plan = Fields::of(plan)?;
                        let answer =
                            DialogAnswer::parse(&plan.req::<String>("answer")?, plan.opt("text")?);
                        Some(answer.map_err(serde::de::Error::custom)?)
                    }
                    None => None,
                },
            },
            FIND => PageOp::Find {
                by: match (
                    f.opt("text")?,
                    f.opt("role")?,
                    f.opt::<Option<String>>("ref")?,
                ) {
                    (Some(text), None, None) => FindBy::Lines(LineMatch::Text(text)),
                    (None, Some(role), None) => FindBy::Lines(LineMatch::Role {
                        role,
                        name: f.opt("name")?,
                    }),
                    (None, None, Some(r)) => FindBy::Ref(read_ref(&r)?),
                    _ => {
                        return Err(serde::de::Error::custom(
                            "a find has one of text, role, ref",
                        ));
                    }
                },
            },
            WAIT => PageOp::Wait {
                what: match (f.opt("text")?, f.opt::<Option<Value>>("element")?) {
                    (Some(text), None) => WaitFor::Text(text),
                    (None, Some(on)) => WaitFor::Element(read_target(on)?),
                    _ => return Err(serde::de::Error::custom("a wait has text or element")),
                },
                gone: f.opt("gone")?,
                timeout_ms: f.req("timeout_ms")?,
            },
            other => return Err(tagged::unknown_type(other, super::PAGE_TOOLS)),
        })
    }
}

fn snapshot(within: Option<&Target>, max_chars: usize, cursor: usize) -> Value {
    json!({"tool": SNAPSHOT, "within": within.map(target), "max_chars": max_chars, "cursor": cursor})
}

fn read(within: Option<&Target>, format: ReadFormat, max_chars: usize, cursor: usize) -> Value {
    json!({"tool": READ, "within": within.map(target), "format": format.name(),
           "max_chars": max_chars, "cursor": cursor})
}

fn target(target: &Target) -> Value {
    match target {
        Target::Ref(r) => json!({"ref": r.to_string()}),
        Target::Selector(selector) => json!({"selector": selector}),
    }
}

fn within(f: &mut Fields) -> Decoded<Option<Target>> {
    f.opt::<Option<Value>>("within")?
        .map(read_target)
        .transpose()
}

fn read_target(value: Value) -> Decoded<Target> {
    let mut f = Fields::of(value)?;
    match f.opt::<Option<String>>("ref")? {
        Some(r) => read_ref(&r).map(Target::Ref),
        None => f.req("selector").map(Target::Selector),
    }
}

fn read_ref(text: &str) -> Decoded<super::Ref> {
    parse_ref(text).ok_or_else(|| serde::de::Error::custom(format!("{text:?} is not a ref")))
}

fn act(action: &Action) -> Value {
    let mut act = json!({"do": action.name()});
    match action {
        Action::Click
        | Action::Dblclick
        | Action::Hover
        | Action::Clear
        | Action::Check
        | Action::Uncheck
        | Action::Scroll => {}
        Action::Fill(text) | Action::Select(text) | Action::Press(text) => {
            act["text"] = text.as_str().into()
        }
        Action::Upload(files) => act["files"] = json!(files),
        Action::Type { text, at } => {
            act["text"] = text.as_str().into();
            act["at"] = at.as_ref().map(caret).into();
        }
        Action::Caret(at) => act["at"] = caret(at),
        Action::SelectText(which) => act["which"] = which.as_ref().map(text_at).into(),
        Action::Drag(to) => act["to"] = target(to),
    }
    act
}

fn read_act(value: Value) -> Decoded<Action> {
    let (kind, mut f) = tagged::split_by(value, "do")?;
    Ok(match kind.as_str() {
        "click" => Action::Click,
        "dblclick" => Action::Dblclick,
        "hover" => Action::Hover,
        "clear" => Action::Clear,
        "check" => Action::Check,
        "uncheck" => Action::Uncheck,
        "scroll" => Action::Scroll,
        "fill" => Action::Fill(f.req("text")?),
        "select" => Action::Select(f.req("text")?),
        "press" => Action::Press(f.req("text")?),
        "upload" => Action::Upload(f.req("files")?),
        "type" => Action::Type {
            text: f.req("text")?,
            at: f.opt::<Option<Value>>("at")?.map(read_caret).transpose()?,
        },
        "caret" => Action::Caret(read_caret(f.req("at")?)?),
        "select_text" => Action::SelectText(
            f.opt::<Option<Value>>("which")?
                .map(read_text_at)
                .transpose()?,
        ),
        "drag" => Action::Drag(read_target(f.req("to")?)?),
        other => return Err(tagged::unknown_type(other, super::ACTIONS)),
    })
}

fn caret(caret: &Caret) -> Value {
    match caret {
        Caret::Start => json!({"at": "start"}),
        Caret::End => json!({"at": "end"}),
        Caret::After(after) => {
            let mut at = text_at(after);
            at["at"] = "after".into();
            at
        }
    }
}

fn read_caret(value: Value) -> Decoded<Caret> {
    let (at, f) = tagged::split_by(value, "at")?;
    Ok(match at.as_str() {
        "start" => Caret::Start,
        "end" => Caret::End,
        "after" => Caret::After(text_at_of(f)?),
        other => return Err(tagged::unknown_type(other, &["start", "end", "after"])),
    })
}

fn text_at(at: &TextAt) -> Value {
    json!({"text": at.text, "nth": at.nth})
}

fn read_text_at(value: Value) -> Decoded<TextAt> {
    text_at_of(Fields::of(value)?)
}

fn text_at_of(mut f: Fields) -> Decoded<TextAt> {
    Ok(TextAt {
        text: f.req("text")?,
        nth: f.req("nth")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_ops::{Ref, parse};

    fn travels(op: PageOp) {
        let wire = WireOp::of(&op);
        let text = serde_json::to_string(&wire).unwrap();
        let back: WireOp = serde_json::from_str(&text).unwrap();
        assert_eq!(back.tool(), Some(op.tool()), "{text}");
        assert_eq!(back.decode().unwrap(), op, "{text}");
    }

    /// An encoding that names no page tool says so: no tool, rather than an empty name.
    #[test]
    fn an_encoding_without_its_tool_names_none() {
        let bare: WireOp = serde_json::from_value(json!({"max_chars": 100})).unwrap();
        assert_eq!(bare.tool(), None);
        let numbered: WireOp = serde_json::from_value(json!({"tool": 3})).unwrap();
        assert_eq!(numbered.tool(), None);
    }

    /// Every operation, every action, every either-or field comes out of the page as the server
    /// put it in.
    #[test]
    fn every_operation_travels_whole() {
        let ref_3 = Target::Ref(Ref { frame: 3, n: 12 });
        let css = Target::Selector("#a".into());
        let after = Caret::After(TextAt {
            text: "x".into(),
            nth: 2,
        });
        let actions = [
            Action::Click,
            Action::Dblclick,
            Action::Hover,
            Action::Fill("{{value}} stays".into()),
            Action::Clear,
            Action::Select("b".into()),
            Action::Check,
            Action::Uncheck,
            Action::Press("Shift+Enter".into()),
            Action::Scroll,
            Action::Upload(vec!["a.pdf".into(), "b.png".into()]),
            Action::Type {
                text: "t".into(),
                at: None,
            },
            Action::Type {
                text: "t".into(),
                at: Some(Caret::End),
            },
            Action::Caret(Caret::Start),
            Action::Caret(after.clone()),
            Action::SelectText(None),
            Action::SelectText(Some(TextAt {
                text: "y".into(),
                nth: 1,
            })),
            Action::Drag(ref_3.clone()),
        ];
        assert_eq!(actions.len() - 3, super::super::ACTIONS.len());
        for (i, action) in actions.into_iter().enumerate() {
            travels(PageOp::Act {
                target: if i % 2 == 0 {
                    ref_3.clone()
                } else {
                    css.clone()
                },
                action,
                snapshot: i % 3 == 0,
                dialog: match i % 3 {
                    0 => None,
                    1 => Some(DialogAnswer::Dismiss),
                    _ => Some(DialogAnswer::Accept {
                        text: (i % 2 == 0).then(|| "Ann".into()),
                    }),
                },
            });
        }
        for within in [None, Some(ref_3.clone()), Some(css.clone())] {
            travels(PageOp::Snapshot {
                within: within.clone(),
                max_chars: 500,
                cursor: 7,
            });
            for format in [ReadFormat::Text, ReadFormat::Markdown] {
                travels(PageOp::Read {
                    within: within.clone(),
                    format,
                    max_chars: 900,
                    cursor: 0,
                });
            }
        }
        for by in [
            FindBy::Lines(LineMatch::Text("Save".into())),
            FindBy::Lines(LineMatch::Role {
                role: "button".into(),
                name: None,
            }),
            FindBy::Lines(LineMatch::Role {
                role: "button".into(),
                name: Some("Save".into()),
            }),
            FindBy::Ref(Ref::top(4)),
        ] {
            travels(PageOp::Find { by });
        }
        for what in [WaitFor::Text("done".into()), WaitFor::Element(css)] {
            travels(PageOp::Wait {
                what,
                gone: true,
                timeout_ms: 300,
            });
        }
    }

    #[test]
    fn a_frames_whole_snapshot_is_a_snapshot_op() {
        assert_eq!(
            WireOp::whole_snapshot(9_000).decode().unwrap(),
            PageOp::Snapshot {
                within: None,
                max_chars: 9_000,
                cursor: 0
            }
        );
    }

    /// What the client wrote is read once, by the server: a value that looks like a template,
    /// or like another field, arrives as the value it was.
    #[test]
    fn what_the_server_read_is_what_the_page_gets() {
        let op = parse(
            ACT,
            json!({"ref": "e3", "action": "fill", "value": "{{ref}} e9"}),
        )
        .unwrap();
        assert_eq!(WireOp::of(&op).decode().unwrap(), op);
    }

    #[test]
    fn an_encoding_that_is_not_an_operation_is_refused_saying_what() {
        let bad = |value: Value| {
            serde_json::from_value::<WireOp>(value)
                .unwrap()
                .decode()
                .unwrap_err()
                .to_string()
        };
        assert!(bad(json!({"tool": "page_nope"})).contains("page_nope"));
        assert!(
            bad(json!({"tool": ACT, "target": {"ref": "x"}, "action": {"do": "click"}}))
                .contains("not a ref")
        );
        assert!(
            bad(json!({"tool": ACT, "target": {"ref": "e1"}, "action": {"do": "fly"}}))
                .contains("fly")
        );
        assert!(bad(json!({"tool": WAIT, "timeout_ms": 1})).contains("text or element"));
        assert!(bad(json!("page_act")).contains("message object"));
    }
}
