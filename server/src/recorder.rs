//! The recorder's server side: a recording the user saves in the popup (through the hub's
//! [`RecordingRequest`]s) becomes a tool ([`bridge::recording::tool_document`]) in the user's
//! adapter for its site — a new adapter for the origin, or the tool added to the one saved for
//! that site before — written and loaded by [`AdapterStore::save`], which validates it and
//! refuses what it must (a taken name, a file a person wrote). The popup shows the refusal. Each
//! save, made or refused, is in the audit log as the popup's (the tool's name, never a value).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bridge::grants::Need;
use bridge::names::MAX_TOOL_NAME;
use bridge::recording::{self, DraftError};
use bridge::{ErrorCode, ToExtension, WireError};
use serde_json::Value;

use crate::adapter_store::AdapterStore;
use crate::audit::{self, AuditLog};
use crate::grants::Grants;
use crate::hub::{Hub, RecordingRequest};

pub struct Recorder {
    pub hub: Arc<Hub>,
    /// Where recordings are saved (and so served from).
    pub store: Arc<AdapterStore>,
    pub grants: Grants,
    pub audit: AuditLog,
    pub all_origins: bool,
}

impl Recorder {
    /// Runs until the hub goes: saves each recording and answers the popup.
    pub async fn run(self) {
        let Some(mut requests) = self.hub.take_recording_requests() else {
            return tracing::error!("the hub's recording requests are already served");
        };
        while let Some(request) = requests.recv().await {
            let answer = self.answer(&request);
            self.hub.send_to(request.conn, &answer);
        }
    }

    /// Saves one recording, audits the save, and says how it went.
    fn answer(&self, request: &RecordingRequest) -> ToExtension {
        let id = request.id.clone();
        let started = Instant::now();
        let saved = self.save(request);
        self.audit(request, &saved, started);
        match saved {
            Ok((tool, file, parameters)) => {
                tracing::info!(%tool, %file, "a recording from the popup saved");
                ToExtension::RecordingSaved {
                    id,
                    tool,
                    file,
                    parameters,
                }
            }
            Err(error) => {
                tracing::warn!(origin = %request.origin, "a recording from the popup was not saved: {error}");
                ToExtension::RecordingError { id, error }
            }
        }
    }

    /// Appends a save to the audit log: the tool's public name (`save site_x_sign_in`), the
    /// origin and tab, and `ok` or the refusal's code.
    fn audit(
        &self,
        request: &RecordingRequest,
        saved: &Result<(String, String, Vec<String>), WireError>,
        started: Instant,
    ) {
        self.audit.record(&audit::Entry {
            time: audit::now(),
            client: audit::POPUP.to_owned(),
            agent: None,
            tool: format!("save {}", audited_tool_name(request, saved)),
            origin: Some(request.origin.clone()),
            tab: Some(request.tab),
            outcome: match saved {
                Ok(_) => "ok".to_owned(),
                Err(error) => error.code.to_string(),
            },
            ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }

    /// Drafts, checks and saves one recording: its tool's public name, the file and the
    /// tool's parameters.
    fn save(&self, request: &RecordingRequest) -> Result<(String, String, Vec<String>), WireError> {
        let origin = &request.origin;
        // The worker allowed the recording; the grant may have gone since (or never been here).
        let granted = bridge::Origin::parse(origin)
            .is_ok_and(|origin| self.grants.allows(&origin, Need::PageTools));
        if !self.all_origins && !granted {
            return Err(WireError::new(
                ErrorCode::PermissionRequired,
                format!("page tools are not allowed on {origin}: allow the site, then save again"),
            ));
        }
        let store = &self.store;
        if bridge::origin::text_of(&request.start_url).as_deref() != Some(origin.as_str()) {
            return Err(WireError::new(
                ErrorCode::InvalidArgs,
                format!(
                    "the recording started on {}, not on {origin}",
                    request.start_url
                ),
            ));
        }
        let tool = recording::tool_document(&request.tool, &request.start_url, &request.steps)
            .map_err(invalid)?;
        let parameters = recording::parameters(&tool);
        let document = site_document(store, origin, tool)?;
        let text = serde_json::to_string_pretty(&document).expect("JSON serializes");
        let saved = store
            .save(&text, origin, false)
            .map_err(|refusal| WireError::new(refusal.code(), refusal.to_string()))?;
        let public = bridge::names::public_tool_name(&saved.adapter.name, &request.tool.name);
        Ok((public, saved.path.display().to_string(), parameters))
    }
}

/// The name a save is audited by: the tool's public name, also when refused; a name the popup
/// asked for that is no tool name is quoted (and cut short), so it cannot pass for another line.
fn audited_tool_name(
    request: &RecordingRequest,
    saved: &Result<(String, String, Vec<String>), WireError>,
) -> String {
    let draft = &request.tool.name;
    match (saved, recording::adapter_name(&request.origin)) {
        (Ok((public, ..)), _) => public.clone(),
        (Err(_), Some(adapter)) if bridge::names::is_identifier(draft, MAX_TOOL_NAME) => {
            bridge::names::public_tool_name(&adapter, draft)
        }
        (Err(_), _) => {
            let shown: String = draft.chars().take(MAX_TOOL_NAME).collect();
            format!("{shown:?}")
        }
    }
}

fn invalid(error: DraftError) -> WireError {
    WireError::new(ErrorCode::InvalidArgs, error.to_string())
}

/// The site's adapter document with `tool` in it: the one saved before for `origin` (its other
/// tools kept), or a new one.
fn site_document(store: &AdapterStore, origin: &str, tool: Value) -> Result<Value, WireError> {
    let name = recording::adapter_name(origin)
        .ok_or_else(|| invalid(DraftError::BadOrigin(origin.to_owned())))?;
    let path = store.dir().join(format!("{name}.json"));
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let mut document: Value =
                serde_json::from_str(&text).map_err(|e| unreadable(&path, &e))?;
            recording::add_tool(&mut document, tool).map_err(invalid)?;
            Ok(document)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            recording::adapter_document(origin, tool).map_err(invalid)
        }
        Err(e) => Err(unreadable(&path, &e)),
    }
}

fn unreadable(path: &Path, error: &dyn std::fmt::Display) -> WireError {
    WireError::new(
        ErrorCode::Refused,
        format!(
            "{} (this site's adapter) cannot be read: {error}; fix or move it, then save again",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::HubConfig;
    use crate::test_support::assert_error;
    use bridge::recording::{RecordedStep, ToolDraft, Typed};
    use std::time::Duration;

    const ORIGIN: &str = "http://127.0.0.1:4321";

    struct Setup {
        _dir: tempfile::TempDir,
        recorder: Recorder,
        adapters: std::path::PathBuf,
    }

    fn setup(allowed: bool) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let hub = Arc::new(Hub::new(HubConfig {
            port: 17373,
            call_timeout: Duration::from_secs(5),
            instance_id: "test".into(),
            adapters: Vec::new(),
            grants: None,
            uploads: None,
        }));
        let adapters = dir.path().join("adapters");
        let audit = AuditLog::new(dir.path().join("audit.jsonl"));
        let store = Arc::new(AdapterStore::open(adapters.clone(), &[], &[]).unwrap().0);
        store.serve_to(hub.adapters_server());
        let grants = Grants::new(dir.path().join("grants.json"));
        if allowed {
            grants
                .allow(&bridge::Origin::parse(ORIGIN).unwrap(), Need::PageTools)
                .unwrap();
        }
        Setup {
            _dir: dir,
            recorder: Recorder {
                hub,
                store,
                grants,
                audit,
                all_origins: false,
            },
            adapters,
        }
    }

    fn request(name: &str) -> RecordingRequest {
        RecordingRequest {
            conn: 1,
            id: "popup-1".into(),
            tab: 3,
            origin: ORIGIN.into(),
            start_url: format!("{ORIGIN}/sign-in#top"),
            tool: ToolDraft {
                name: name.into(),
                description: String::new(),
            },
            steps: vec![
                RecordedStep::Fill {
                    target: "label=Password".into(),
                    label: "Password".into(),
                    value: Typed::Secret,
                },
                RecordedStep::Click {
                    target: "role=button[name=\"Sign in\"]".into(),
                },
            ],
        }
    }

    #[test]
    fn a_recording_becomes_the_sites_adapter_and_later_ones_join_it() {
        let s = setup(true);
        let (tool, file, parameters) = s.recorder.save(&request("sign_in")).unwrap();
        assert_eq!(tool, "site_127_0_0_1_4321_sign_in");
        assert_eq!(
            file,
            s.adapters
                .join("site_127_0_0_1_4321.json")
                .display()
                .to_string()
        );
        assert_eq!(parameters, ["password"]);
        let (tool, _, parameters) = s.recorder.save(&request("sign_in_again")).unwrap();
        assert_eq!(tool, "site_127_0_0_1_4321_sign_in_again");
        assert_eq!(parameters, ["password"]);
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(saved["match"], serde_json::json!([format!("{ORIGIN}/*")]));
        assert_eq!(saved["tools"].as_array().unwrap().len(), 2);
        assert_eq!(
            saved["tools"][0]["steps"][0]["url"],
            format!("{ORIGIN}/sign-in")
        );
        // Loaded at once: the hub serves it.
        let store = &s.recorder.store;
        assert!(store.check(&saved.to_string(), ORIGIN, false).is_ok());
    }

    #[test]
    fn what_cannot_be_saved_is_refused_with_the_reason_and_nothing_is_written() {
        let s = setup(true);
        s.recorder.save(&request("sign_in")).unwrap();
        let file = s.adapters.join("site_127_0_0_1_4321.json");
        let before = std::fs::read_to_string(&file).unwrap();
        let taken = s.recorder.save(&request("sign_in")).unwrap_err();
        let named = "already has a tool named \"sign_in\"";
        assert_error(&taken, ErrorCode::InvalidArgs, named);
        let bad = s.recorder.save(&request("Sign In")).unwrap_err();
        assert!(bad.message.contains("is not a tool name"), "{bad}");
        let mut elsewhere = request("other");
        elsewhere.start_url = "http://evil.test/".into();
        let moved = s.recorder.save(&elsewhere).unwrap_err();
        assert!(
            moved.message.contains("started on http://evil.test/"),
            "{moved}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

        // A site whose grant is gone, or never was: nothing saved.
        let none = setup(false);
        let refused = none.recorder.save(&request("sign_in")).unwrap_err();
        assert_eq!(refused.code, ErrorCode::PermissionRequired);
        assert!(!none.adapters.join("site_127_0_0_1_4321.json").exists());
    }

    #[test]
    fn a_file_a_person_wrote_for_the_site_is_kept() {
        let s = setup(true);
        let file = s.adapters.join("site_127_0_0_1_4321.json");
        let mine = serde_json::json!({"name": "site_127_0_0_1_4321", "match": [format!("{ORIGIN}/*")],
            "tools": [{"name": "mine", "description": "Mine.", "steps": [{"step": "click", "selector": "#x"}]}]});
        std::fs::write(&file, mine.to_string()).unwrap();
        let refused = s.recorder.save(&request("sign_in")).unwrap_err();
        assert_eq!(refused.code, ErrorCode::Refused);
        assert!(refused.message.contains("written by hand"), "{refused}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), mine.to_string());
        std::fs::write(&file, "{ not json").unwrap();
        let unreadable = s.recorder.save(&request("sign_in")).unwrap_err();
        assert!(
            unreadable.message.contains("cannot be read"),
            "{unreadable}"
        );
    }

    #[test]
    fn each_save_is_audited_as_the_popups_with_the_tool_and_never_a_value() {
        let s = setup(true);
        let mut secret = request("sign_in");
        secret.steps.push(RecordedStep::Fill {
            target: "label=Note".into(),
            label: "Note".into(),
            value: Typed::Text("hunter2".into()),
        });
        assert!(matches!(
            s.recorder.answer(&secret),
            ToExtension::RecordingSaved { .. }
        ));
        assert!(matches!(
            s.recorder.answer(&request("sign_in")),
            ToExtension::RecordingError { .. }
        ));
        s.recorder.answer(&request("Sign In\nforged"));
        let entries = s.recorder.audit.last(10).unwrap();
        let lines: Vec<_> = entries
            .iter()
            .map(|e| (e.client.as_str(), e.tool.as_str(), e.outcome.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                ("popup", "save site_127_0_0_1_4321_sign_in", "ok"),
                ("popup", "save site_127_0_0_1_4321_sign_in", "INVALID_ARGS"),
                ("popup", "save \"Sign In\\nforged\"", "INVALID_ARGS"),
            ]
        );
        assert!(
            entries
                .iter()
                .all(|e| e.origin.as_deref() == Some(ORIGIN) && e.tab == Some(3))
        );
        let raw = std::fs::read_to_string(s.recorder.audit.path()).unwrap();
        assert!(!raw.contains("hunter2"), "{raw}");
    }
}
