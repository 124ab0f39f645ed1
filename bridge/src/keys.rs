//! Keys and key chords as adapters write them (`Enter`, `a`, `Shift+Enter`, `Control+a`, `Mod+s`):
//! the one parser that the adapter validator (a bad chord is a located problem when the file loads)
//! and the page runtime (which turns a chord into keyboard events) share, and what each key means to
//! a page's scripts: its `key` (with and without Shift), its `code` on a US keyboard, the legacy
//! `keyCode` many apps still test, and whether it types a character (fires `keypress`).

use std::fmt;

/// A modifier key as the page sees it (`shiftKey`, `ctrlKey`, `altKey`, `metaKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    Shift,
    Control,
    Alt,
    Meta,
}

impl Modifier {
    /// The modifier key's own `key`, `code` and `keyCode` (its left-hand key).
    pub fn key(self) -> Key {
        let (name, code, key_code) = match self {
            Modifier::Shift => ("Shift", "ShiftLeft", 16),
            Modifier::Control => ("Control", "ControlLeft", 17),
            Modifier::Alt => ("Alt", "AltLeft", 18),
            Modifier::Meta => ("Meta", "MetaLeft", 91),
        };
        Key::named(name, code, key_code)
    }
}

/// A modifier as written in a chord: `Mod` is Meta (⌘) on macOS and Control elsewhere, decided by
/// the page's platform when the chord is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChordModifier {
    Fixed(Modifier),
    Mod,
}

/// The platform that decides what `Mod` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    MacOs,
    Other,
}

/// One key: what keyboard events carry for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `key` without Shift (`a`, `1`, `Enter`).
    pub key: String,
    /// `key` with Shift held (`A`, `!`, `Enter`).
    pub shifted: String,
    /// `code`: the physical key on a US layout (`KeyA`, `Digit1`, `Enter`); empty for characters
    /// no US key types.
    pub code: String,
    /// The legacy `keyCode`/`which` of `keydown` and `keyup` (0 when there is none).
    pub key_code: u32,
    /// Whether the key types something (a character, or Enter): only such keys fire `keypress`.
    pub types: bool,
}

impl Key {
    fn named(name: &str, code: &str, key_code: u32) -> Key {
        Key {
            key: name.to_owned(),
            shifted: name.to_owned(),
            code: code.to_owned(),
            key_code,
            types: name == "Enter",
        }
    }

    /// The `key` value with or without Shift.
    pub fn key_with(&self, shift: bool) -> &str {
        if shift { &self.shifted } else { &self.key }
    }

    /// The `charCode` of its `keypress` (the character typed, or 13 for Enter).
    pub fn char_code(&self, shift: bool) -> u32 {
        let key = self.key_with(shift);
        let mut chars = key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => c as u32,
            _ => 13,
        }
    }
}

/// A parsed chord: the modifiers held (in the order written) around one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord {
    pub modifiers: Vec<ChordModifier>,
    pub key: Key,
}

impl Chord {
    /// The modifiers as the page's `platform` resolves them.
    pub fn resolved_modifiers(&self, platform: Platform) -> Vec<Modifier> {
        self.modifiers
            .iter()
            .map(|m| match (m, platform) {
                (ChordModifier::Fixed(m), _) => *m,
                (ChordModifier::Mod, Platform::MacOs) => Modifier::Meta,
                (ChordModifier::Mod, Platform::Other) => Modifier::Control,
            })
            .collect()
    }
}

/// Why a chord does not parse; its message names the part that is wrong and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChordError(String);

impl fmt::Display for ChordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ChordError {}

/// Named keys: (name, code, keyCode). Names are matched without regard to case.
const NAMED: &[(&str, &str, u32)] = &[
    ("Enter", "Enter", 13),
    ("Tab", "Tab", 9),
    ("Escape", "Escape", 27),
    ("Backspace", "Backspace", 8),
    ("Delete", "Delete", 46),
    ("Insert", "Insert", 45),
    ("ArrowLeft", "ArrowLeft", 37),
    ("ArrowUp", "ArrowUp", 38),
    ("ArrowRight", "ArrowRight", 39),
    ("ArrowDown", "ArrowDown", 40),
    ("Home", "Home", 36),
    ("End", "End", 35),
    ("PageUp", "PageUp", 33),
    ("PageDown", "PageDown", 34),
    ("ContextMenu", "ContextMenu", 93),
    ("F1", "F1", 112),
    ("F2", "F2", 113),
    ("F3", "F3", 114),
    ("F4", "F4", 115),
    ("F5", "F5", 116),
    ("F6", "F6", 117),
    ("F7", "F7", 118),
    ("F8", "F8", 119),
    ("F9", "F9", 120),
    ("F10", "F10", 121),
    ("F11", "F11", 122),
    ("F12", "F12", 123),
];

/// Other spellings of named keys and modifiers.
const ALIASES: &[(&str, &str)] = &[
    ("Esc", "Escape"),
    ("Return", "Enter"),
    ("Del", "Delete"),
    ("Spacebar", "Space"),
    ("Ctrl", "Control"),
    ("Cmd", "Meta"),
    ("Command", "Meta"),
    ("Option", "Alt"),
];

/// The US layout's character keys: (unshifted, shifted, code, keyCode). Letters and digits are
/// computed.
const PUNCTUATION: &[(char, char, &str, u32)] = &[
    (' ', ' ', "Space", 32),
    ('-', '_', "Minus", 189),
    ('=', '+', "Equal", 187),
    ('[', '{', "BracketLeft", 219),
    (']', '}', "BracketRight", 221),
    ('\\', '|', "Backslash", 220),
    (';', ':', "Semicolon", 186),
    ('\'', '"', "Quote", 222),
    (',', '<', "Comma", 188),
    ('.', '>', "Period", 190),
    ('/', '?', "Slash", 191),
    ('`', '~', "Backquote", 192),
];
const SHIFTED_DIGITS: &str = ")!@#$%^&*(";

const MODIFIERS_EXPECTED: &str =
    "expected Shift, Control, Alt, Meta or Mod (Meta on macOS, Control elsewhere)";

fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, to)| to)
}

fn modifier(name: &str) -> Option<ChordModifier> {
    let name = canonical(name);
    [
        ("Shift", ChordModifier::Fixed(Modifier::Shift)),
        ("Control", ChordModifier::Fixed(Modifier::Control)),
        ("Alt", ChordModifier::Fixed(Modifier::Alt)),
        ("Meta", ChordModifier::Fixed(Modifier::Meta)),
        ("Mod", ChordModifier::Mod),
    ]
    .into_iter()
    .find(|(n, _)| n.eq_ignore_ascii_case(name))
    .map(|(_, m)| m)
}

/// One key by its name: a single character, or a named key (`Enter`, `Space`, `F5`, ...), or a
/// modifier pressed alone (`Shift`; `Mod` is not a key).
pub fn parse_key(name: &str) -> Result<Key, ChordError> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(character(c));
    }
    let name = canonical(name);
    if name.eq_ignore_ascii_case("Space") {
        return Ok(character(' '));
    }
    if let Some((key, code, key_code)) = NAMED.iter().find(|(n, ..)| n.eq_ignore_ascii_case(name)) {
        return Ok(Key::named(key, code, *key_code));
    }
    if let Some(ChordModifier::Fixed(m)) = modifier(name) {
        return Ok(m.key());
    }
    Err(ChordError(format!(
        "unknown key {name:?}: expected one character or a key name ({}, Space, F1-F12, \
         or a modifier: Shift, Control, Alt, Meta)",
        NAMED
            .iter()
            .map(|(n, ..)| *n)
            .filter(|n| !n.starts_with('F') || n.len() == 1)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

fn character(c: char) -> Key {
    let one = |c: char| c.to_string();
    if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        return Key {
            key: one(c),
            shifted: one(upper),
            code: format!("Key{upper}"),
            key_code: upper as u32,
            types: true,
        };
    }
    if let Some(digit) = c.to_digit(10) {
        return Key {
            key: one(c),
            shifted: one(SHIFTED_DIGITS.as_bytes()[digit as usize] as char),
            code: format!("Digit{c}"),
            key_code: c as u32,
            types: true,
        };
    }
    if let Some(i) = SHIFTED_DIGITS.find(c) {
        return Key {
            key: one(c),
            shifted: one(c),
            code: format!("Digit{i}"),
            key_code: '0' as u32 + i as u32,
            types: true,
        };
    }
    match PUNCTUATION
        .iter()
        .find(|(plain, shifted, ..)| *plain == c || *shifted == c)
    {
        Some((plain, shifted, code, key_code)) => Key {
            key: one(c),
            shifted: one(if *plain == c { *shifted } else { c }),
            code: (*code).to_owned(),
            key_code: *key_code,
            types: true,
        },
        // A character no US key types (é, ✓): it still types itself.
        None => Key {
            key: one(c),
            shifted: one(c),
            code: String::new(),
            key_code: 0,
            types: !c.is_control(),
        },
    }
}

/// A key or a chord: modifiers and one key joined by `+` (`Shift+Enter`, `Control+Alt+Delete`,
/// `Mod+s`; `+` itself is `Shift++` or `+`). Names of keys and modifiers are matched without regard
/// to case, except single characters (`a` and `A` are different keys).
pub fn parse_chord(chord: &str) -> Result<Chord, ChordError> {
    if chord.is_empty() {
        return Err(ChordError(
            "expected a key such as \"Enter\" or a chord such as \"Shift+Enter\"".to_owned(),
        ));
    }
    let (held, key) = if chord == "+" {
        ("", "+")
    } else if let Some(held) = chord.strip_suffix("++") {
        (held, "+")
    } else {
        match chord.rsplit_once('+') {
            Some((_, "")) => {
                return Err(ChordError(format!(
                    "{chord:?} ends with \"+\": expected a key after it (the key \"+\" itself is written \"Shift++\")"
                )));
            }
            Some((held, key)) => (held, key),
            None => ("", chord),
        }
    };
    let mut modifiers = Vec::new();
    if !held.is_empty() {
        for name in held.split('+') {
            let m = modifier(name).ok_or_else(|| {
                ChordError(if name.is_empty() {
                    format!("{chord:?} has an empty part between two \"+\": {MODIFIERS_EXPECTED}")
                } else {
                    format!("{name:?} in {chord:?} is not a modifier: {MODIFIERS_EXPECTED}")
                })
            })?;
            if modifiers.contains(&m) {
                return Err(ChordError(format!("{name:?} appears twice in {chord:?}")));
            }
            modifiers.push(m);
        }
    }
    let key = parse_key(key).map_err(|e| {
        if held.is_empty() {
            e
        } else {
            ChordError(format!("in {chord:?}: {e}"))
        }
    })?;
    Ok(Chord { modifiers, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chord: &str) -> Chord {
        parse_chord(chord).unwrap_or_else(|e| panic!("{chord}: {e}"))
    }

    #[test]
    fn single_keys_carry_key_code_and_key_code() {
        let enter = parse("Enter").key;
        assert_eq!(
            (
                enter.key.as_str(),
                enter.code.as_str(),
                enter.key_code,
                enter.types
            ),
            ("Enter", "Enter", 13, true)
        );
        assert_eq!(enter.char_code(false), 13);
        let a = parse("a").key;
        assert_eq!(
            (
                a.key.as_str(),
                a.shifted.as_str(),
                a.code.as_str(),
                a.key_code
            ),
            ("a", "A", "KeyA", 65)
        );
        assert_eq!(a.char_code(false), 97);
        assert_eq!(a.char_code(true), 65);
        let seven = parse("7").key;
        assert_eq!(
            (seven.shifted.as_str(), seven.code.as_str(), seven.key_code),
            ("&", "Digit7", 55)
        );
        let bang = parse("!").key;
        assert_eq!(
            (bang.key.as_str(), bang.code.as_str(), bang.key_code),
            ("!", "Digit1", 49)
        );
        let quote = parse("\"").key;
        assert_eq!((quote.code.as_str(), quote.key_code), ("Quote", 222));
        let space = parse("Space").key;
        assert_eq!(
            (space.key.as_str(), space.code.as_str(), space.key_code),
            (" ", "Space", 32)
        );
        let e = parse("é").key;
        assert_eq!((e.code.as_str(), e.key_code, e.types), ("", 0, true));
        let escape = parse("esc").key;
        assert_eq!((escape.key.as_str(), escape.types), ("Escape", false));
        assert_eq!(parse("F5").key.key_code, 116);
        assert_eq!(parse("shift").key, Modifier::Shift.key());
    }

    #[test]
    fn chords_list_their_modifiers_in_order() {
        let chord = parse("Shift+Enter");
        assert_eq!(chord.modifiers, [ChordModifier::Fixed(Modifier::Shift)]);
        assert_eq!(chord.key.key, "Enter");
        let chord = parse("ctrl+alt+Delete");
        assert_eq!(
            chord.resolved_modifiers(Platform::Other),
            [Modifier::Control, Modifier::Alt]
        );
        assert_eq!(chord.key.key, "Delete");
        let chord = parse("Mod+s");
        assert_eq!(chord.resolved_modifiers(Platform::MacOs), [Modifier::Meta]);
        assert_eq!(
            chord.resolved_modifiers(Platform::Other),
            [Modifier::Control]
        );
        assert_eq!(
            parse("Cmd+Enter").modifiers,
            [ChordModifier::Fixed(Modifier::Meta)]
        );
        let plus = parse("Shift++");
        assert_eq!((plus.modifiers.len(), plus.key.key.as_str()), (1, "+"));
        assert_eq!(parse("+").key.code, "Equal");
        // A modifier may be the key itself (pressed while others are held).
        assert_eq!(parse("Control+Shift").key.key, "Shift");
    }

    #[test]
    fn bad_chords_say_what_is_wrong() {
        let error = |chord: &str| parse_chord(chord).unwrap_err().to_string();
        assert_eq!(
            error(""),
            "expected a key such as \"Enter\" or a chord such as \"Shift+Enter\""
        );
        assert!(
            error("Entr").starts_with(
                "unknown key \"Entr\": expected one character or a key name (Enter, Tab, Escape,"
            ),
            "{}",
            error("Entr")
        );
        assert!(error("Control+Entr").starts_with("in \"Control+Entr\": unknown key \"Entr\""));
        assert_eq!(
            error("Hyper+a"),
            "\"Hyper\" in \"Hyper+a\" is not a modifier: expected Shift, Control, Alt, Meta or Mod (Meta on macOS, Control elsewhere)"
        );
        assert_eq!(
            error("Shift+Shift+a"),
            "\"Shift\" appears twice in \"Shift+Shift+a\""
        );
        assert_eq!(
            error("Control+"),
            "\"Control+\" ends with \"+\": expected a key after it (the key \"+\" itself is written \"Shift++\")"
        );
        assert!(
            error("Control++a").contains("empty part"),
            "{}",
            error("Control++a")
        );
        assert!(error("a+b").contains("\"a\" in \"a+b\" is not a modifier"));
        assert!(error("Mod").starts_with("unknown key \"Mod\""));
    }
}
