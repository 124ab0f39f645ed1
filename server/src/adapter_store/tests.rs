//! The user adapter store on a temporary directory: every refusal leaves the directory as it was;
//! saves are atomic, back up what they replace and keep hand-written files unless told.

use std::path::Path;

use super::*;

const ORIGIN: &str = "http://127.0.0.1:1080";

fn notes(name: &str, pattern: &str) -> String {
    format!(
        r#"{{
  "name": "{name}",
  "match": ["{pattern}"],
  "tools": [
    {{"name": "count", "description": "How many notes.", "annotations": {{"read_only": true}},
      "steps": [{{"step": "read", "selector": "role=list", "read": "count", "into": "n"}},
                {{"step": "return", "value": "{{{{n}}}}"}}]}}
  ]
}}"#
    )
}

/// The adapter most tests save: `mynotes`, for the pages of ORIGIN.
fn my_notes() -> String {
    notes("mynotes", &format!("{ORIGIN}/*"))
}

fn store_in(dir: &Path) -> AdapterStore {
    AdapterStore::open(dir.join("adapters"), &[], &[])
        .unwrap()
        .0
}

/// The directory's entries, recursively, with their contents: what a refusal must not change.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                all.push((path.display().to_string(), Vec::new()));
            } else {
                all.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    all.sort();
    all
}

#[test]
fn a_save_writes_the_file_and_serves_it_after_a_reload() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    let saved = store.save(&my_notes(), ORIGIN, false).unwrap();
    assert_eq!(saved.path, store.dir.as_path().join("mynotes.json"));
    assert_eq!(saved.backup, None);
    assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), my_notes());
    assert!(store.lock().served.iter().any(|a| a.name == "mynotes"));
    // A fresh store (a new tabwire process) loads it from the directory.
    let (_, loaded) = AdapterStore::open(store.dir.clone(), &[], &[]).unwrap();
    assert!(loaded.adapters.iter().any(|a| a.name == "mynotes"));
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
}

#[test]
fn saving_over_a_saved_adapter_keeps_a_backup() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    let first = my_notes();
    store.save(&first, ORIGIN, false).unwrap();
    let second = first.replace("How many notes.", "Count the notes.");
    let saved = store.save(&second, ORIGIN, false).unwrap();
    let backup = saved.backup.expect("a backup");
    assert!(
        backup.starts_with(store.dir.as_path().join("backups")),
        "{backup:?}"
    );
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), first);
    assert_eq!(std::fs::read_to_string(&saved.path).unwrap(), second);
    // Only the newest backups are kept.
    for n in 0..BACKUPS_KEPT + 2 {
        let text = first.replace("How many notes.", &format!("Version {n}."));
        store.save(&text, ORIGIN, false).unwrap();
    }
    let backups = std::fs::read_dir(store.dir.join("backups"))
        .unwrap()
        .count();
    assert_eq!(backups, BACKUPS_KEPT);
    // The backups are not loaded as more adapters of that name.
    let (_, loaded) = AdapterStore::open(store.dir.clone(), &[], &[]).unwrap();
    assert_eq!(
        loaded
            .adapters
            .iter()
            .filter(|a| a.name == "mynotes")
            .count(),
        1
    );
}

#[test]
fn a_hand_written_or_hand_edited_file_is_kept_unless_overwrite() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    let path = store.dir.as_path().join("mynotes.json");
    let by_hand = my_notes().replace("How many", "Number of");
    std::fs::write(&path, &by_hand).unwrap();
    let before = contents(root.path());
    let refusal = store.save(&my_notes(), ORIGIN, false).unwrap_err();
    assert!(
        matches!(refusal, SaveRefusal::HandWritten { .. }),
        "{refusal}"
    );
    assert!(refusal.to_string().contains("overwrite"), "{refusal}");
    assert_eq!(refusal.code(), ErrorCode::Refused);
    assert_eq!(contents(root.path()), before);

    let saved = store.save(&my_notes(), ORIGIN, true).unwrap();
    assert_eq!(
        std::fs::read_to_string(saved.backup.unwrap()).unwrap(),
        by_hand
    );

    // Tabwire's file, edited by a person, is theirs again.
    std::fs::write(&path, &by_hand).unwrap();
    let refusal = store.save(&my_notes(), ORIGIN, false).unwrap_err();
    assert!(
        matches!(refusal, SaveRefusal::HandWritten { .. }),
        "{refusal}"
    );
}

#[test]
fn each_refusal_is_clear_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    std::fs::write(
        store.dir.as_path().join("theirs.json"),
        notes("other", "http://127.0.0.1:1080/*"),
    )
    .unwrap();
    store.reload();
    let before = contents(root.path());
    let huge = my_notes().replace("How many notes.", &"x".repeat(MAX_DOCUMENT_BYTES));
    let javascript = my_notes().replace(
        r#"{"step": "read""#,
        r#"{"step": "navigate", "url": "javascript:alert(1)"}, {"step": "read""#,
    );
    let cases: Vec<(String, &str, &str)> = vec![
        (notes("page", "http://127.0.0.1:1080/*"), "invalid", "page"),
        (
            notes("todomvc", "http://127.0.0.1:1080/*"),
            "name_taken",
            "built-in",
        ),
        (
            notes("other", "http://127.0.0.1:1080/*"),
            "name_taken",
            "theirs.json",
        ),
        (notes("mynotes", "<all_urls>"), "too_broad", "<all_urls>"),
        (
            notes("mynotes", "*://*/*"),
            "too_broad",
            "http://127.0.0.1:1080/*",
        ),
        (
            notes("mynotes", "http://127.0.0.1:9999/*"),
            "too_broad",
            ORIGIN,
        ),
        // Issue 26: Chrome reads a host without a port (or `:*`) as every port.
        (
            notes("mynotes", "http://127.0.0.1/*"),
            "too_broad",
            "use \"http://127.0.0.1:1080/*\"",
        ),
        (
            notes("mynotes", "http://127.0.0.1:*/*"),
            "too_broad",
            "every port",
        ),
        (huge, "too_large", "65536"),
        (javascript, "invalid", "javascript:alert(1)"),
        (
            "{\n  \"name\": \"mynotes\",\n  oops\n}".into(),
            "invalid",
            "adapter:3:3",
        ),
    ];
    for (text, kind, said) in cases {
        let refusal = store.save(&text, ORIGIN, true).unwrap_err();
        let message = refusal.to_string();
        assert_eq!(refusal.kind(), kind, "{message}");
        assert!(message.contains(said), "{kind}: {message:?} lacks {said:?}");
        assert_eq!(contents(root.path()), before, "{kind} wrote something");
    }
}

#[test]
fn validation_problems_are_located() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    let text = my_notes().replace("\"read\": \"count\"", "\"read\": \"cont\"");
    let SaveRefusal::Invalid(problems) = store.save(&text, ORIGIN, false).unwrap_err() else {
        panic!("expected Invalid");
    };
    let shown = problems[0].to_string();
    assert!(shown.starts_with("adapter:6:67: "), "{shown}");
    assert!(shown.contains("tools[0].steps[0]"), "{shown}");
}

#[test]
fn a_trial_is_served_until_it_ends() {
    let root = tempfile::tempdir().unwrap();
    let store = store_in(root.path());
    let checked = store.check(&my_notes(), ORIGIN, false).unwrap();
    assert!(!checked.replaces);
    assert!(!checked.path.exists());
    let hub = std::sync::Arc::new(crate::hub::Hub::new(crate::hub::HubConfig {
        port: 0,
        call_timeout: Duration::from_secs(1),
        instance_id: "test".into(),
        adapters: store.lock().served.clone(),
        grants: None,
        uploads: None,
    }));
    let store = Arc::new(store);
    store.serve_to(hub.adapters_server());
    store.start_trial(&checked.adapter);
    assert!(hub.adapters().iter().any(|a| a.name == "mynotes"));
    store.end_trial();
    assert!(!hub.adapters().iter().any(|a| a.name == "mynotes"));
    store.save(&my_notes(), ORIGIN, false).unwrap();
    assert!(hub.adapters().iter().any(|a| a.name == "mynotes"));
}
