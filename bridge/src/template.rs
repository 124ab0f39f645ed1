//! `{{name}}` templates in adapter steps, filled from the call's arguments and the values earlier
//! steps read. Interpolation is by context, so no argument can inject syntax: inside a CSS
//! selector a value is CSS-escaped (the `CSS.escape` algorithm); inside text it is plain text; a
//! JSON value that is exactly `"{{name}}"` becomes the variable's JSON value itself.
//!
//! Names may use dots to reach into objects: `{{todo.title}}`.

use serde_json::{Map, Value};

pub type Vars = Map<String, Value>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unclosed \"{{{{\" in {template:?}")]
    Unclosed { template: String },
    #[error(
        "empty or invalid variable name {name:?} in {template:?} (names are [a-z_][a-z0-9_]*, dot-separated)"
    )]
    BadName { name: String, template: String },
    #[error("unknown variable {name:?} (not an argument and not read by an earlier step)")]
    Unknown { name: String },
}

enum Piece<'a> {
    Literal(&'a str),
    Var(&'a str),
}

fn pieces(template: &str) -> Result<Vec<Piece<'_>>, TemplateError> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            out.push(Piece::Literal(&rest[..start]));
        }
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| TemplateError::Unclosed {
            template: template.to_owned(),
        })?;
        let name = after[..end].trim();
        if !valid_name(name) {
            return Err(TemplateError::BadName {
                name: name.to_owned(),
                template: template.to_owned(),
            });
        }
        out.push(Piece::Var(name));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    Ok(out)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The variable names a template refers to (the part before the first dot), for validation.
pub fn references(template: &str) -> Result<Vec<&str>, TemplateError> {
    Ok(pieces(template)?
        .into_iter()
        .filter_map(|p| match p {
            Piece::Var(name) => Some(name.split('.').next().unwrap_or(name)),
            Piece::Literal(_) => None,
        })
        .collect())
}

/// The variable a template consists of alone (`"{{tags}}"` gives `tags`), else `None`.
pub fn sole_variable(template: &str) -> Option<&str> {
    match pieces(template).ok()?.as_slice() {
        [Piece::Var(name)] => Some(name),
        _ => None,
    }
}

/// Every variable a JSON template refers to, in all its strings.
pub fn value_references(template: &Value) -> Result<Vec<&str>, TemplateError> {
    let mut out = Vec::new();
    collect_value_references(template, &mut out)?;
    Ok(out)
}

fn collect_value_references<'a>(
    value: &'a Value,
    out: &mut Vec<&'a str>,
) -> Result<(), TemplateError> {
    match value {
        Value::String(s) => out.extend(references(s)?),
        Value::Array(items) => {
            for item in items {
                collect_value_references(item, out)?;
            }
        }
        Value::Object(map) => {
            for item in map.values() {
                collect_value_references(item, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn lookup<'a>(vars: &'a Vars, name: &str) -> Result<&'a Value, TemplateError> {
    let unknown = || TemplateError::Unknown {
        name: name.to_owned(),
    };
    let mut parts = name.split('.');
    let first = parts.next().ok_or_else(unknown)?;
    let mut value = vars.get(first).ok_or_else(unknown)?;
    for part in parts {
        value = value.get(part).unwrap_or(&Value::Null);
    }
    Ok(value)
}

/// A variable's value as text: strings as they are, `null` as nothing, the rest as JSON.
pub fn value_to_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn render_with(
    template: &str,
    vars: &Vars,
    escape: impl Fn(&str) -> String,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(template.len());
    for piece in pieces(template)? {
        match piece {
            Piece::Literal(s) => out.push_str(s),
            Piece::Var(name) => out.push_str(&escape(&value_to_text(lookup(vars, name)?))),
        }
    }
    Ok(out)
}

/// Fills a template used as plain text (a value to type, a text to compare with).
pub fn render_text(template: &str, vars: &Vars) -> Result<String, TemplateError> {
    render_with(template, vars, str::to_owned)
}

/// Fills a template used as a selector: in CSS every value is CSS-escaped; in a locator
/// (`crate::locator`, whose values with templates are quoted) it is escaped for the quotes.
pub fn render_selector(template: &str, vars: &Vars) -> Result<String, TemplateError> {
    if crate::locator::is_locator(template) {
        return render_with(template, vars, crate::locator::quote_inside);
    }
    render_with(template, vars, css_escape)
}

/// Fills a template used as a URL: every value is percent-encoded (all but RFC 3986's
/// unreserved characters), so it stays inside the path segment or query value it is put in.
pub fn render_url(template: &str, vars: &Vars) -> Result<String, TemplateError> {
    render_with(template, vars, |value| {
        let mut out = String::with_capacity(value.len());
        for byte in value.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
        out
    })
}

/// Fills a JSON template: `"{{x}}"` alone becomes x's JSON value; other strings are text templates.
pub fn render_value(template: &Value, vars: &Vars) -> Result<Value, TemplateError> {
    Ok(match template {
        Value::String(s) => match pieces(s)?.as_slice() {
            [Piece::Var(name)] => lookup(vars, name)?.clone(),
            _ => Value::String(render_text(s, vars)?),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| render_value(item, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_value(v, vars)?)))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// The CSSOM `CSS.escape()` algorithm: the result is always a literal in a selector.
pub fn css_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let chars: Vec<char> = value.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let code = c as u32;
        if c == '\0' {
            out.push('\u{FFFD}');
        } else if (1..=0x1f).contains(&code)
            || code == 0x7f
            || (i == 0 && c.is_ascii_digit())
            || (i == 1 && c.is_ascii_digit() && chars[0] == '-')
        {
            out.push_str(&format!("\\{code:x} "));
        } else if i == 0 && c == '-' && chars.len() == 1 {
            out.push_str("\\-");
        } else if code >= 0x80 || c == '-' || c == '_' || c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(v: Value) -> Vars {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn text_templates() {
        let v = vars(json!({"title": "Buy milk", "n": 3, "todo": {"title": "x"}}));
        assert_eq!(render_text("Add {{title}}!", &v).unwrap(), "Add Buy milk!");
        assert_eq!(render_text("{{ n }} items", &v).unwrap(), "3 items");
        assert_eq!(render_text("{{todo.title}}", &v).unwrap(), "x");
        assert_eq!(render_text("no vars", &v).unwrap(), "no vars");
        assert!(matches!(
            render_text("{{missing}}", &v),
            Err(TemplateError::Unknown { .. })
        ));
        assert!(matches!(
            render_text("{{title", &v),
            Err(TemplateError::Unclosed { .. })
        ));
        assert!(matches!(
            render_text("{{a b}}", &v),
            Err(TemplateError::BadName { .. })
        ));
    }

    #[test]
    fn a_sole_variable_is_a_template_of_one_variable_only() {
        assert_eq!(sole_variable("{{tags}}"), Some("tags"));
        assert_eq!(sole_variable("{{ todo.tags }}"), Some("todo.tags"));
        for not_sole in [
            "tags",
            "x{{tags}}",
            "{{a}}{{b}}",
            "{{tags}} ",
            "{{bad name}}",
            "",
        ] {
            assert_eq!(sole_variable(not_sole), None, "{not_sole:?}");
        }
    }

    #[test]
    fn selector_values_cannot_inject() {
        let v = vars(json!({"id": "x\"], body, [y=\"", "num": "1a"}));
        assert_eq!(
            render_selector("[data-id=\"{{id}}\"]", &v).unwrap(),
            "[data-id=\"x\\\"\\]\\,\\ body\\,\\ \\[y\\=\\\"\"]"
        );
        assert_eq!(render_selector("#{{num}}", &v).unwrap(), "#\\31 a");
    }

    #[test]
    fn url_values_are_percent_encoded() {
        let v = vars(json!({"q": "a&b=c d/é?#", "n": 2}));
        assert_eq!(
            render_url("results.html?q={{q}}&page={{n}}", &v).unwrap(),
            "results.html?q=a%26b%3Dc%20d%2F%C3%A9%3F%23&page=2"
        );
        assert_eq!(
            render_url("{{q}}", &vars(json!({"q": "javascript:x"}))).unwrap(),
            "javascript%3Ax"
        );
    }

    #[test]
    fn css_escape_matches_cssom() {
        assert_eq!(css_escape("-"), "\\-");
        assert_eq!(css_escape("-1"), "-\\31 ");
        assert_eq!(css_escape("a\u{1}b"), "a\\1 b");
        assert_eq!(css_escape("é_-z"), "é_-z");
        assert_eq!(css_escape("a b"), "a\\ b");
    }

    #[test]
    fn value_templates_keep_types() {
        let v = vars(json!({"todos": [{"title": "a"}], "title": "t"}));
        let out = render_value(
            &json!({"items": "{{todos}}", "label": "got {{title}}", "n": 1}),
            &v,
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"items": [{"title": "a"}], "label": "got t", "n": 1})
        );
    }

    #[test]
    fn references_are_listed() {
        assert_eq!(references("{{a}} and {{b.c}}").unwrap(), vec!["a", "b"]);
        assert_eq!(
            value_references(&json!({"x": ["{{p}}", {"y": "{{q}}"}]})).unwrap(),
            vec!["p", "q"]
        );
    }
}
