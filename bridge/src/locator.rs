//! Locators that survive a redesign. Every selector field of an adapter's steps takes either CSS or
//! an element named by what a person sees, written with a prefix: `role=button[name="Save"]` (its
//! role and accessible name), `label=Title` (a form field by its label), `placeholder=Search`,
//! `text=Sign in` (the innermost elements whose whole text is that), `testid=save` (`data-testid`).
//! A string without a prefix is CSS. Decided here; the validator checks it and the page resolves it.

use std::fmt;

/// An element's address in a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locator {
    Css(String),
    /// An element of `role` (WAI-ARIA; `heading` takes `h1`…`h6`), whose accessible name, with
    /// white space squashed, is `name` exactly when given.
    Role {
        role: String,
        name: Option<String>,
    },
    /// A form field whose accessible name (from its `<label>`, `aria-label` or
    /// `aria-labelledby`) is this, white space squashed.
    Label(String),
    Placeholder(String),
    /// The innermost elements whose whole text, white space squashed, is this.
    Text(String),
    TestId(String),
}

/// The prefixes a locator is written with.
pub const PREFIXES: [&str; 5] = ["testid=", "role=", "label=", "placeholder=", "text="];

/// WAI-ARIA 1.2's roles that name an element a step may act on or read (abstract roles left out).
pub const ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "application",
    "article",
    "banner",
    "blockquote",
    "button",
    "caption",
    "cell",
    "checkbox",
    "code",
    "columnheader",
    "combobox",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "dialog",
    "document",
    "emphasis",
    "feed",
    "figure",
    "form",
    "generic",
    "grid",
    "gridcell",
    "group",
    "heading",
    "img",
    "insertion",
    "link",
    "list",
    "listbox",
    "listitem",
    "log",
    "main",
    "marquee",
    "math",
    "menu",
    "menubar",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "meter",
    "navigation",
    "none",
    "note",
    "option",
    "paragraph",
    "presentation",
    "progressbar",
    "radio",
    "radiogroup",
    "region",
    "row",
    "rowgroup",
    "rowheader",
    "scrollbar",
    "search",
    "searchbox",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "strong",
    "subscript",
    "superscript",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "term",
    "textbox",
    "time",
    "timer",
    "toolbar",
    "tooltip",
    "tree",
    "treegrid",
    "treeitem",
];

/// Whether a selector field's text is a locator (not CSS).
pub fn is_locator(text: &str) -> bool {
    PREFIXES.iter().any(|p| text.starts_with(p))
}

/// Whether a locator's value is written in double quotes (where a `{{…}}` must go: its value
/// is inserted escaped for them, see [`quote_inside`]).
pub fn value_is_quoted(text: &str) -> bool {
    let value = PREFIXES
        .iter()
        .find_map(|p| text.strip_prefix(p))
        .unwrap_or(text);
    let value = match value.find("[name=") {
        Some(at) if text.starts_with("role=") => &value[at + "[name=".len()..],
        _ => value,
    };
    value.starts_with('"')
}

/// A value put inside a locator's double quotes: `\` and `"` escaped, so it stays one literal.
pub fn quote_inside(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

impl Locator {
    /// Reads a selector field's text (after its `{{…}}` are filled in).
    pub fn parse(text: &str) -> Result<Locator, String> {
        let Some((prefix, rest)) = PREFIXES
            .iter()
            .find_map(|p| text.strip_prefix(p).map(|rest| (*p, rest)))
        else {
            return Ok(Locator::Css(text.to_owned()));
        };
        if prefix == "role=" {
            return parse_role(rest);
        }
        let value = value(rest).map_err(|why| format!("{prefix}…: {why}"))?;
        if value.trim().is_empty() {
            return Err(format!(
                "{prefix} needs something after it, such as {prefix}Save"
            ));
        }
        Ok(match prefix {
            "label=" => Locator::Label(value),
            "placeholder=" => Locator::Placeholder(value),
            "text=" => Locator::Text(value),
            _ => Locator::TestId(value),
        })
    }

    /// The CSS that finds the same elements, for the locators an attribute decides.
    pub fn as_css(&self) -> Option<String> {
        match self {
            Locator::Css(css) => Some(css.clone()),
            Locator::Placeholder(p) => Some(format!("[placeholder={}]", css_string(p))),
            Locator::TestId(id) => Some(format!("[data-testid={}]", css_string(id))),
            Locator::Role { .. } | Locator::Label(_) | Locator::Text(_) => None,
        }
    }
}

fn parse_role(rest: &str) -> Result<Locator, String> {
    let (role, options) = match rest.find('[') {
        Some(at) => (&rest[..at], Some(&rest[at..])),
        None => (rest, None),
    };
    if !ROLES.contains(&role) {
        return Err(format!(
            "role={role}: {role:?} is not a WAI-ARIA role (such as button, link, textbox, checkbox, heading)"
        ));
    }
    let name = match options {
        None => None,
        Some(options) => {
            let inner = options
                .strip_prefix("[name=")
                .and_then(|o| o.strip_suffix(']'))
                .ok_or_else(|| {
                    format!("role={role}{options}: expected [name=\"…\"] after the role")
                })?;
            Some(value(inner).map_err(|why| format!("role={role}[name=…]: {why}"))?)
        }
    };
    Ok(Locator::Role {
        role: role.to_owned(),
        name,
    })
}

/// A value as written: bare, or in double quotes with `\"` and `\\` inside.
fn value(text: &str) -> Result<String, String> {
    let Some(quoted) = text.strip_prefix('"') else {
        return Ok(text.to_owned());
    };
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => out.push(escaped),
                None => return Err("a \\ ends the text".to_owned()),
            },
            '"' if chars.as_str().is_empty() => return Ok(out),
            '"' => {
                return Err(format!(
                    "text after the closing quote: {:?}",
                    chars.as_str()
                ));
            }
            c => out.push(c),
        }
    }
    Err("the quote is not closed".to_owned())
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", quote_inside(text))
}

/// A CSS string: quoted, with `"`, `\` and line breaks escaped.
fn css_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\a "),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Written back as a step takes it (quoted where the value needs it).
impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain = |v: &str| {
            let bare =
                !v.is_empty() && !v.starts_with('"') && v.trim() == v && !v.contains(['\n', ']']);
            if bare { v.to_owned() } else { quoted(v) }
        };
        match self {
            Locator::Css(css) => f.write_str(css),
            Locator::Role { role, name: None } => write!(f, "role={role}"),
            Locator::Role {
                role,
                name: Some(name),
            } => write!(f, "role={role}[name={}]", quoted(name)),
            Locator::Label(v) => write!(f, "label={}", plain(v)),
            Locator::Placeholder(v) => write!(f, "placeholder={}", plain(v)),
            Locator::Text(v) => write!(f, "text={}", plain(v)),
            Locator::TestId(v) => write!(f, "testid={}", plain(v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_reads_and_writes_back_the_same() {
        for (text, locator) in [
            ("#save", Locator::Css("#save".into())),
            (
                "role=button[name=\"Save \\\"all\\\"\"]",
                Locator::Role {
                    role: "button".into(),
                    name: Some("Save \"all\"".into()),
                },
            ),
            (
                "role=checkbox",
                Locator::Role {
                    role: "checkbox".into(),
                    name: None,
                },
            ),
            ("label=Title", Locator::Label("Title".into())),
            (
                "placeholder=\" padded \"",
                Locator::Placeholder(" padded ".into()),
            ),
            ("text=Sign in", Locator::Text("Sign in".into())),
            ("testid=save-btn", Locator::TestId("save-btn".into())),
        ] {
            assert_eq!(Locator::parse(text).as_ref(), Ok(&locator), "{text}");
            assert_eq!(locator.to_string(), text);
        }
        // Unquoted name in brackets is taken as written.
        assert_eq!(
            Locator::parse("role=link[name=Home]"),
            Ok(Locator::Role {
                role: "link".into(),
                name: Some("Home".into())
            })
        );
    }

    #[test]
    fn a_bad_locator_says_what_is_wrong() {
        for (text, says) in [
            ("role=buton", "\"buton\" is not a WAI-ARIA role"),
            (
                "role=button[label=\"x\"]",
                "expected [name=\"…\"] after the role",
            ),
            ("label=", "label= needs something after it"),
            ("text=\"open", "the quote is not closed"),
            ("testid=\"a\"b", "text after the closing quote"),
        ] {
            let why = Locator::parse(text).unwrap_err();
            assert!(why.contains(says), "{text}: {why}");
        }
    }

    #[test]
    fn a_variable_in_a_locator_stays_one_literal() {
        let vars = serde_json::from_value(serde_json::json!({"t": "say \"hi\" \\ bye"})).unwrap();
        let rendered =
            crate::template::render_selector(r#"role=button[name="{{t}}"]"#, &vars).unwrap();
        assert_eq!(
            Locator::parse(&rendered),
            Ok(Locator::Role {
                role: "button".into(),
                name: Some("say \"hi\" \\ bye".into())
            })
        );
        assert!(value_is_quoted(r#"text="{{t}}""#));
        assert!(!value_is_quoted("label={{t}}"));
        assert!(value_is_quoted(r#"role=link[name="{{t}}"]"#));
        // CSS keeps CSS escaping.
        assert_eq!(
            crate::template::render_selector("#{{t}}", &vars).unwrap(),
            r##"#say\ \"hi\"\ \\\ bye"##
        );
    }

    #[test]
    fn attribute_locators_are_css_with_the_value_escaped() {
        assert_eq!(
            Locator::TestId("a\"b\\c".into()).as_css().unwrap(),
            r#"[data-testid="a\"b\\c"]"#
        );
        assert_eq!(
            Locator::Placeholder("Search".into()).as_css().unwrap(),
            r#"[placeholder="Search"]"#
        );
        assert_eq!(Locator::Text("x".into()).as_css(), None);
    }
}
