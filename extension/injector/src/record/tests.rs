//! The recorder over the fake DOM: a reading-list form with a password field, each kind of
//! input, and the clicks and keys that record nothing.

use bridge::recording::{RecordedStep, Typed};

use super::{Secrets, UserEvent, step_for};
use crate::fake_dom::{FakeDom, FakeNode};
use crate::input::Modifiers;

struct Form {
    dom: FakeDom,
    title: usize,
    password: usize,
    shelf: usize,
    favourite: usize,
    favourite_label: usize,
    add: usize,
    add_icon: usize,
    bare: usize,
}

fn node(
    dom: &FakeDom,
    parent: usize,
    tag: &'static str,
    attrs: &[(&'static str, &'static str)],
) -> usize {
    dom.add(FakeNode {
        parent: Some(parent),
        tag,
        visible: true,
        centre: Some((5.0, 5.0)),
        attrs: attrs.to_vec(),
        ..FakeNode::default()
    })
}

fn text(dom: &FakeDom, parent: usize, words: &str) {
    dom.add(FakeNode {
        parent: Some(parent),
        tag: "#text",
        text: words.into(),
        visible: true,
        ..FakeNode::default()
    });
}

fn form() -> Form {
    let dom = FakeDom::default();
    let html = dom.add(FakeNode {
        tag: "html",
        visible: true,
        ..FakeNode::default()
    });
    let body = node(&dom, html, "body", &[]);
    let form = node(&dom, body, "form", &[]);
    let title = node(&dom, form, "input", &[("placeholder", "Title")]);
    dom.nodes.borrow_mut()[title].value = Some("Dune".into());
    let password_label = node(&dom, form, "label", &[]);
    text(&dom, password_label, "Password");
    let password = node(
        &dom,
        form,
        "input",
        &[("type", "password"), ("autocomplete", "current-password")],
    );
    dom.nodes.borrow_mut()[password].value = Some("hunter2".into());
    dom.nodes.borrow_mut()[password_label].label_for = Some(password);
    let shelf = node(&dom, form, "select", &[("id", "shelf")]);
    dom.nodes.borrow_mut()[shelf].value = Some("done".into());
    dom.nodes.borrow_mut()[shelf].options = vec![("to-read", "To read"), ("done", "Done")];
    let favourite_label = node(&dom, form, "label", &[]);
    let favourite = node(&dom, favourite_label, "input", &[("type", "checkbox")]);
    text(&dom, favourite_label, "Favourite");
    dom.nodes.borrow_mut()[favourite].checked = Some(true);
    dom.nodes.borrow_mut()[favourite_label].label_for = Some(favourite);
    let add = node(&dom, form, "button", &[("type", "submit")]);
    let add_icon = node(&dom, add, "span", &[]);
    text(&dom, add_icon, "Add");
    let bar = node(&dom, body, "div", &[("id", "bar")]);
    let mut bare = 0;
    for _ in 0..2 {
        // No id (the fake answers one for every element unless told).
        bare = node(&dom, bar, "button", &[("id", "")]);
        dom.nodes.borrow_mut()[bare].selectors = vec![":scope > button"];
    }
    Form {
        dom,
        title,
        password,
        shelf,
        favourite,
        favourite_label,
        add,
        add_icon,
        bare,
    }
}

fn key(target: usize, key: &str, mods: Modifiers) -> UserEvent<usize> {
    UserEvent::Key {
        target,
        key: key.into(),
        mods,
    }
}

#[test]
fn each_kind_of_input_records_its_step_with_a_robust_locator() {
    let f = form();
    let step = |event: UserEvent<usize>| step_for(&f.dom, &event, &Secrets::default());
    assert_eq!(
        step(UserEvent::Input(f.title)),
        Some(RecordedStep::Fill {
            target: r#"role=textbox[name="Title"]"#.into(),
            label: "Title".into(),
            value: Typed::Text("Dune".into()),
        })
    );
    // A click on the icon inside the button is the button's.
    assert_eq!(
        step(UserEvent::Click(f.add_icon)),
        Some(RecordedStep::Click {
            target: r#"role=button[name="Add"]"#.into()
        })
    );
    assert_eq!(
        step(UserEvent::Click(f.add)),
        step(UserEvent::Click(f.add_icon))
    );
    assert_eq!(
        step(UserEvent::Change(f.shelf)),
        Some(RecordedStep::Select {
            target: "#shelf".into(),
            label: "shelf".into(),
            value: "done".into(),
            options: vec!["to-read".into(), "done".into()],
        })
    );
    assert_eq!(
        step(UserEvent::Change(f.favourite)),
        Some(RecordedStep::Check {
            target: r#"role=checkbox[name="Favourite"]"#.into(),
            checked: true
        })
    );
    // Nothing names it alone: a CSS path from the nearest id.
    assert_eq!(
        step(UserEvent::Click(f.bare)),
        Some(RecordedStep::Click {
            target: "#bar > button:nth-of-type(2)".into()
        })
    );
}

#[test]
fn a_password_is_a_secret_and_its_value_never_leaves_the_page() {
    let f = form();
    let step = step_for(&f.dom, &UserEvent::Input(f.password), &Secrets::default()).unwrap();
    assert_eq!(
        step,
        RecordedStep::Fill {
            target: r#"role=textbox[name="Password"]"#.into(),
            label: "Password".into(),
            value: Typed::Secret,
        }
    );
    assert!(!serde_json::to_string(&step).unwrap().contains("hunter2"));
    // autocomplete alone marks a secret too (a one-time code in a text field).
    f.dom.nodes.borrow_mut()[f.title].attrs =
        vec![("placeholder", "Title"), ("autocomplete", "one-time-code")];
    let code = step_for(&f.dom, &UserEvent::Input(f.title), &Secrets::default()).unwrap();
    assert!(
        matches!(
            code,
            RecordedStep::Fill {
                value: Typed::Secret,
                ..
            }
        ),
        "{code:?}"
    );
}

fn is_secret_fill(step: Option<RecordedStep>) -> bool {
    matches!(
        step,
        Some(RecordedStep::Fill {
            value: Typed::Secret,
            ..
        })
    )
}

#[test]
fn a_password_the_page_reveals_stays_secret_for_the_whole_recording() {
    let f = form();
    f.dom.nodes.borrow_mut()[f.password].selectors = vec!["input, textarea"];
    f.dom.nodes.borrow_mut()[f.title].selectors = vec!["input, textarea"];
    let mut secrets = Secrets::default();
    // Recording starts while the field is a password field, before anything is typed.
    secrets.look(&f.dom, None);
    // The page's "show password" button makes it a text field with no secret mark left (and
    // no label saying so either).
    f.dom.nodes.borrow_mut()[f.password].attrs = vec![("type", "text")];
    for node in f.dom.nodes.borrow_mut().iter_mut() {
        if node.label_for == Some(f.password) {
            node.label_for = None;
        }
    }
    let typed = UserEvent::Input(f.password);
    secrets.look(&f.dom, Some(&f.password));
    assert!(is_secret_fill(step_for(&f.dom, &typed, &secrets)));
    // Without the recording's memory, the revealed field would have been recorded in clear.
    let forgetful = step_for(&f.dom, &typed, &Secrets::default());
    assert!(!is_secret_fill(forgetful.clone()), "{forgetful:?}");
    // The title was never secret: its value is recorded.
    assert!(!is_secret_fill(step_for(
        &f.dom,
        &UserEvent::Input(f.title),
        &secrets
    )));
}

#[test]
fn masked_fields_and_fields_named_as_secrets_record_no_value() {
    let none = Secrets::default();
    let secret_now = |change: &dyn Fn(&mut FakeNode)| {
        let f = form();
        change(&mut f.dom.nodes.borrow_mut()[f.title]);
        is_secret_fill(step_for(&f.dom, &UserEvent::Input(f.title), &none))
    };
    assert!(!secret_now(&|_| {}), "a plain title is no secret");
    assert!(secret_now(&|n| n.masked = true), "-webkit-text-security");
    assert!(secret_now(&|n| n.attrs = vec![("placeholder", "CVC")]));
    assert!(secret_now(&|n| n.attrs = vec![("placeholder", "Card PIN")]));
    assert!(secret_now(&|n| n.attrs = vec![("name", "cardPin")]));
    assert!(secret_now(&|n| n.attrs = vec![("name", "userpassword")]));
    assert!(secret_now(&|n| n.attrs = vec![("id", "sms_code")]));
    assert!(secret_now(&|n| n.attrs = vec![("autocomplete", "cc-exp")]));
    assert!(!secret_now(
        &|n| n.attrs = vec![("placeholder", "Spinning top")]
    ));
}

#[test]
fn what_records_its_value_records_no_click_and_typing_keys_record_no_press() {
    let f = form();
    let step = |event: UserEvent<usize>| step_for(&f.dom, &event, &Secrets::default());
    for field in [f.title, f.password, f.shelf, f.favourite, f.favourite_label] {
        assert_eq!(step(UserEvent::Click(field)), None, "click on {field}");
    }
    assert_eq!(step(UserEvent::Input(f.favourite)), None);
    assert_eq!(step(UserEvent::Change(f.title)), None);
    let none = Modifiers::default();
    for typing in ["a", "Shift", "Control", "Backspace", " "] {
        assert_eq!(step(key(f.title, typing, none)), None, "{typing:?}");
    }
    let press = |target: usize, k: &str, mods: Modifiers| match step(key(target, k, mods)) {
        Some(RecordedStep::Press { key, .. }) => Some(key),
        _ => None,
    };
    assert_eq!(press(f.title, "Enter", none).as_deref(), Some("Enter"));
    assert_eq!(press(f.title, "Escape", none).as_deref(), Some("Escape"));
    let ctrl_shift = Modifiers {
        control: true,
        shift: true,
        ..Modifiers::default()
    };
    assert_eq!(
        press(f.title, "k", ctrl_shift).as_deref(),
        Some("Control+Shift+k")
    );
    // Space activates a button (whose click then has no pointer and is not recorded).
    assert_eq!(press(f.add, " ", none).as_deref(), Some("Space"));
}

#[test]
fn an_element_that_is_gone_records_nothing() {
    let f = form();
    f.dom.nodes.borrow_mut()[f.add].attached = false;
    assert_eq!(
        step_for(&f.dom, &UserEvent::Click(f.add), &Secrets::default()),
        None
    );
}
