//! The rules of the `fetch` step, pure so both the validator and the injector use them: its URL
//! is a path on the page's own origin (checked on the template when an adapter loads, and again
//! on the rendered path before the request), JSON pointers pick values out of the response, and
//! `fields` projects an array of records the way `extract` does for elements.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The largest response body a `fetch` step reads: half a bridge message, as for code adapters'
/// results, so whatever the step returns still fits in the answer.
pub const MAX_RESPONSE_BYTES: usize = crate::MAX_MESSAGE_BYTES / 2;

/// Checks a `fetch` step's `url` template: a path on the page's own origin. Rejects absolute URLs,
/// scheme-relative `//host`, backslashes (`/\host` is `//host` to a browser), whitespace and
/// control characters (the URL parser drops tabs and newlines, so `/\t/host` is `//host` too),
/// fragments, and `.`/`..` segments. Values inserted by `{{name}}` are percent-encoded at run
/// time, so they stay inside their path segment or query value.
pub fn check_url_template(url: &str) -> Result<(), String> {
    let why = if !url.starts_with('/') {
        "must be a path on the page's own origin starting with \"/\" (absolute URLs, \"//host\" and other schemes are not allowed)"
    } else if url.starts_with("//") {
        "must not start with \"//\" (that names another host)"
    } else if url.contains('\\') {
        "must not contain \"\\\" (browsers read it as \"/\", so \"/\\host\" names another host)"
    } else if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        "must not contain whitespace or control characters (percent-encode them)"
    } else if url.contains('#') {
        "must not contain a \"#\" fragment (it is never sent to the server)"
    } else if has_dot_segment(url) {
        "must not contain \".\" or \"..\" path segments"
    } else {
        return Ok(());
    };
    Err(format!("the URL {url:?} {why}"))
}

/// Checks the path a `fetch` step's `url` rendered to, before it is requested: still a path of
/// the page's own origin, without dot segments (an argument that is exactly `..` would otherwise
/// climb out of its segment even though it is percent-encoded: URL parsers decode `%2e`).
pub fn check_rendered_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') || path.starts_with("//") || path.contains('\\') {
        return Err(format!("{path:?} is not a path on the page's own origin"));
    }
    if has_dot_segment(path) {
        return Err(format!(
            "{path:?} has a \".\" or \"..\" path segment (an argument cannot be a whole \".\" or \"..\" segment)"
        ));
    }
    Ok(())
}

/// Whether the path part (before `?`) has a segment URL parsers treat as `.` or `..`.
fn has_dot_segment(url: &str) -> bool {
    let path = url.split('?').next().unwrap_or(url);
    path.split('/').any(|segment| {
        let lower = segment.to_ascii_lowercase().replace("%2e", ".");
        lower == "." || lower == ".."
    })
}

/// Checks a JSON pointer (RFC 6901): empty (the whole value) or `/`-separated tokens where `~`
/// is only `~0` or `~1`.
pub fn check_pointer(pointer: &str) -> Result<(), String> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(format!(
            "{pointer:?} is not a JSON pointer: expected \"\" (the whole value) or one starting with \"/\", such as \"/from/0/address\""
        ));
    }
    let mut chars = pointer.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(format!(
                "{pointer:?} is not a JSON pointer: \"~\" must be \"~0\" (a ~) or \"~1\" (a /)"
            ));
        }
    }
    Ok(())
}

/// The records of `body`: the array at the pointer `records` (`""`: the body itself), each item
/// turned into an object with one entry per field, the value at that field's pointer inside the
/// item (`null` where there is none).
pub fn project(
    body: &Value,
    records: &str,
    fields: &BTreeMap<String, String>,
) -> Result<Value, String> {
    let items = body
        .pointer(records)
        .ok_or_else(|| format!("the response has nothing at {records:?}"))?
        .as_array()
        .ok_or_else(|| {
            format!(
                "the response's value at {records:?} is not an array (set `records` to the pointer of the list)"
            )
        })?;
    Ok(Value::Array(
        items
            .iter()
            .map(|item| {
                let record: Map<String, Value> = fields
                    .iter()
                    .map(|(name, pointer)| {
                        (
                            name.clone(),
                            item.pointer(pointer).cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect();
                Value::Object(record)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_paths_on_the_own_origin_are_accepted() {
        for good in [
            "/email",
            "/email?skip={{n}}",
            "/notes/{{id}}/text",
            "/a.b/..c/.d",
            "/",
        ] {
            assert_eq!(check_url_template(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("https://evil.example/x", "starting with \"/\""),
            ("email", "starting with \"/\""),
            ("{{url}}", "starting with \"/\""),
            ("javascript:alert(1)", "starting with \"/\""),
            ("//evil.example/x", "\"//\""),
            ("/\\evil.example/x", "\"\\\""),
            ("/\t/evil.example", "whitespace"),
            ("/x\n", "whitespace"),
            ("/x#top", "fragment"),
            ("/a/../admin", "\"..\""),
            ("/a/%2E%2e/admin", "\"..\""),
            ("/a/./b", "\".\""),
        ] {
            let err = check_url_template(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_rendered_path_may_not_climb_out_of_its_segment() {
        assert_eq!(check_rendered_path("/notes/..%2Fadmin"), Ok(()));
        assert_eq!(check_rendered_path("/notes/%3F%23"), Ok(()));
        for bad in [
            "/notes/..",
            "/notes/../x",
            "/notes/%2e%2E",
            "/notes/.?x=1",
            "//evil",
            "x",
        ] {
            assert!(check_rendered_path(bad).is_err(), "{bad}");
        }
        // Dots in the query are data, not path segments.
        assert_eq!(check_rendered_path("/search?q=.."), Ok(()));
    }

    #[test]
    fn pointers_are_checked() {
        for good in ["", "/a", "/from/0/address", "/a~1b/c~0d", "/"] {
            assert_eq!(check_pointer(good), Ok(()), "{good}");
        }
        assert!(
            check_pointer("subject")
                .unwrap_err()
                .contains("starting with")
        );
        assert!(check_pointer("/a~2").unwrap_err().contains("~0"));
        assert!(check_pointer("/a~").unwrap_err().contains("~0"));
    }

    #[test]
    fn projection_picks_fields_of_each_record() {
        let body = json!([
            {"id": "a", "subject": "Hi", "from": [{"address": "x@y", "name": "X"}], "read": false},
            {"id": "b", "subject": "Yo", "from": [{"address": "z@y"}], "read": true}
        ]);
        let fields: BTreeMap<String, String> = [
            ("id", "/id"),
            ("from", "/from/0/address"),
            ("from_name", "/from/0/name"),
            ("read", "/read"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(
            project(&body, "", &fields).unwrap(),
            json!([
                {"id": "a", "from": "x@y", "from_name": "X", "read": false},
                {"id": "b", "from": "z@y", "from_name": null, "read": true}
            ])
        );
        let wrapped = json!({"data": {"items": body}});
        assert_eq!(
            project(&wrapped, "/data/items", &fields).unwrap(),
            project(&body, "", &fields).unwrap()
        );
        assert!(
            project(&wrapped, "", &fields)
                .unwrap_err()
                .contains("not an array")
        );
        assert!(
            project(&wrapped, "/nope", &fields)
                .unwrap_err()
                .contains("nothing at \"/nope\"")
        );
    }
}
