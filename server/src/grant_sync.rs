//! The grant keeper: makes the changes the user asks for in the popup (through the hub's
//! [`GrantRequest`]s) with the same code as `tabwire allow`/`revoke` ([`Grants::change_for`],
//! audited as `popup`), and keeps the extensions' view of the grants current: the list is pushed
//! after `welcome` and whenever `grants.json` changes, whoever changed it (the popup, the CLI,
//! an answer to the assistant's question in this or another tabwire, a hand edit), so the popup
//! is current when it opens. The permission gate reads the file itself on every check, so a
//! change takes effect at the next call either way.

use std::sync::Arc;
use std::time::Duration;

use bridge::{ErrorCode, ToExtension, WireError};

use crate::audit::{self, AuditLog};
use crate::grants::{GrantAction, GrantChange, Grants};
use crate::hub::{GrantRequest, Hub};

/// How often `grants.json` is re-read for changes made by other processes (it is small).
const POLL: Duration = Duration::from_millis(250);

pub struct GrantKeeper {
    pub hub: Arc<Hub>,
    pub grants: Grants,
    pub audit: AuditLog,
    pub all_origins: bool,
}

impl GrantKeeper {
    /// Runs until the hub goes: answers the popup's requests, pushes the list when it changes.
    pub async fn run(self) {
        let Some(mut requests) = self.hub.take_grant_requests() else {
            return tracing::error!("the hub's grant requests are already served");
        };
        let mut ticker = tokio::time::interval(POLL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                request = requests.recv() => match request {
                    Some(request) => self.make(request),
                    None => return,
                },
                _ = ticker.tick() => {}
            }
            self.push();
        }
    }

    /// Makes one popup change and answers it.
    fn make(&self, request: GrantRequest) {
        let GrantRequest {
            conn,
            id,
            change,
            tab,
        } = request;
        let answer = match self.change(&change, tab) {
            Ok(changed) => ToExtension::GrantResult { id, changed },
            Err(error) => {
                tracing::warn!(origin = %change.origin, "a grant change from the popup failed: {error}");
                ToExtension::GrantError { id, error }
            }
        };
        // The list first: the popup shows it once the answer says the change is made.
        self.push();
        self.hub.send_to(conn, &answer);
    }

    fn change(&self, change: &GrantChange, tab: Option<bridge::TabId>) -> Result<bool, WireError> {
        // The worker checked the change against the tab, which only it sees; checked again here
        // as far as the server can.
        let refused = |why: String| WireError::new(ErrorCode::InvalidArgs, why);
        change.check_origin().map_err(refused)?;
        if change.action == GrantAction::Allow && tab.is_none() {
            return Err(refused(format!(
                "allowing {} needs the tab that shows it",
                change.origin
            )));
        }
        self.grants
            .change_for(&self.audit, audit::POPUP, change, tab)
            .map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))
    }

    /// Pushes the list when it differs from what the extensions were told.
    fn push(&self) {
        match self.grants.all() {
            Ok(list) => {
                if self.hub.set_grants(list, self.all_origins) {
                    tracing::debug!("grants pushed to the extension");
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::HubConfig;
    use bridge::grants::{GrantList, Need};
    use bridge::protocol::RequestId;
    use serde_json::json;
    use tokio::sync::mpsc;

    struct Setup {
        _dir: tempfile::TempDir,
        hub: Arc<Hub>,
        grants: Grants,
        audit: AuditLog,
        conn: crate::hub::ConnId,
        frames: mpsc::UnboundedReceiver<String>,
        /// Frames received and not looked for yet.
        seen: Vec<ToExtension>,
    }

    /// A hub with one extension that said hello, and its grant keeper running.
    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let hub = Arc::new(Hub::new(HubConfig {
            port: 17373,
            call_timeout: Duration::from_secs(5),
            instance_id: "test".into(),
            adapters: Vec::new(),
            grants: None,
            uploads: None,
        }));
        let grants = Grants::new(dir.path().join("grants.json"));
        let audit = AuditLog::new(dir.path().join("audit.jsonl"));
        let (outbox, frames) = mpsc::unbounded_channel();
        let conn = hub.connect(outbox);
        let hello = json!({"type": "hello", "protocol": bridge::PROTOCOL_VERSION});
        hub.handle_frame(conn, &hello.to_string());
        tokio::spawn(
            GrantKeeper {
                hub: hub.clone(),
                grants: grants.clone(),
                audit: audit.clone(),
                all_origins: false,
            }
            .run(),
        );
        Setup {
            _dir: dir,
            hub,
            grants,
            audit,
            conn,
            frames,
            seen: Vec::new(),
        }
    }

    impl Setup {
        fn ask(&self, id: &str, origin: &str, action: &str, tab: Option<u64>) {
            let frame = json!({"type": "change_grant", "id": id, "tab": tab,
                "change": {"origin": origin, "action": action, "need": "page_tools"}});
            self.hub.handle_frame(self.conn, &frame.to_string());
        }

        /// The first frame `pick` keeps, among those seen and not kept yet, else the next ones
        /// (within a deadline).
        async fn until<T>(&mut self, mut pick: impl FnMut(&ToExtension) -> Option<T>) -> T {
            if let Some(at) = self.seen.iter().position(|m| pick(m).is_some()) {
                return pick(&self.seen.remove(at)).unwrap();
            }
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            loop {
                let frame = tokio::time::timeout_at(deadline, self.frames.recv())
                    .await
                    .expect("the frame within 5 s")
                    .expect("the outbox is open");
                let message = ToExtension::decode(&frame).unwrap();
                match pick(&message) {
                    Some(found) => return found,
                    None => self.seen.push(message),
                }
            }
        }

        async fn grants_pushed(&mut self, wanted: impl Fn(&GrantList) -> bool) -> GrantList {
            self.until(|m| match m {
                ToExtension::Grants { grants, .. } if wanted(grants) => Some(grants.clone()),
                _ => None,
            })
            .await
        }

        async fn answer(&mut self, id: &str) -> Result<bool, WireError> {
            let id: RequestId = id.into();
            self.until(|m| match m {
                ToExtension::GrantResult { id: got, changed } if *got == id => Some(Ok(*changed)),
                ToExtension::GrantError { id: got, error } if *got == id => {
                    Some(Err(error.clone()))
                }
                _ => None,
            })
            .await
        }
    }

    #[tokio::test]
    async fn the_popups_change_is_made_audited_answered_and_pushed() {
        let mut s = setup();
        // Connected with no grant yet: the empty list.
        s.grants_pushed(GrantList::is_empty).await;
        let origin = "http://127.0.0.1:8000";
        s.ask("g1", origin, "allow", Some(7));
        assert_eq!(s.answer("g1").await, Ok(true));
        assert!(
            s.grants
                .allows(&bridge::Origin::parse(origin).unwrap(), Need::PageTools)
        );
        // The new list came before the answer (the popup shows it once answered).
        assert!(s.seen.iter().any(
            |m| matches!(m, ToExtension::Grants { grants, .. } if grants.contains_key(origin))
        ));
        let pushed = s.grants_pushed(|g| g.contains_key(origin)).await;
        assert!(pushed[origin].page_tools);
        let [entry] = s.audit.last(5).unwrap().try_into().unwrap();
        assert_eq!(
            (entry.client.as_str(), entry.tool.as_str(), entry.tab),
            ("popup", "allow page_tools", Some(7))
        );
        assert_eq!(entry.origin.as_deref(), Some(origin));

        s.ask("g2", origin, "revoke", None);
        assert_eq!(s.answer("g2").await, Ok(true));
        assert!(
            !s.grants
                .allows(&bridge::Origin::parse(origin).unwrap(), Need::PageTools)
        );
        s.grants_pushed(GrantList::is_empty).await;
    }

    #[tokio::test]
    async fn a_bad_origin_or_an_allow_without_its_tab_is_refused_and_nothing_written() {
        let mut s = setup();
        s.ask("g1", "file:///etc/passwd", "revoke", None);
        let error = s.answer("g1").await.unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArgs);
        assert!(error.message.contains("is not a website origin"), "{error}");
        s.ask("g2", "https://a.example", "allow", None);
        let error = s.answer("g2").await.unwrap_err();
        assert!(error.message.contains("needs the tab"), "{error}");
        assert!(s.grants.all().unwrap().is_empty());
        assert!(s.audit.last(5).unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_change_another_process_makes_reaches_the_extension() {
        let mut s = setup();
        s.grants_pushed(GrantList::is_empty).await;
        // `tabwire allow` in another process: the same file, written by another `Grants`.
        let cli = Grants::new(s.grants.path().to_owned());
        cli.allow(
            &bridge::Origin::parse("https://a.example").unwrap(),
            Need::TrustedInput,
        )
        .unwrap();
        let pushed = s.grants_pushed(|g| !g.is_empty()).await;
        assert!(pushed["https://a.example"].trusted_input);
        // An extension that connects later hears the list after its welcome.
        let (outbox, mut frames) = mpsc::unbounded_channel();
        let conn = s.hub.connect(outbox);
        let hello = json!({"type": "hello", "protocol": bridge::PROTOCOL_VERSION});
        s.hub.handle_frame(conn, &hello.to_string());
        let kinds: Vec<&str> = [frames.recv().await, frames.recv().await]
            .iter()
            .map(|f| {
                ToExtension::decode(f.as_deref().unwrap())
                    .unwrap()
                    .type_name()
            })
            .collect();
        assert_eq!(kinds, ["welcome", "grants"]);
    }
}
