//! Reading the page into a step's value: `read`, `items`, `count` and record fields, and the
//! parts of a URL (moved out of `steps.rs` as it was).

use super::*;

impl<'d, D: PageDom> Run<'d, D> {
    pub(super) fn read(&self, node: Option<&D::Node>, read: &Read) -> Value {
        let Some(node) = node else {
            return match read {
                Read::Exists => Value::Bool(false),
                Read::Count => Value::from(0),
                Read::Url(segment) => url_part(&self.dom.url(), *segment),
                Read::Text
                | Read::OwnText
                | Read::Value
                | Read::Attr(_)
                | Read::Prop(_)
                | Read::HasClass(_) => Value::Null,
            };
        };
        match read {
            Read::Text => Value::String(self.dom.text(node).trim().to_owned()),
            Read::OwnText => Value::String(self.dom.own_text(node).trim().to_owned()),
            Read::Value => self.dom.value(node).map_or(Value::Null, Value::String),
            Read::Exists => Value::Bool(true),
            // Counted by `count` over the selector's matches; an element read by itself is one.
            Read::Count => Value::from(1),
            Read::Attr(name) => self.dom.attr(node, name).map_or(Value::Null, Value::String),
            Read::Prop(name) => self.dom.prop(node, name),
            Read::HasClass(name) => Value::Bool(self.dom.has_class(node, name)),
            Read::Url(segment) => url_part(&self.dom.url(), *segment),
        }
    }

    /// The array a `for_each` over `items` (one variable, validated) runs through; `null`, an
    /// optional argument left out, is none. Arguments are arrays already (`check_args`), so
    /// anything else is the adapter's mistake.
    pub(super) fn items(&self, items: &str, label: &str) -> Result<Vec<Value>, WireError> {
        let value = template::render_value(&Value::String(items.to_owned()), &self.vars)
            .map_err(|e| template_error(label, e))?;
        let kind = match value {
            Value::Array(items) => return Ok(items),
            Value::Null => return Ok(Vec::new()),
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Object(_) => "an object",
        };
        Err(fail(
            ErrorCode::AdapterError,
            label,
            format!("`items` {items} is {kind}, expected an array"),
        ))
    }

    /// How many elements match `selector` in `scope` (what a `count` read answers).
    pub(super) fn count(
        &self,
        scope: Option<&D::Node>,
        selector: &str,
        label: &str,
    ) -> Result<Value, WireError> {
        let nodes = self.query_all(scope, selector, label)?;
        Ok(Value::from(nodes.len()))
    }

    pub(super) fn field(
        &self,
        item: &D::Node,
        field: &Field,
        label: &str,
    ) -> Result<Value, WireError> {
        let node = match &field.selector {
            Some(selector) => {
                let selector = self.selector(selector, label)?;
                if field.read == Read::Count {
                    return self.count(Some(item), &selector, label);
                }
                self.query(Some(item), &selector, label)?
            }
            None => Some(item.clone()),
        };
        Ok(match (&node, &field.read) {
            (None, Read::HasClass(_)) => Value::Bool(false),
            _ => self.read(node.as_ref(), &field.read),
        })
    }
}

/// The page's address, or segment `segment` of its path (negative: from the end), decoded;
/// `null` when the path has no such segment.
pub(super) fn url_part(href: &str, segment: Option<i32>) -> Value {
    let Some(segment) = segment else {
        return Value::String(href.to_owned());
    };
    let after_scheme = href.split_once("://").map_or(href, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("", |at| &after_scheme[at..]);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let index = if segment < 0 {
        segments.len().checked_sub(segment.unsigned_abs() as usize)
    } else {
        Some(segment as usize)
    };
    index
        .and_then(|i| segments.get(i))
        .map_or(Value::Null, |s| Value::String(percent_decode(s)))
}

/// `%xx` escapes decoded as UTF-8 (an invalid sequence is kept as written).
pub(super) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}
