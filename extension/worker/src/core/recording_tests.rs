//! The core's host tests of the popup's recordings: only on an allowed site, steps kept across
//! the tab's pages of that site and dropped from any other, Stop, Save to the server and its
//! answers, and nothing a page can start.

use super::tests::{ME, connected, frames, popup_refused, sender};
use super::*;
use crate::popup::Answered;
use crate::tabs::Sender;
use serde_json::{Value, json};

const SITE: &str = "http://127.0.0.1:8000";

fn allowed(core: &mut Core) {
    let grants = json!({"type": "grants", "all_origins": false,
        "grants": {SITE: {"page_tools": true, "trusted_input": false, "since": 9}}});
    core.on_server_frame(&grants.to_string());
}

fn page_sender(tab: TabId, url: &str) -> Sender {
    Sender {
        url: url.into(),
        ..sender(tab)
    }
}

fn recorded(core: &mut Core, tab: TabId, url: &str, step: Value) -> Vec<Action> {
    let message = json!({"type": "recorded", "step": step});
    core.on_page_message(&page_sender(tab, url), Some(&message.to_string()))
        .1
}

fn record_messages(actions: &[Action]) -> Vec<(TabId, Value)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::ToTab { tab, message, .. } => {
                Some((*tab, serde_json::from_str(message).unwrap()))
            }
            _ => None,
        })
        .collect()
}

/// Starts, stops or discards the recording of tab 5, showing `url`: the page is told to listen,
/// or to stop.
fn toggle(core: &mut Core, url: &str, action: RecordAction) -> Vec<Action> {
    let recording = match action {
        RecordAction::Start => true,
        RecordAction::Stop | RecordAction::Discard => false,
    };
    let actions = core.record(5, url, action).unwrap();
    assert_eq!(
        record_messages(&actions),
        [(5, json!({"type": "record", "recording": recording}))]
    );
    actions
}

fn stored(core: &Core) -> Value {
    serde_json::from_str(&core.recordings_json()).unwrap()
}

#[test]
fn recording_needs_page_tools_allowed_on_the_site() {
    let mut core = connected();
    let refused = core
        .record(5, &format!("{SITE}/books"), RecordAction::Start)
        .unwrap_err();
    assert!(
        refused.contains("Allow page tools on http://127.0.0.1:8000"),
        "{refused}"
    );
    let not_web = core
        .record(5, "chrome://settings", RecordAction::Start)
        .unwrap_err();
    assert!(not_web.contains("websites"), "{not_web}");
    assert_eq!(stored(&core), json!({}));
    allowed(&mut core);
    let started = toggle(&mut core, &format!("{SITE}/books"), RecordAction::Start);
    assert!(started.contains(&Action::PersistRecordings));
    assert_eq!(stored(&core)["5"]["live"], true);
}

#[test]
fn steps_outlive_the_page_and_typing_is_one_fill_but_other_sites_record_nothing() {
    let mut core = connected();
    allowed(&mut core);
    toggle(&mut core, &format!("{SITE}/"), RecordAction::Start);
    let fill = |text: &str| {
        json!({"fill": {"target": "label=Title", "label": "Title",
                                   "value": {"text": text}}})
    };
    recorded(&mut core, 5, &format!("{SITE}/"), fill("Du"));
    recorded(&mut core, 5, &format!("{SITE}/"), fill("Dune"));
    let click = json!({"click": {"target": "role=button[name=\"Add\"]"}});
    recorded(&mut core, 5, &format!("{SITE}/"), click.clone());
    // The form took the tab to the site's next page: its runtime is told to record as it starts,
    // or once the page loaded where none runs (a page no adapter matches).
    let ready = json!({"type": "page_ready", "url": "x", "title": "Done"});
    let (_, actions) = core.on_page_message(
        &page_sender(5, &format!("{SITE}/done")),
        Some(&ready.to_string()),
    );
    assert_eq!(
        record_messages(&actions),
        [(5, json!({"type": "record", "recording": true}))]
    );
    let loaded = core.on_navigation(
        5,
        NavEvent::Completed {
            url: format!("{SITE}/done"),
        },
    );
    assert_eq!(
        record_messages(&loaded),
        [(5, json!({"type": "record", "recording": true}))]
    );
    let secret =
        json!({"fill": {"target": "label=Password", "label": "Password", "value": "secret"}});
    recorded(&mut core, 5, &format!("{SITE}/done"), secret);
    // Another site in the same tab, another tab, a tab that is not recording: nothing kept.
    let elsewhere = recorded(&mut core, 5, "http://other.test/", click.clone());
    assert!(matches!(&elsewhere[..], [Action::Log(why)] if why.contains("does not record")));
    assert!(
        record_messages(&core.on_navigation(
            5,
            NavEvent::Completed {
                url: "http://other.test/".into()
            }
        ))
        .is_empty()
    );
    recorded(&mut core, 6, &format!("{SITE}/"), click);
    let kept = stored(&core);
    assert_eq!(kept["5"]["steps"].as_array().unwrap().len(), 3, "{kept}");
    assert_eq!(
        kept["5"]["steps"][0]["fill"]["value"],
        json!({"text": "Dune"})
    );
    assert_eq!(
        kept["5"]["lines"],
        json!([
            "fill label=Title with \"Dune\"",
            "click role=button[name=\"Add\"]",
            "fill label=Password with a password (not recorded: a parameter)"
        ])
    );
    assert!(kept.get("6").is_none());

    // Stop: the page stops listening; steps it still sends are dropped; a new page is not told.
    toggle(&mut core, &format!("{SITE}/done"), RecordAction::Stop);
    recorded(
        &mut core,
        5,
        &format!("{SITE}/done"),
        json!({"click": {"target": "#late"}}),
    );
    assert!(
        record_messages(&core.on_navigation(
            5,
            NavEvent::Completed {
                url: format!("{SITE}/")
            }
        ))
        .is_empty()
    );
    assert_eq!(stored(&core)["5"]["steps"].as_array().unwrap().len(), 3);
    assert_eq!(stored(&core)["5"]["live"], false);
    // A closed tab's recording goes.
    assert!(core.on_tab_removed(5).contains(&Action::PersistRecordings));
    assert_eq!(stored(&core), json!({}));
}

#[test]
fn a_stopped_recording_is_saved_through_the_server_and_its_answer_reaches_the_popup() {
    let mut core = connected();
    allowed(&mut core);
    let tool = bridge::recording::ToolDraft {
        name: "add_book".into(),
        description: "Adds a book.".into(),
    };
    toggle(&mut core, &format!("{SITE}/"), RecordAction::Start);
    let live = core
        .save_recording("popup-1".into(), 5, tool.clone())
        .unwrap_err();
    assert!(live.contains("Stop the recording"), "{live}");
    recorded(
        &mut core,
        5,
        &format!("{SITE}/"),
        json!({"click": {"target": "#go"}}),
    );
    toggle(&mut core, &format!("{SITE}/"), RecordAction::Stop);
    let sent = frames(
        &core
            .save_recording("popup-2".into(), 5, tool.clone())
            .unwrap(),
    );
    assert_eq!(
        sent,
        [
            json!({"type": "save_recording", "id": "popup-2", "tab": 5, "origin": SITE, "start_url": format!("{SITE}/"),
                "tool": {"name": "add_book", "description": "Adds a book."},
                "steps": [{"click": {"target": "#go"}}]})
        ]
    );
    // Refused (a name taken, say): the recording stays for another try.
    let refused = json!({"type": "recording_error", "id": "popup-2",
                         "error": {"code": "INVALID_ARGS", "message": "add_book is taken"}});
    let answered = core.on_server_frame(&refused.to_string());
    assert_eq!(answered, [popup_refused("popup-2", "add_book is taken")]);
    assert_eq!(stored(&core)["5"]["steps"].as_array().unwrap().len(), 1);
    core.save_recording("popup-3".into(), 5, tool.clone())
        .unwrap();
    let saved = json!({"type": "recording_saved", "id": "popup-3", "tool": "site_add_book",
                       "file": "/a/site.json", "parameters": []});
    assert_eq!(
        core.on_server_frame(&saved.to_string()),
        [
            Action::PersistRecordings,
            Action::AnswerPopup {
                id: "popup-3".into(),
                answer: Ok(Answered::Saved {
                    tool: "site_add_book".into(),
                    file: "/a/site.json".into(),
                    parameters: vec![]
                })
            }
        ]
    );
    assert_eq!(stored(&core), json!({}));
    let nothing = core
        .save_recording("popup-4".into(), 5, tool.clone())
        .unwrap_err();
    assert!(nothing.contains("no recording"), "{nothing}");
    // Without a server nothing is sent (never queued).
    let mut down = Core::new(ME);
    let refused = down
        .save_recording("popup-5".into(), 5, tool.clone())
        .unwrap_err();
    assert!(refused.contains("not connected"), "{refused}");
}

#[test]
fn a_page_cannot_start_a_recording_nor_record_into_a_tab_that_records_nothing() {
    let mut core = connected();
    allowed(&mut core);
    let forged = json!({"type": "record", "tab": 5, "action": "start"});
    let (reply, actions) = core.on_page_message(&sender(5), Some(&forged.to_string()));
    assert_eq!(reply, None);
    assert!(record_messages(&actions).is_empty(), "{actions:?}");
    let dropped = recorded(
        &mut core,
        5,
        &format!("{SITE}/"),
        json!({"click": {"target": "#go"}}),
    );
    assert!(matches!(&dropped[..], [Action::Log(why)] if why.contains("records nothing")));
    assert_eq!(stored(&core), json!({}));
}

#[test]
fn a_restarted_worker_restores_the_recordings_it_wrote() {
    let mut core = connected();
    allowed(&mut core);
    toggle(&mut core, &format!("{SITE}/"), RecordAction::Start);
    recorded(
        &mut core,
        5,
        &format!("{SITE}/"),
        json!({"fill": {"target": "label=Title", "label": "Title", "value": {"text": "Dune"}}}),
    );
    recorded(
        &mut core,
        5,
        &format!("{SITE}/"),
        json!({"fill": {"target": "label=Password", "label": "Password", "value": "secret"}}),
    );
    let written = core.recordings_json();
    let mut restarted = connected();
    restarted.restore_recordings(&written);
    assert_eq!(stored(&restarted), stored(&core));
    assert_eq!(
        stored(&restarted)["5"]["steps"].as_array().unwrap().len(),
        2
    );
    // What cannot be read (another version's shape, a torn write) leaves no recording behind.
    for unreadable in ["{", r#"{"5": {"origin": 1}}"#, "[]"] {
        let mut fresh = connected();
        fresh.restore_recordings(unreadable);
        assert_eq!(stored(&fresh), json!({}), "{unreadable}");
    }
}
