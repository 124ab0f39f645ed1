//! Host tests of the input module's decisions, over the fake DOM.

use super::*;
use crate::fake_dom::{FakeDom, FakeNode, block_on};
use bridge::keys::parse_chord;

/// The root (0), a panel (1), a button (2) with a label inside (3), and an input (4).
fn page() -> FakeDom {
    let dom = FakeDom::default();
    dom.add(FakeNode {
        tag: "body",
        ..Default::default()
    });
    dom.add(FakeNode {
        parent: Some(0),
        centre: Some((50.0, 50.0)),
        ..Default::default()
    });
    dom.add(FakeNode {
        parent: Some(1),
        tag: "button",
        centre: Some((40.0, 30.0)),
        text: "Run".into(),
        ..Default::default()
    });
    dom.add(FakeNode {
        parent: Some(2),
        tag: "span",
        ..Default::default()
    });
    dom.add(FakeNode {
        parent: Some(1),
        tag: "input",
        value: Some("old".into()),
        ..Default::default()
    });
    dom
}

/// An editor of kind `entry` in the panel (1), holding `text`.
fn editor(dom: &FakeDom, entry: TextEntry, text: &str) -> usize {
    dom.add(FakeNode {
        parent: Some(1),
        entry: Some(entry),
        text: text.into(),
        ..Default::default()
    })
}

fn events(dom: &FakeDom) -> Vec<String> {
    dom.events.borrow().clone()
}

#[test]
fn a_click_is_the_press_sequence_chromium_dispatches() {
    let dom = page();
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(
        events(&dom),
        [
            "pointerover 2",
            "pointerenter 0",
            "pointerenter 1",
            "pointerenter 2",
            "mouseover 2",
            "mouseenter 0",
            "mouseenter 1",
            "mouseenter 2",
            "pointermove 2",
            "mousemove 2",
            "pointerdown 2",
            "mousedown 2",
            "focus 2",
            "microtask",
            "pointerup 2",
            "mouseup 2",
            "click 2"
        ]
    );
    let mouse = dom.mouse.borrow().clone();
    let field = |kind: MouseKind| {
        let (_, e) = mouse.iter().find(|(_, e)| e.kind == kind).unwrap();
        (e.button, e.buttons, e.detail, e.at, e.pressure())
    };
    let at = Point { x: 40.0, y: 30.0 };
    assert_eq!(field(MouseKind::PointerMove), (-1, 0, 0, at, 0.0));
    assert_eq!(field(MouseKind::MouseOver), (0, 0, 0, at, 0.0));
    assert_eq!(field(MouseKind::PointerDown), (0, 1, 0, at, 0.5));
    assert_eq!(field(MouseKind::MouseDown), (0, 1, 1, at, 0.5));
    assert_eq!(field(MouseKind::PointerUp), (0, 0, 0, at, 0.0));
    assert_eq!(field(MouseKind::Click), (0, 0, 1, at, 0.0));
    assert!(MouseKind::Click.is_pointer_event() && !MouseKind::Click.is_primary());
    assert!(MouseKind::PointerDown.is_primary() && !MouseKind::PointerEnter.bubbles());
    assert!(!MouseKind::Dblclick.is_pointer_event());
    assert_eq!(dom.active.get(), Some(2));

    // A second click on the same element: the pointer is already there.
    dom.events.borrow_mut().clear();
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(
        events(&dom)[..3],
        ["pointermove 2", "mousemove 2", "pointerdown 2"]
    );
}

#[test]
fn cancelled_presses_suppress_what_chromium_suppresses() {
    // The event the page cancels, and the events of the press that follow (after the 10 of the
    // pointer's approach).
    let cases: [(&str, &[&str]); 2] = [
        (
            "pointerdown",
            &["pointerdown 2", "microtask", "pointerup 2", "click 2"],
        ),
        (
            "mousedown",
            &[
                "pointerdown 2",
                "mousedown 2",
                "microtask",
                "pointerup 2",
                "mouseup 2",
                "click 2",
            ],
        ),
    ];
    for (cancelled, pressed) in cases {
        let dom = page();
        dom.cancel.borrow_mut().push(cancelled);
        block_on(click(&dom, &2, 1, 0.0)).unwrap();
        assert_eq!(events(&dom)[10..], *pressed, "{cancelled} cancelled");
        assert_eq!(dom.active.get(), None, "no focus after a cancelled press");
    }
}

#[test]
fn a_double_click_is_two_presses_then_dblclick() {
    let dom = page();
    block_on(click(&dom, &2, 2, 0.0)).unwrap();
    let presses: Vec<(String, i32)> = dom
        .mouse
        .borrow()
        .iter()
        .filter(|(_, e)| {
            matches!(
                e.kind,
                MouseKind::MouseDown | MouseKind::MouseUp | MouseKind::Click | MouseKind::Dblclick
            )
        })
        .map(|(_, e)| (e.kind.name().to_owned(), e.detail))
        .collect();
    let expected: Vec<(String, i32)> = [
        ("mousedown", 1),
        ("mouseup", 1),
        ("click", 1),
        ("mousedown", 2),
        ("mouseup", 2),
        ("click", 2),
        ("dblclick", 2),
    ]
    .into_iter()
    .map(|(k, d)| (k.to_owned(), d))
    .collect();
    assert_eq!(presses, expected);
}

#[test]
fn an_element_a_person_could_not_press_is_refused_and_named() {
    let dom = page();
    let cover = dom.add(FakeNode {
        parent: Some(0),
        selectors: vec![],
        text: "  Please   wait while we load everything you asked for ".into(),
        ..Default::default()
    });
    dom.nodes.borrow_mut()[2].covered_by = Some(cover);
    let err = block_on(click(&dom, &2, 1, 0.0)).unwrap_err();
    assert_eq!(
        err,
        Refusal::Covered {
            by: "<div id=\"n5\"> \"Please wait while we load everything you…\"".into(),
            at: Point { x: 40.0, y: 30.0 }
        }
    );
    assert_eq!(
        err.to_string(),
        "is covered by <div id=\"n5\"> \"Please wait while we load everything you…\", which is at its centre (40, 30): a person's click would land there"
    );
    // It was scrolled to the middle of the view once, as a person would try; nothing was dispatched.
    assert_eq!(events(&dom), ["scroll 2"]);

    // What is at the centre may be inside the element, or a label for it: events go there.
    dom.nodes.borrow_mut()[2].covered_by = Some(3);
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(events(&dom).last().unwrap(), "click 3");
    let label = dom.add(FakeNode {
        tag: "label",
        label_for: Some(2),
        ..Default::default()
    });
    dom.nodes.borrow_mut()[2].covered_by = Some(label);
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(events(&dom).last().unwrap(), &format!("click {label}"));

    // Its own container at its centre (the button is clipped away): the container would take
    // the click.
    dom.nodes.borrow_mut()[2].covered_by = Some(1);
    let err = block_on(click(&dom, &2, 1, 0.0)).unwrap_err();
    assert!(matches!(err, Refusal::Covered { .. }), "{err}");

    dom.nodes.borrow_mut()[2].covered_by = None;
    dom.nodes.borrow_mut()[2].disabled = true;
    assert_eq!(block_on(click(&dom, &2, 1, 0.0)), Err(Refusal::Disabled));
    assert!(
        block_on(hover(&dom, &2, 0.0)).is_ok(),
        "a disabled element can be hovered"
    );
    dom.nodes.borrow_mut()[2].attached = false;
    assert_eq!(block_on(click(&dom, &2, 1, 0.0)), Err(Refusal::Detached));
}

#[test]
fn a_cover_that_goes_away_soon_is_waited_for() {
    let dom = page();
    dom.nodes.borrow_mut()[2].covered_by = Some(4);
    *dom.on_settle.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        if dom.now.get() >= 120.0 {
            dom.nodes.borrow_mut()[2].covered_by = None;
        }
    }));
    block_on(click(&dom, &2, 1, 1000.0)).unwrap();
    assert_eq!(dom.now.get(), 150.0, "looked again every 50 ms");
    assert_eq!(events(&dom).last().unwrap(), "click 2");
    // One that stays is refused once the patience ran out.
    dom.nodes.borrow_mut()[2].covered_by = Some(4);
    *dom.on_settle.borrow_mut() = None;
    let err = block_on(click(&dom, &2, 1, 300.0)).unwrap_err();
    assert!(matches!(err, Refusal::Covered { .. }), "{err}");
    assert_eq!(dom.now.get(), 450.0);
}

#[test]
fn a_covered_element_is_scrolled_out_from_under_a_fixed_bar_first() {
    let dom = page();
    dom.nodes.borrow_mut()[2].covered_by = Some(4);
    dom.nodes.borrow_mut()[2].cover_scrolls_off = true;
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(dom.now.get(), 0.0, "no waiting: the scroll freed it");
    assert_eq!(events(&dom).last().unwrap(), "click 2");
    let seen = events(&dom);
    assert!(seen.iter().any(|e| e == "scroll 2"), "{seen:?}");
}

#[test]
fn an_element_without_a_box_gets_the_events_itself() {
    let dom = page();
    dom.nodes.borrow_mut()[2].centre = None;
    dom.nodes.borrow_mut()[2].covered_by = Some(4);
    block_on(click(&dom, &2, 1, 0.0)).unwrap();
    assert_eq!(events(&dom).last().unwrap(), "click 2");
    // At the centre of the ancestor a person would point at to reveal it.
    assert_eq!(dom.mouse.borrow()[0].1.at, Point { x: 50.0, y: 50.0 });
}

#[test]
fn the_pointer_leaves_where_it_was_and_enters_only_new_ancestors() {
    let dom = page();
    block_on(hover(&dom, &4, 0.0)).unwrap();
    dom.events.borrow_mut().clear();
    dom.nodes.borrow_mut()[4].centre = Some((10.0, 10.0));
    block_on(hover(&dom, &3, 0.0)).unwrap();
    assert_eq!(
        events(&dom),
        [
            "pointerout 4",
            "pointerleave 4",
            "pointerover 3",
            "pointerenter 2",
            "pointerenter 3",
            "mouseout 4",
            "mouseleave 4",
            "mouseover 3",
            "mouseenter 2",
            "mouseenter 3",
            "pointermove 3",
            "mousemove 3"
        ]
    );
    assert_eq!(dom.pointer.get(), Some(3));
}

fn press_chord(dom: &FakeDom, chord: &str) -> bool {
    let mut defaulted = false;
    press(dom, &4, &parse_chord(chord).unwrap(), || defaulted = true);
    defaulted
}

#[test]
fn chords_hold_their_modifiers_around_the_key() {
    let dom = page();
    assert!(press_chord(&dom, "Shift+Enter"));
    assert_eq!(
        events(&dom),
        [
            "keydown 4 Shift 16 ShiftLeftS",
            "keydown 4 Enter 13 EnterS",
            "keypress 4 Enter 13 EnterS",
            "keyup 4 Enter 13 EnterS",
            "keyup 4 Shift 16 ShiftLeft"
        ]
    );
    // Control and Meta type nothing: no keypress, no default action.
    dom.events.borrow_mut().clear();
    assert!(!press_chord(&dom, "Control+a"));
    assert_eq!(
        events(&dom),
        [
            "keydown 4 Control 17 ControlLeftC",
            "keydown 4 a 65 KeyAC",
            "keyup 4 a 65 KeyAC",
            "keyup 4 Control 17 ControlLeft"
        ]
    );
    // Mod is Meta on macOS, Control elsewhere; Shift gives the shifted key.
    dom.events.borrow_mut().clear();
    dom.platform.set(Some(bridge::keys::Platform::MacOs));
    press_chord(&dom, "Mod+Shift+z");
    assert_eq!(
        events(&dom),
        [
            "keydown 4 Meta 91 MetaLeftM",
            "keydown 4 Shift 16 ShiftLeftMS",
            "keydown 4 Z 90 KeyZMS",
            "keyup 4 Z 90 KeyZMS",
            "keyup 4 Shift 16 ShiftLeftM",
            "keyup 4 Meta 91 MetaLeft"
        ]
    );
    // A cancelled keydown stops the keypress and the default action.
    dom.events.borrow_mut().clear();
    dom.cancel.borrow_mut().push("keydown");
    assert!(!press_chord(&dom, "Enter"));
    assert_eq!(
        events(&dom),
        ["keydown 4 Enter 13 Enter", "keyup 4 Enter 13 Enter"]
    );
}

#[test]
fn keypress_carries_the_typed_character() {
    let dom = page();
    press(&dom, &4, &parse_chord("Shift+a").unwrap(), || {});
    let chord = parse_chord("Shift+a").unwrap();
    let shift = Modifiers {
        shift: true,
        ..Modifiers::default()
    };
    let event = KeyEvent::new(KeyKind::Press, &chord.key, shift, 0);
    assert_eq!(
        (event.key.as_str(), event.key_code, event.char_code),
        ("A", 65, 65)
    );
    let event = KeyEvent::new(KeyKind::Down, &chord.key, Modifiers::default(), 0);
    assert_eq!(
        (event.key.as_str(), event.key_code, event.char_code),
        ("a", 65, 0)
    );
}

#[test]
fn a_text_control_gets_its_value_through_the_setter_and_input_events() {
    let dom = page();
    let check = block_on(fill(&dom, &4, "new\r\nline")).unwrap();
    assert_eq!(
        events(&dom),
        [
            "focus 4",
            "beforeinput 4 insertText new\nline",
            "input 4 insertText new\nline"
        ]
    );
    assert!(block_on(check.verify(&dom)).is_ok());
    assert_eq!(dom.nodes.borrow()[4].value.as_deref(), Some("new\nline"));

    // Clearing deletes; a page that cancels beforeinput keeps its value, and so does one
    // that puts the old value back: both are no effect.
    dom.events.borrow_mut().clear();
    block_on(block_on(fill(&dom, &4, "")).unwrap().verify(&dom)).unwrap();
    assert_eq!(
        events(&dom),
        [
            "beforeinput 4 deleteContentBackward ",
            "input 4 deleteContentBackward "
        ]
    );
    dom.cancel.borrow_mut().push("beforeinput");
    let err = block_on(block_on(fill(&dom, &4, "x")).unwrap().verify(&dom)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "holds \"\" after the edit, not \"x\": the edit did not stick"
    );
    dom.cancel.borrow_mut().clear();
    dom.rejects_values.set(true);
    let err = block_on(block_on(fill(&dom, &4, "y")).unwrap().verify(&dom)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "holds \"\" after the edit, not \"y\": the edit did not stick"
    );

    dom.nodes.borrow_mut()[4].read_only = true;
    assert_eq!(
        block_on(fill(&dom, &4, "z")).err().unwrap(),
        Refusal::ReadOnly
    );
    dom.nodes.borrow_mut()[4].disabled = true;
    assert_eq!(
        block_on(fill(&dom, &4, "z")).err().unwrap(),
        Refusal::Disabled
    );
    assert_eq!(
        block_on(fill(&dom, &2, "z")).err().unwrap(),
        Refusal::NotEditable
    );
}

#[test]
fn an_editor_gets_lines_through_editing_commands() {
    let dom = page();
    let editor = editor(&dom, TextEntry::ContentEditable, "old text");
    let checkpoints = dom.checkpoints.get();
    let check = block_on(fill(&dom, &editor, "a \"b\"\n\n\tc")).unwrap();
    let n = editor;
    // Text as Chromium inserts typed text; each line break as an Enter key whose default action
    // is the same for `insertParagraph` (its `textInput` is the line break).
    let enter = |n: usize| {
        [
            format!("keydown {n} Enter 13 Enter"),
            format!("keypress {n} Enter 13 Enter"),
            format!("beforeinput {n} insertParagraph "),
            format!("textInput {n} \n"),
            "exec insertParagraph ".into(),
            format!("keyup {n} Enter 13 Enter"),
        ]
    };
    let mut wanted = vec![
        format!("focus {n}"),
        format!("select all {n}"),
        format!("beforeinput {n} insertText a \"b\""),
        format!("textInput {n} a \"b\""),
        "exec insertText a \"b\"".into(),
    ];
    wanted.extend(enter(n));
    wanted.extend(enter(n));
    wanted.extend([
        format!("beforeinput {n} insertText \tc"),
        format!("textInput {n} \tc"),
        "exec insertText \tc".into(),
    ]);
    assert_eq!(events(&dom), wanted);
    // The selection's task, then one between each two of the four edits.
    assert_eq!(dom.checkpoints.get() - checkpoints, 1 + 3);
    block_on(check.verify(&dom)).unwrap();
    assert_eq!(dom.nodes.borrow()[n].text, "a \"b\"\n\n\tc");

    // An editor that takes each beforeinput over gets no editing command.
    dom.events.borrow_mut().clear();
    dom.cancel.borrow_mut().push("beforeinput");
    let check = block_on(fill(&dom, &editor, "x")).unwrap();
    assert!(!events(&dom).iter().any(|e| e.starts_with("exec")));
    // ... and when it did nothing with them, the fill had no effect. What it holds is said as
    // compared: one line break between lines, however many `innerText` counts.
    assert_eq!(
        block_on(check.verify(&dom)).unwrap_err().to_string(),
        "holds \"a \\\"b\\\"\\n\\tc\" after the edit, not \"x\": the edit did not stick"
    );
    dom.cancel.borrow_mut().clear();

    // Clearing is Backspace over the selection, its default action the deletion.
    dom.events.borrow_mut().clear();
    let check = block_on(fill(&dom, &editor, "")).unwrap();
    assert_eq!(
        events(&dom),
        [
            format!("select all {n}"),
            format!("keydown {n} Backspace 8 Backspace"),
            format!("beforeinput {n} deleteContentBackward "),
            "exec delete ".into(),
            format!("keyup {n} Backspace 8 Backspace"),
        ]
    );
    block_on(check.verify(&dom)).unwrap();

    // An editor that takes typing from `textInput` (React's `onBeforeInput`: Draft.js) and Enter
    // from its `keydown` cancels them: the browser performs neither.
    dom.events.borrow_mut().clear();
    dom.cancel.borrow_mut().extend(["textInput", "keydown"]);
    block_on(fill(&dom, &editor, "x\ny")).unwrap();
    assert_eq!(
        events(&dom),
        [
            format!("select all {n}"),
            format!("beforeinput {n} insertText x"),
            format!("textInput {n} x"),
            format!("keydown {n} Enter 13 Enter"),
            format!("keyup {n} Enter 13 Enter"),
            format!("beforeinput {n} insertText y"),
            format!("textInput {n} y"),
        ]
    );
}

#[test]
fn an_edit_context_editor_selects_all_by_keys_and_gets_a_paste() {
    let dom = page();
    let editor = editor(&dom, TextEntry::EditContext, "");
    dom.cancel.borrow_mut().push("paste");
    let check = block_on(fill(&dom, &editor, "one\ntwo")).unwrap();
    let n = editor;
    assert_eq!(
        events(&dom),
        [
            format!("focus {n}"),
            format!("keydown {n} Control 17 ControlLeftC"),
            format!("keydown {n} a 65 KeyAC"),
            format!("keyup {n} a 65 KeyAC"),
            format!("keyup {n} Control 17 ControlLeft"),
            format!("paste {n} one\ntwo"),
        ]
    );
    block_on(check.verify(&dom)).unwrap();
    // Clearing: select all, Backspace.
    dom.events.borrow_mut().clear();
    block_on(fill(&dom, &editor, "")).unwrap();
    assert_eq!(
        events(&dom)[4..],
        [
            format!("keydown {n} Backspace 8 Backspace"),
            format!("keyup {n} Backspace 8 Backspace"),
        ]
    );
    // An editor that ignored the paste: nothing changed.
    dom.cancel.borrow_mut().clear();
    let check = block_on(fill(&dom, &editor, "lost")).unwrap();
    assert!(matches!(
        block_on(check.verify(&dom)),
        Err(Refusal::NoEffect(_))
    ));
}

/// The kinds of the trusted commands performed: `type` of mouse and key events, or `insertText`.
/// `page()` with trusted input on: the debugger's commands are recorded (`trusted_kinds`).
fn trusted_page() -> FakeDom {
    let dom = page();
    *dom.trusted.borrow_mut() = Some(Vec::new());
    dom
}

fn trusted_kinds(dom: &FakeDom) -> Vec<String> {
    let done = dom.trusted.borrow().clone().unwrap_or_default();
    done.iter()
        .map(|c| match c.params["type"].as_str() {
            Some(kind) => format!("{kind} {}", c.params["key"].as_str().unwrap_or("")),
            None => format!("insertText {}", c.params["text"].as_str().unwrap_or("")),
        })
        .map(|s| s.trim_end().to_owned())
        .collect()
}

#[test]
fn trusted_input_performs_the_same_decisions_through_the_debugger() {
    let dom = trusted_page();
    block_on(click(&dom, &2, 2, 0.0)).unwrap();
    // No synthetic event: the browser dispatches them, at the element's centre; each press and
    // release after a hit test of its own.
    assert_eq!(events(&dom), ["trusted 1"; 5]);
    let done = dom.trusted.borrow().clone().unwrap();
    assert!(
        done.iter()
            .all(|c| c.params["x"] == 40.0 && c.params["y"] == 30.0)
    );
    assert_eq!(done[4].params["clickCount"], 2);

    // The checks stay: a disabled or covered element is refused before anything is sent.
    dom.nodes.borrow_mut()[2].disabled = true;
    assert_eq!(block_on(click(&dom, &2, 1, 0.0)), Err(Refusal::Disabled));
    dom.nodes.borrow_mut()[2].disabled = false;
    dom.nodes.borrow_mut()[2].covered_by = Some(4);
    assert!(matches!(
        block_on(click(&dom, &2, 1, 0.0)),
        Err(Refusal::Covered { .. })
    ));
    assert_eq!(dom.trusted.borrow().as_ref().unwrap().len(), 5);

    // A chord goes as keys with their modifiers.
    dom.trusted.borrow_mut().as_mut().unwrap().clear();
    block_on(press_trusted(&dom, &parse_chord("Shift+Tab").unwrap())).unwrap();
    assert_eq!(
        trusted_kinds(&dom),
        [
            "rawKeyDown Shift",
            "rawKeyDown Tab",
            "keyUp Tab",
            "keyUp Shift"
        ]
    );

    // What the worker could not do is the refusal, with its code.
    let gone = WireError::new(bridge::ErrorCode::DebuggerUnavailable, "bar cancelled");
    *dom.trusted_fails.borrow_mut() = Some(gone.clone());
    dom.nodes.borrow_mut()[2].covered_by = None;
    let err = block_on(click(&dom, &2, 1, 0.0)).unwrap_err();
    assert_eq!(err, Refusal::Trusted(gone));
    assert_eq!(
        err.to_string(),
        "could not be given trusted input: bar cancelled"
    );
}

#[test]
fn a_trusted_press_is_not_sent_when_the_page_moved_something_under_the_pointer() {
    let dom = trusted_page();
    // The page answers the pointer's arrival by moving another element (a frame) over the target.
    *dom.on_trusted.borrow_mut() = Some(Box::new(|dom: &FakeDom| {
        dom.nodes.borrow_mut()[2].covered_by = Some(4);
    }));
    let refused = block_on(click(&dom, &2, 1, 0.0)).unwrap_err();
    assert!(matches!(refused, Refusal::Covered { .. }), "{refused:?}");
    // The pointer moved; nothing was pressed.
    assert_eq!(trusted_kinds(&dom), ["mouseMoved"]);

    // Moved in between the press and the release: released (no button stays held), and refused.
    dom.nodes.borrow_mut()[2].covered_by = None;
    dom.trusted.borrow_mut().as_mut().unwrap().clear();
    let batches = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen = batches.clone();
    *dom.on_trusted.borrow_mut() = Some(Box::new(move |dom: &FakeDom| {
        seen.set(seen.get() + 1);
        if seen.get() == 2 {
            dom.nodes.borrow_mut()[2].covered_by = Some(4);
        }
    }));
    let refused = block_on(click(&dom, &2, 1, 0.0)).unwrap_err();
    assert!(matches!(refused, Refusal::Covered { .. }), "{refused:?}");
    assert_eq!(
        trusted_kinds(&dom),
        ["mouseMoved", "mousePressed", "mouseReleased"]
    );
}

#[test]
fn a_trusted_fill_selects_all_and_inserts_text_then_checks_the_effect() {
    let dom = trusted_page();
    // A text control: select all, the text as one insertion; the page did not take it (nothing
    // changed the value): NO_EFFECT, as for synthetic input.
    let check = block_on(fill(&dom, &4, "new\tvalue")).unwrap();
    assert_eq!(
        trusted_kinds(&dom),
        [
            "rawKeyDown Control",
            "rawKeyDown a",
            "keyUp a",
            "keyUp Control",
            "insertText new\tvalue"
        ]
    );
    assert!(matches!(
        block_on(check.verify(&dom)),
        Err(Refusal::NoEffect(_))
    ));

    // A contenteditable editor: each line break is an Enter.
    let editor = editor(&dom, TextEntry::ContentEditable, "old");
    dom.trusted.borrow_mut().as_mut().unwrap().clear();
    block_on(fill(&dom, &editor, "a\n\nb")).unwrap();
    assert_eq!(
        trusted_kinds(&dom)[4..],
        [
            "insertText a",
            "keyDown Enter",
            "keyUp Enter",
            "keyDown Enter",
            "keyUp Enter",
            "insertText b"
        ]
    );
    // Clearing is select all and Backspace; on macOS select all is ⌘A.
    let cleared = trusted_fill(TextEntry::Control, "", Platform::MacOs);
    let keys: Vec<&str> = cleared
        .iter()
        .map(|c| c.params["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["Meta", "a", "a", "Meta", "Backspace", "Backspace"]);
}

#[test]
fn an_editors_read_back_is_exact_but_for_what_its_rendering_differs_in() {
    let dom = page();
    let editor = editor(&dom, TextEntry::ContentEditable, "");
    let holds = |text: &str| dom.nodes.borrow_mut()[editor].text = text.into();
    let check =
        |wanted: &str| FillCheck::new(editor, wanted.into(), TextEntry::ContentEditable, &dom);
    // Paragraphs (two line breaks in innerText), a run of spaces kept as a no-break space, a
    // trailing `<br>` and a widget's zero-width space: the text typed.
    holds("first line\n\nsecond\u{a0} line\u{200b}\n");
    block_on(check("first line\nsecond  line").verify(&dom)).unwrap();
    // An editor that collapsed the two spaces did not take the edit: the whitespace counts.
    holds("first line\n\nsecond line");
    let refused = block_on(check("first line\nsecond  line").verify(&dom)).unwrap_err();
    assert!(
        matches!(&refused, Refusal::NoEffect(why) if why.contains("\"first line\\nsecond line\"")),
        "{refused:?}"
    );
    // So does a tab, and a line break turned into a space.
    holds("a b");
    assert!(block_on(check("a\tb").verify(&dom)).is_err());
    assert!(block_on(check("a\nb").verify(&dom)).is_err());
    // Text typed at a caret is known as textContent shows it (no breaks between blocks): its
    // check compares everything else.
    holds("one\n\ntwo three");
    block_on(check("onetwo three").without_line_breaks().verify(&dom)).unwrap();
    assert!(block_on(check("onetwo  three").without_line_breaks().verify(&dom)).is_err());
}
