//! The user's grants, per origin: whether page tools may act there, and whether actions there go
//! through trusted input. Kept in `grants.json` in Tabwire's config folder (`user_dirs.rs`), read
//! afresh on every check (it is small), so `tabwire allow`, the popup and another tabwire process
//! take effect at once, and written whole through a temporary file, so a crash never leaves half
//! a file. No MCP here: the question to the user is `permission.rs`'s.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

pub use bridge::grants::{Grant, GrantAction, GrantChange, GrantList, Need};
use bridge::grants::{SkippedGrant, StoredGrantList, read_stored, to_stored};
use bridge::{ErrorCode, Origin, TabId};
use serde::{Deserialize, Serialize};

use crate::audit::{self, AuditLog};

/// `grants.json` as it is written: origins as strings, read into [`GrantsFile`] entry by entry.
#[derive(Debug, Serialize, Deserialize, Default)]
struct StoredFile {
    version: u32,
    #[serde(default)]
    origins: StoredGrantList,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    agents: BTreeMap<String, StoredGrantList>,
}

/// The grants file, read: every key an [`Origin`].
#[derive(Debug, Default)]
struct GrantsFile {
    version: u32,
    /// The grants of every agent (the default).
    origins: GrantList,
    /// The grants of one agent only (issue 28: `tabwire allow ORIGIN --agent NAME`), by agent name.
    agents: BTreeMap<String, GrantList>,
}

impl GrantsFile {
    /// The file's grants, and the entries that name no origin (skipped: they allow nothing).
    fn read(stored: StoredFile) -> (GrantsFile, Vec<SkippedGrant>) {
        let (origins, mut skipped) = read_stored(stored.origins);
        let mut agents = BTreeMap::new();
        for (agent, list) in stored.agents {
            let (list, bad) = read_stored(list);
            skipped.extend(bad);
            agents.insert(agent, list);
        }
        let file = GrantsFile {
            version: stored.version,
            origins,
            agents,
        };
        (file, skipped)
    }

    fn stored(&self) -> StoredFile {
        StoredFile {
            version: self.version,
            origins: to_stored(&self.origins),
            agents: self
                .agents
                .iter()
                .map(|(agent, list)| (agent.clone(), to_stored(list)))
                .collect(),
        }
    }
}

const FILE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum GrantsError {
    #[error("reading {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is not a grants file Tabwire can read ({reason}); fix or delete it")]
    Malformed { path: PathBuf, reason: String },
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("{0}; nothing was granted")]
    NotAnOrigin(#[from] bridge::origin::OriginError),
}

/// The grants file.
#[derive(Debug, Clone)]
pub struct Grants {
    path: PathBuf,
}

impl Grants {
    pub fn new(path: PathBuf) -> Grants {
        Grants { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every origin with a grant, by origin.
    pub fn all(&self) -> Result<GrantList, GrantsError> {
        Ok(self.read()?.origins)
    }

    /// Whether `origin` has what `need` asks for, for the calling agent (an unreadable file
    /// allows nothing).
    pub fn allows(&self, origin: &Origin, need: Need) -> bool {
        self.of(origin).is_some_and(|g| g.allows(need))
    }

    /// `origin`'s grant for the calling agent (issue 28: every agent's, joined with the one the
    /// agent has alone; outside any agent's scope, every agent's only), from one read of the file
    /// (an unreadable file grants nothing).
    pub fn of(&self, origin: &Origin) -> Option<Grant> {
        let agent = crate::hub::agents::caller_known_as();
        match self.read() {
            Ok(mut file) => {
                let everyone = file.origins.remove(origin);
                let own = agent
                    .and_then(|agent| file.agents.get_mut(&*agent))
                    .and_then(|own| own.remove(origin));
                match (everyone, own) {
                    (Some(a), Some(b)) => Some(Grant {
                        page_tools: a.page_tools || b.page_tools,
                        trusted_input: a.trusted_input || b.trusted_input,
                        since: a.since.min(b.since),
                    }),
                    (grant, None) | (None, grant) => grant,
                }
            }
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }

    /// The grants of one agent only, by agent name.
    pub fn of_agents(&self) -> Result<BTreeMap<String, GrantList>, GrantsError> {
        Ok(self.read()?.agents)
    }

    /// Allows (`allow`) `need` on `origin` for agent `agent` alone, or takes it back; whether
    /// anything changed. Taking page tools back from every agent (`change_for`) takes these
    /// back too.
    pub fn change_for_agent(
        &self,
        agent: &str,
        origin: &Origin,
        need: Need,
        allow: bool,
    ) -> Result<bool, GrantsError> {
        let mut file = self.read()?;
        let list = file.agents.entry(agent.to_owned()).or_default();
        let before = list.get(origin).copied().unwrap_or_default();
        let mut grant = before;
        match (allow, need) {
            (true, need) => {
                if !grant.page_tools {
                    grant.since = now();
                }
                grant.page_tools = true;
                grant.trusted_input |= need == Need::TrustedInput;
            }
            (false, Need::PageTools) => grant = Grant::default(),
            (false, Need::TrustedInput) => grant.trusted_input = false,
        }
        if grant == before {
            file.agents.retain(|_, list| !list.is_empty());
            return Ok(false);
        }
        if grant.page_tools {
            list.insert(origin.clone(), grant);
        } else {
            list.remove(origin);
        }
        file.agents.retain(|_, list| !list.is_empty());
        file.version = FILE_VERSION;
        self.write(&file)?;
        Ok(true)
    }

    /// Allows `need` on `origin` (trusted input implies page tools); whether anything changed.
    pub fn allow(&self, origin: &Origin, need: Need) -> Result<bool, GrantsError> {
        self.change(origin, |grant| {
            if !grant.page_tools {
                grant.since = now();
            }
            grant.page_tools = true;
            if need == Need::TrustedInput {
                grant.trusted_input = true;
            }
        })
    }

    /// Takes `need` back from `origin` (page tools: everything); whether anything changed.
    pub fn revoke(&self, origin: &Origin, need: Need) -> Result<bool, GrantsError> {
        self.change(origin, |grant| match need {
            Need::PageTools => *grant = Grant::default(),
            Need::TrustedInput => grant.trusted_input = false,
        })
    }

    /// Makes `change` for `who` (`cli`, `popup`) and records it in the audit log: the one way a
    /// user's own request changes a grant. Whether anything changed.
    pub fn change_for(
        &self,
        audit: &AuditLog,
        who: &str,
        change: &GrantChange,
        tab: Option<TabId>,
    ) -> Result<bool, GrantsError> {
        let started = std::time::Instant::now();
        // The change's origin is the user's request as it came (checked by the popup's worker
        // and again here): only an `Origin` is stored.
        let made = Origin::parse(&change.origin)
            .map_err(GrantsError::from)
            .and_then(|origin| match change.action {
                GrantAction::Allow => self.allow(&origin, change.need),
                GrantAction::Revoke => self.revoke(&origin, change.need),
            });
        audit.record(&audit::Entry {
            time: audit::now(),
            client: who.to_owned(),
            agent: None,
            tool: change.describe(),
            origin: Some(change.origin.clone()),
            tab,
            outcome: match &made {
                Ok(_) => "ok".to_owned(),
                Err(_) => ErrorCode::Internal.to_string(),
            },
            ms: started.elapsed().as_millis() as u64,
        });
        made
    }

    fn change(&self, origin: &Origin, edit: impl FnOnce(&mut Grant)) -> Result<bool, GrantsError> {
        let mut file = self.read()?;
        let before = file.origins.get(origin).copied().unwrap_or_default();
        let mut grant = before;
        edit(&mut grant);
        if grant == before {
            return Ok(false);
        }
        if grant.page_tools {
            file.origins.insert(origin.clone(), grant);
        } else {
            file.origins.remove(origin);
            // Taking page tools back from every agent takes them back from each one too.
            for list in file.agents.values_mut() {
                list.remove(origin);
            }
            file.agents.retain(|_, list| !list.is_empty());
        }
        file.version = FILE_VERSION;
        self.write(&file)?;
        Ok(true)
    }

    /// The entries of the file that name no origin (skipped: they allow nothing), each with why.
    pub fn skipped(&self) -> Result<Vec<SkippedGrant>, GrantsError> {
        Ok(self.read_all()?.1)
    }

    fn read(&self) -> Result<GrantsFile, GrantsError> {
        let (file, skipped) = self.read_all()?;
        // Said once per entry, not at every check.
        report_skipped(&self.path, &skipped);
        Ok(file)
    }

    fn read_all(&self) -> Result<(GrantsFile, Vec<SkippedGrant>), GrantsError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok((GrantsFile::default(), Vec::new()));
            }
            Err(source) => {
                return Err(GrantsError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let malformed = |reason: String| GrantsError::Malformed {
            path: self.path.clone(),
            reason,
        };
        let stored: StoredFile =
            serde_json::from_str(&text).map_err(|e| malformed(e.to_string()))?;
        // An entry some other program wrote in another form allows nothing (and is not listed).
        let (file, skipped) = GrantsFile::read(stored);
        if file.version > FILE_VERSION {
            return Err(malformed(format!(
                "version {} is newer than this tabwire's {FILE_VERSION}",
                file.version
            )));
        }
        Ok((file, skipped))
    }

    fn write(&self, file: &GrantsFile) -> Result<(), GrantsError> {
        let failed = |source| GrantsError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            crate::user_dirs::create_private_dir(dir).map_err(failed)?;
        }
        let text = serde_json::to_string_pretty(&file.stored()).expect("grants serialize") + "\n";
        let temp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        crate::user_dirs::write_new_private(&temp, text.as_bytes()).map_err(failed)?;
        std::fs::rename(&temp, &self.path).map_err(failed)
    }
}

/// The origin a user means by `input`: an origin or any URL of the site (`https://a.example/x` →
/// `https://a.example`), with a sentence saying what is stored when it is not what was typed.
/// User info, a backslash, `*`, a bad port or a non-web scheme are refused.
pub fn origin_of(input: &str) -> Result<(Origin, Option<String>), GrantsError> {
    Ok(Origin::read_typed(input)?)
}

/// Says, once per process for each entry, that a stored grant names no origin and was skipped.
fn report_skipped(path: &Path, skipped: &[SkippedGrant]) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for entry in skipped {
        if !said.contains(&entry.entry) && said.len() < 64 {
            said.push(entry.entry.clone());
            tracing::warn!("{}: {entry}", path.display());
        }
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(text: &str) -> Origin {
        Origin::parse(text).unwrap()
    }

    fn grants() -> (tempfile::TempDir, Grants) {
        let dir = tempfile::tempdir().unwrap();
        let grants = Grants::new(dir.path().join("tabwire").join("grants.json"));
        (dir, grants)
    }

    #[test]
    fn nothing_is_allowed_until_granted_and_grants_are_remembered() {
        let (_dir, grants) = grants();
        let origin = &o("https://a.example");
        assert!(!grants.allows(origin, Need::PageTools));
        assert!(grants.allow(origin, Need::PageTools).unwrap());
        assert!(!grants.allow(origin, Need::PageTools).unwrap(), "no change");
        // Another reader of the same file (another process) sees it.
        let again = Grants::new(grants.path().to_owned());
        assert!(again.allows(origin, Need::PageTools));
        assert!(!again.allows(origin, Need::TrustedInput));
        assert!(!again.allows(&o("https://b.example"), Need::PageTools));
        assert!(again.all().unwrap()[origin].since > 0);
    }

    #[test]
    fn trusted_input_implies_page_tools_and_revoking_page_tools_takes_both() {
        let (_dir, grants) = grants();
        let origin = &o("http://127.0.0.1:8000");
        grants.allow(origin, Need::TrustedInput).unwrap();
        assert!(grants.allows(origin, Need::PageTools));
        assert!(grants.allows(origin, Need::TrustedInput));
        assert!(grants.revoke(origin, Need::TrustedInput).unwrap());
        assert!(grants.allows(origin, Need::PageTools));
        assert!(!grants.allows(origin, Need::TrustedInput));
        grants.allow(origin, Need::TrustedInput).unwrap();
        assert!(grants.revoke(origin, Need::PageTools).unwrap());
        assert!(grants.all().unwrap().is_empty());
        assert!(!grants.revoke(origin, Need::PageTools).unwrap());
    }

    #[test]
    fn a_damaged_file_allows_nothing_and_says_where_it_is() {
        let (_dir, grants) = grants();
        std::fs::create_dir_all(grants.path().parent().unwrap()).unwrap();
        std::fs::write(grants.path(), "{not json").unwrap();
        assert!(!grants.allows(&o("https://a.example"), Need::PageTools));
        let error = grants
            .allow(&o("https://a.example"), Need::PageTools)
            .unwrap_err();
        assert!(error.to_string().contains("grants.json"), "{error}");
        std::fs::write(grants.path(), r#"{"version": 99, "origins": {}}"#).unwrap();
        assert!(grants.all().unwrap_err().to_string().contains("newer"));
    }

    #[test]
    fn origins_are_read_from_what_a_user_types() {
        assert_eq!(
            origin_of("https://A.example/inbox?x").unwrap().0,
            "https://a.example"
        );
        assert_eq!(
            origin_of(" http://127.0.0.1:8000 ").unwrap(),
            (o("http://127.0.0.1:8000"), None)
        );
        let (origin, note) = origin_of("HTTPS://Bücher.example:443/x").unwrap();
        assert_eq!(origin, "https://xn--bcher-kva.example");
        assert!(
            note.unwrap()
                .contains("stored its origin https://xn--bcher-kva.example")
        );
        for bad in [
            "a.example",
            "file:///etc/passwd",
            "chrome://settings",
            "",
            "*",
            "https://a.example:99999",
            r"https://a.example\@b.example/",
            "https://a.example@b.example/",
        ] {
            assert!(origin_of(bad).is_err(), "{bad}");
        }
    }

    /// Issue 26: only canonical origins are stored, and an entry in another form grants nothing:
    /// it is skipped (said why), the others still count, and a write keeps only `Origin`s.
    #[test]
    fn only_canonical_origins_are_stored_or_believed() {
        let (_dir, grants) = grants();
        for bad in [
            "https://A.example",
            "https://a.example/",
            "https://b.example@a.example",
        ] {
            let change = GrantChange {
                origin: bad.into(),
                action: GrantAction::Allow,
                need: Need::PageTools,
            };
            let audit = AuditLog::new(grants.path().with_file_name("audit.log"));
            assert!(
                grants.change_for(&audit, "cli", &change, None).is_err(),
                "{bad}"
            );
        }
        assert!(grants.all().unwrap().is_empty());
        std::fs::create_dir_all(grants.path().parent().unwrap()).unwrap();
        std::fs::write(
            grants.path(),
            r#"{"version": 1, "origins": {"https://A.example": {"page_tools": true},
                "https://b.example": {"page_tools": true}, "*": {"page_tools": true}},
                "agents": {"claude": {"http://x.example:80": {"page_tools": true},
                                      "http://x.example": {"page_tools": true}}}}"#,
        )
        .unwrap();
        assert!(grants.allows(&o("https://b.example"), Need::PageTools));
        assert!(!grants.allows(&o("https://a.example"), Need::PageTools));
        let all = grants.all().unwrap();
        assert_eq!(all.keys().collect::<Vec<_>>(), [&o("https://b.example")]);
        let skipped: Vec<String> = grants
            .skipped()
            .unwrap()
            .iter()
            .map(|s| s.entry.clone())
            .collect();
        assert_eq!(skipped, ["*", "https://A.example", "http://x.example:80"]);
        let agents = grants.of_agents().unwrap();
        assert_eq!(
            agents["claude"].keys().collect::<Vec<_>>(),
            [&o("http://x.example")]
        );
        // A write keeps the good entries and drops what allowed nothing.
        grants
            .allow(&o("https://c.example"), Need::PageTools)
            .unwrap();
        let text = std::fs::read_to_string(grants.path()).unwrap();
        assert!(
            !text.contains("A.example") && !text.contains("\"*\""),
            "{text}"
        );
        assert!(text.contains("https://b.example") && text.contains("http://x.example\""));
        assert!(grants.skipped().unwrap().is_empty());
    }
}
