//! Trusted input: what a page's runtime asks the service worker to perform through Chrome's
//! debugger when the user turned trusted input on for the page's origin, as DevTools protocol
//! commands of the `Input` domain (events the browser itself dispatches, `isTrusted` true). Decided
//! here, pure and host-tested: the runtime builds the commands (it knows where the element is),
//! the worker checks each is an `Input` command and sends it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::keys::{Chord, Modifier, Platform};

/// The only DevTools methods a page's runtime may have the worker send: input, nothing else.
pub const INPUT_METHODS: &[&str] = &[
    "Input.dispatchMouseEvent",
    "Input.dispatchKeyEvent",
    "Input.insertText",
];

/// One DevTools protocol command.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Command {
    pub method: String,
    pub params: Value,
}

impl Command {
    fn new(method: &str, params: Value) -> Command {
        Command {
            method: method.to_owned(),
            params,
        }
    }

    /// Whether the worker may send it (an `Input` method: [`INPUT_METHODS`]).
    pub fn is_input(&self) -> bool {
        INPUT_METHODS.contains(&self.method.as_str())
    }
}

/// The DevTools `modifiers` bit field: Alt 1, Control 2, Meta 4, Shift 8.
pub fn modifier_bits(held: &[Modifier]) -> u8 {
    held.iter()
        .map(|m| match m {
            Modifier::Alt => 1,
            Modifier::Control => 2,
            Modifier::Meta => 4,
            Modifier::Shift => 8,
        })
        .fold(0, |bits, bit| bits | bit)
}

fn mouse(kind: &str, x: f64, y: f64, buttons: u8, click_count: u32) -> Command {
    let mut params =
        json!({"type": kind, "x": x, "y": y, "buttons": buttons, "pointerType": "mouse"});
    if kind != "mouseMoved" {
        params["button"] = "left".into();
        params["clickCount"] = click_count.into();
    }
    Command::new("Input.dispatchMouseEvent", params)
}

/// The pointer onto (`x`, `y`) of the top document's viewport (CSS pixels).
pub fn hover(x: f64, y: f64) -> Vec<Command> {
    vec![mouse("mouseMoved", x, y, 0, 0)]
}

/// Press `count` of the left button at (`x`, `y`) (the pointer is there already).
pub fn press(x: f64, y: f64, count: u32) -> Command {
    mouse("mousePressed", x, y, 1, count)
}

/// Release `count` of the left button at (`x`, `y`).
pub fn release(x: f64, y: f64, count: u32) -> Command {
    mouse("mouseReleased", x, y, 0, count)
}

/// The pointer onto (`x`, `y`), then `clicks` presses and releases of the left button (the
/// browser counts a double click from the second's `clickCount` and fires `dblclick` itself).
pub fn click(x: f64, y: f64, clicks: u32) -> Vec<Command> {
    let mut commands = hover(x, y);
    for count in 1..=clicks {
        commands.push(mouse("mousePressed", x, y, 1, count));
        commands.push(mouse("mouseReleased", x, y, 0, count));
    }
    commands
}

/// A drag with the left button held: press at `from`, moves through `steps` points on the way,
/// release at `to` (the browser runs HTML5 drag and drop itself where the source is draggable).
pub fn drag(from: (f64, f64), to: (f64, f64), steps: u32) -> Vec<Command> {
    let mut commands = hover(from.0, from.1);
    commands.push(mouse("mousePressed", from.0, from.1, 1, 1));
    for i in 1..=steps {
        let t = f64::from(i) / f64::from(steps);
        let (x, y) = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
        commands.push(mouse("mouseMoved", x, y, 1, 0));
    }
    commands.push(mouse("mouseReleased", to.0, to.1, 0, 1));
    commands
}

/// Text typed at the focus as an input method commits it (`beforeinput`/`input` with
/// `insertText`, in the editor's own way).
pub fn insert_text(text: &str) -> Command {
    Command::new("Input.insertText", json!({ "text": text }))
}

/// A chord as the keyboard gives it: each modifier's key down (in the order written), the key's
/// down (with the character it types, when it types one and neither Control, Alt nor Meta is held,
/// so the browser fires `keypress` and inserts it), its up, the modifiers' ups in reverse order;
/// every event with the modifiers held at that moment. Select-all on macOS (⌘A) also names the
/// editing command, which the debugger's keys do not run by themselves there.
pub fn chord(chord: &Chord, platform: Platform) -> Vec<Command> {
    let modifiers = chord.resolved_modifiers(platform);
    let mut held: Vec<Modifier> = Vec::new();
    let mut commands = Vec::new();
    let event = |kind: &str, key: &crate::keys::Key, held: &[Modifier], location: u32| {
        let shift = held.contains(&Modifier::Shift);
        let mut params = json!({
            "type": kind,
            "modifiers": modifier_bits(held),
            "key": key.key_with(shift),
            "code": key.code,
            "windowsVirtualKeyCode": key.key_code,
            "nativeVirtualKeyCode": key.key_code,
            "location": location,
        });
        let plain = !held
            .iter()
            .any(|m| matches!(m, Modifier::Control | Modifier::Alt | Modifier::Meta));
        if kind == "keyDown" && key.types && plain {
            let text = match key.key_with(shift) {
                "Enter" => "\r",
                typed => typed,
            };
            params["text"] = text.into();
            params["unmodifiedText"] = text.into();
        }
        params
    };
    for modifier in &modifiers {
        held.push(*modifier);
        let params = event("rawKeyDown", &modifier.key(), &held, 1);
        commands.push(Command::new("Input.dispatchKeyEvent", params));
    }
    let key = &chord.key;
    let typing = key.types && held.iter().all(|m| *m == Modifier::Shift);
    let mut down = event(if typing { "keyDown" } else { "rawKeyDown" }, key, &held, 0);
    if platform == Platform::MacOs && held == [Modifier::Meta] && key.key == "a" {
        down["commands"] = json!(["selectAll"]);
    }
    commands.push(Command::new("Input.dispatchKeyEvent", down));
    commands.push(Command::new(
        "Input.dispatchKeyEvent",
        event("keyUp", key, &held, 0),
    ));
    while let Some(modifier) = held.pop() {
        let params = event("keyUp", &modifier.key(), &held, 1);
        commands.push(Command::new("Input.dispatchKeyEvent", params));
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::parse_chord;

    fn params(commands: &[Command]) -> Vec<Value> {
        commands.iter().map(|c| c.params.clone()).collect()
    }

    #[test]
    fn a_click_moves_then_presses_and_releases_the_left_button() {
        let commands = click(10.5, 20.0, 2);
        assert!(commands.iter().all(Command::is_input));
        let all = params(&commands);
        let kinds: Vec<(&str, u64)> = all
            .iter()
            .map(|p| {
                (
                    p["type"].as_str().unwrap(),
                    p["clickCount"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("mouseMoved", 0),
                ("mousePressed", 1),
                ("mouseReleased", 1),
                ("mousePressed", 2),
                ("mouseReleased", 2),
            ]
        );
        assert_eq!(commands[1].params["button"], "left");
        assert_eq!(commands[1].params["buttons"], 1);
        assert_eq!(commands[2].params["buttons"], 0);
        assert_eq!(
            (
                commands[1].params["x"].as_f64(),
                commands[1].params["y"].as_f64()
            ),
            (Some(10.5), Some(20.0))
        );
    }

    #[test]
    fn a_typing_key_carries_its_text_and_a_chord_its_modifiers_in_order() {
        let a = params(&chord(&parse_chord("a").unwrap(), Platform::Other));
        assert_eq!(a.len(), 2);
        assert_eq!(
            (a[0]["type"].as_str(), a[0]["text"].as_str()),
            (Some("keyDown"), Some("a"))
        );
        assert_eq!(
            (
                a[0]["code"].as_str(),
                a[0]["windowsVirtualKeyCode"].as_u64()
            ),
            (Some("KeyA"), Some(65))
        );
        assert_eq!(a[1]["type"], "keyUp");

        let shift_tab = params(&chord(&parse_chord("Shift+Tab").unwrap(), Platform::Other));
        let seen: Vec<(String, String, u64)> = shift_tab
            .iter()
            .map(|p| {
                (
                    p["type"].as_str().unwrap().to_owned(),
                    p["key"].as_str().unwrap().to_owned(),
                    p["modifiers"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected = [
            ("rawKeyDown", "Shift", 8),
            ("rawKeyDown", "Tab", 8),
            ("keyUp", "Tab", 8),
            ("keyUp", "Shift", 0),
        ];
        assert_eq!(
            seen,
            expected.map(|(t, k, m)| (t.to_owned(), k.to_owned(), m))
        );
        assert!(
            shift_tab.iter().all(|p| p.get("text").is_none()),
            "Tab types nothing"
        );
        assert_eq!(shift_tab[0]["location"], 1);

        // Control+a selects, it does not type: no text, Control held on the key's events.
        let select = params(&chord(&parse_chord("Control+a").unwrap(), Platform::Other));
        assert_eq!(select[1]["type"], "rawKeyDown");
        assert_eq!(select[1]["modifiers"], 2);
        assert!(select[1].get("text").is_none() && select[1].get("commands").is_none());

        // Shift+a types "A".
        let shifted = params(&chord(&parse_chord("Shift+a").unwrap(), Platform::Other));
        assert_eq!(
            (shifted[1]["key"].as_str(), shifted[1]["text"].as_str()),
            (Some("A"), Some("A"))
        );
        // Enter types a carriage return, as a keyboard's Enter does.
        let enter = params(&chord(&parse_chord("Enter").unwrap(), Platform::Other));
        assert_eq!(enter[0]["text"], "\r");
    }

    #[test]
    fn mod_is_meta_on_macos_and_select_all_names_its_command_there() {
        let mac = params(&chord(&parse_chord("Mod+a").unwrap(), Platform::MacOs));
        assert_eq!(
            (mac[0]["key"].as_str(), mac[0]["modifiers"].as_u64()),
            (Some("Meta"), Some(4))
        );
        assert_eq!(mac[1]["commands"], json!(["selectAll"]));
        let other = params(&chord(&parse_chord("Mod+a").unwrap(), Platform::Other));
        assert_eq!(
            (other[0]["key"].as_str(), other[0]["modifiers"].as_u64()),
            (Some("Control"), Some(2))
        );
        assert!(other[1].get("commands").is_none());
        let all = params(&chord(
            &parse_chord("Control+Alt+Shift+Meta+x").unwrap(),
            Platform::Other,
        ));
        assert_eq!(all[4]["modifiers"], 15);
        assert_eq!(all.last().unwrap()["modifiers"], 0);
    }

    #[test]
    fn only_input_methods_pass() {
        assert!(insert_text("héllo\t<&>").is_input());
        assert_eq!(insert_text("x").params, json!({"text": "x"}));
        let evaluate = Command::new("Runtime.evaluate", json!({"expression": "1"}));
        assert!(!evaluate.is_input());
    }
}
