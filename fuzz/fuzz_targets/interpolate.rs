//! Fuzzes argument interpolation: the input is a template, a NUL byte, then the arguments as JSON.
//! Rendering as text, as a CSS selector and as a JSON value either works or names the problem,
//! never panics; a CSS-escaped argument never leaves characters that end a selector's literal.
#![no_main]

use bridge::template::{css_escape, render_selector, render_text, render_value};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, vars) = text.split_once('\0').unwrap_or((text, "{}"));
    let vars: Map<String, Value> = serde_json::from_str(vars).unwrap_or_default();
    let _ = render_text(template, &vars);
    let _ = render_selector(template, &vars);
    let _ = render_value(&Value::String(template.to_owned()), &vars);
    let escaped = css_escape(template);
    for c in ['"', '\'', ']', ')', ',', '{', '}'] {
        assert!(
            !escaped.contains(c) || escaped.contains(&format!("\\{c}")),
            "{c:?} left unescaped in {escaped:?}"
        );
    }
});
