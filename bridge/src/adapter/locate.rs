//! Where a problem in an adapter file sits: a path of keys and indices (`tools[1].steps[0].url`),
//! and the line and column it starts at, found by scanning the file's text (serde_json keeps no
//! positions in a parsed `Value`).

use std::fmt;

/// A step in a JSON document: object keys and array indices from the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    Key(String),
    Index(usize),
}

/// Where a problem sits: `tools[1].steps[0].selector`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JsonPath(pub Vec<PathSegment>);

impl JsonPath {
    pub fn key(&self, key: &str) -> JsonPath {
        let mut p = self.clone();
        p.0.push(PathSegment::Key(key.to_owned()));
        p
    }

    pub fn index(&self, i: usize) -> JsonPath {
        let mut p = self.clone();
        p.0.push(PathSegment::Index(i));
        p
    }
}

impl JsonPath {
    /// This path followed by `rest`.
    pub fn join(&self, rest: &JsonPath) -> JsonPath {
        let mut p = self.clone();
        p.0.extend(rest.0.iter().cloned());
        p
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                PathSegment::Key(k) if i == 0 => write!(f, "{k}")?,
                PathSegment::Key(k) => write!(f, ".{k}")?,
                PathSegment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// One thing wrong with an adapter file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: JsonPath,
    /// 1-based, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Problem {
    /// A problem at `path`, not located in the text yet.
    pub fn at(path: JsonPath, message: impl Into<String>) -> Problem {
        Problem {
            path,
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "{line}:{column}: ")?;
        }
        if !self.path.0.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

/// The 1-based line and column of the value at `path` in the JSON `text`, if it is there.
pub fn locate(text: &str, path: &JsonPath) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    for segment in &path.0 {
        pos = match segment {
            PathSegment::Key(key) => find_member(bytes, pos, key)?,
            PathSegment::Index(index) => find_element(bytes, pos, *index)?,
        };
    }
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, column))
}

fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// The end of the JSON value starting at `pos`.
fn skip_value(b: &[u8], pos: usize) -> Option<usize> {
    match *b.get(pos)? {
        b'"' => {
            let mut i = pos + 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => return Some(i + 1),
                    _ => i += 1,
                }
            }
            None
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_value(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = pos;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace()
            {
                i += 1;
            }
            Some(i)
        }
    }
}

fn find_member(b: &[u8], pos: usize, key: &str) -> Option<usize> {
    if b.get(pos) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, pos + 1);
    while b.get(i) == Some(&b'"') {
        let key_end = skip_value(b, i)?;
        // Through `&str`, the parser the extension's wasm has already (not `from_slice`'s).
        let this_key: String =
            serde_json::from_str(std::str::from_utf8(&b[i..key_end]).ok()?).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value = skip_ws(b, i + 1);
        if this_key == key {
            return Some(value);
        }
        i = skip_ws(b, skip_value(b, value)?);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    None
}

fn find_element(b: &[u8], pos: usize, index: usize) -> Option<usize> {
    if b.get(pos) != Some(&b'[') {
        return None;
    }
    let mut i = skip_ws(b, pos + 1);
    for _ in 0..index {
        i = skip_ws(b, skip_value(b, i)?);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(b, i + 1);
    }
    (b.get(i) != Some(&b']')).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_finds_nested_values() {
        let text = "{\n  \"a\": [1, {\"b\": \"x,]}\"}, {\"c\": true}]\n}";
        let path = JsonPath(vec![
            PathSegment::Key("a".into()),
            PathSegment::Index(2),
            PathSegment::Key("c".into()),
        ]);
        assert_eq!(locate(text, &path), Some((2, 33)));
        assert_eq!(
            locate(text, &JsonPath(vec![PathSegment::Key("zz".into())])),
            None
        );
    }
}
