//! What a key name means for synthetic keyboard events: its `code`, the legacy `keyCode`/`which`
//! many apps still check (TodoMVC tests `keyCode === 13`), and the `charCode` of its `keypress`
//! (only printable keys and Enter fire one).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub key: String,
    pub code: String,
    pub key_code: u32,
    /// `Some(charCode)` when the key fires `keypress`.
    pub char_code: Option<u32>,
}

const NAMED: &[(&str, &str, u32)] = &[
    ("Enter", "Enter", 13),
    ("Tab", "Tab", 9),
    ("Escape", "Escape", 27),
    ("Backspace", "Backspace", 8),
    ("Delete", "Delete", 46),
    ("ArrowLeft", "ArrowLeft", 37),
    ("ArrowUp", "ArrowUp", 38),
    ("ArrowRight", "ArrowRight", 39),
    ("ArrowDown", "ArrowDown", 40),
    ("Home", "Home", 36),
    ("End", "End", 35),
    ("PageUp", "PageUp", 33),
    ("PageDown", "PageDown", 34),
];

pub fn key_info(key: &str) -> KeyInfo {
    let key = match key {
        "Space" | "Spacebar" => " ",
        "Esc" => "Escape",
        "Return" => "Enter",
        other => other,
    };
    if let Some((name, code, key_code)) = NAMED.iter().find(|(name, ..)| *name == key) {
        return KeyInfo {
            key: (*name).to_owned(),
            code: (*code).to_owned(),
            key_code: *key_code,
            char_code: (*name == "Enter").then_some(13),
        };
    }
    let mut chars = key.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => {
            let upper = c.to_ascii_uppercase();
            let (code, key_code) = if c.is_ascii_alphabetic() {
                (format!("Key{upper}"), upper as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else if c == ' ' {
                ("Space".to_owned(), 32)
            } else {
                (String::new(), 0)
            };
            KeyInfo {
                key: c.to_string(),
                code,
                key_code,
                char_code: Some(c as u32),
            }
        }
        _ => KeyInfo {
            key: key.to_owned(),
            code: key.to_owned(),
            key_code: 0,
            char_code: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_printable_keys() {
        let enter = key_info("Enter");
        assert_eq!(
            (enter.code.as_str(), enter.key_code, enter.char_code),
            ("Enter", 13, Some(13))
        );
        assert_eq!(key_info("Escape").char_code, None);
        assert_eq!(key_info("Esc").key_code, 27);
        let a = key_info("a");
        assert_eq!(
            (a.code.as_str(), a.key_code, a.char_code),
            ("KeyA", 65, Some(97))
        );
        let space = key_info("Space");
        assert_eq!(
            (space.key.as_str(), space.code.as_str(), space.key_code),
            (" ", "Space", 32)
        );
        assert_eq!(key_info("7").code, "Digit7");
        assert_eq!(key_info("F5").key_code, 0);
    }
}
