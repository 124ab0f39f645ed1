//! The audit log: one JSON line per tool call (adapter tools, meta-tools and page tools alike) with
//! its time, the client, the tool, the origin and tab it acted on, its outcome (`ok` or the error
//! code) and how long it took — never an argument's value, which may be a secret. Appended to
//! `audit.jsonl` in Tabwire's data folder; past [`MAX_BYTES`] the file becomes `audit.jsonl.1`
//! (replacing the older one), so the log stays bounded. `tabwire audit` prints its last lines.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bridge::TabId;
use serde::{Deserialize, Serialize};

/// The size at which the log is rotated.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The client of what a person did in the extension's popup (a grant changed, a recording saved).
pub const POPUP: &str = "popup";

/// One call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// UTC, RFC 3339 with milliseconds.
    pub time: String,
    pub client: String,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<TabId>,
    /// `ok`, or the failure's error code.
    pub outcome: String,
    pub ms: u64,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}  {:<18} {:<24}", self.time, self.client, self.tool)?;
        match (&self.origin, self.tab) {
            (Some(origin), Some(tab)) => write!(f, " {origin} (tab {tab})")?,
            (Some(origin), None) => write!(f, " {origin}")?,
            (None, Some(tab)) => write!(f, " tab {tab}")?,
            (None, None) => {}
        }
        write!(f, "  {} {} ms", self.outcome, self.ms)
    }
}

#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
    max_bytes: u64,
}

impl AuditLog {
    pub fn new(path: PathBuf) -> AuditLog {
        AuditLog {
            path,
            max_bytes: MAX_BYTES,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rotated, older log.
    fn previous(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".1");
        PathBuf::from(name)
    }

    /// Appends `entry`; a log that cannot be written is reported on stderr, never fails a call.
    pub fn record(&self, entry: &Entry) {
        if let Err(e) = self.append(entry) {
            tracing::warn!(path = %self.path.display(), "the audit log could not be written: {e}");
        }
    }

    fn append(&self, entry: &Entry) -> io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() >= self.max_bytes) {
            std::fs::rename(&self.path, self.previous())?;
        }
        let mut line = serde_json::to_string(entry).expect("entries serialize");
        line.push('\n');
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        // One write of the whole line: concurrent tabwire processes never interleave within it.
        options.open(&self.path)?.write_all(line.as_bytes())
    }

    /// The last `n` entries, oldest first (from the rotated file too when the current one has
    /// fewer); lines that do not parse are skipped.
    pub fn last(&self, n: usize) -> io::Result<Vec<Entry>> {
        let mut entries = read_entries(&self.path)?;
        if entries.len() < n {
            let mut older = read_entries(&self.previous())?;
            older.append(&mut entries);
            entries = older;
        }
        let skip = entries.len().saturating_sub(n);
        Ok(entries.split_off(skip))
    }
}

fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Now, as the log writes times.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tool: &str) -> Entry {
        Entry {
            time: now(),
            client: "test-client".into(),
            tool: tool.into(),
            origin: Some("http://127.0.0.1:8000".into()),
            tab: Some(3),
            outcome: "ok".into(),
            ms: 4,
        }
    }

    #[test]
    fn entries_are_appended_and_read_back_last_first() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("tabwire").join("audit.jsonl"));
        assert!(log.last(5).unwrap().is_empty());
        for tool in ["a", "b", "c"] {
            log.record(&entry(tool));
        }
        let last: Vec<String> = log.last(2).unwrap().into_iter().map(|e| e.tool).collect();
        assert_eq!(last, ["b", "c"]);
        let text = entry("x").to_string();
        assert!(text.contains("http://127.0.0.1:8000 (tab 3)"), "{text}");
        assert!(text.ends_with("ok 4 ms"), "{text}");
    }

    #[test]
    fn the_log_rotates_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = AuditLog::new(dir.path().join("audit.jsonl"));
        log.max_bytes = 1000;
        for i in 0..100 {
            log.record(&entry(&format!("tool_{i}")));
        }
        let current = std::fs::metadata(log.path()).unwrap().len();
        let previous = std::fs::metadata(log.previous()).unwrap().len();
        let line = serde_json::to_string(&entry("tool_99")).unwrap().len() as u64 + 1;
        assert!(current < 1000 + line, "{current}");
        assert!(previous < 1000 + line, "{previous}");
        // The newest entries are still there, in order, across the rotation.
        let last: Vec<String> = log.last(12).unwrap().into_iter().map(|e| e.tool).collect();
        let want: Vec<String> = (88..100).map(|i| format!("tool_{i}")).collect();
        assert_eq!(last, want);
    }

    #[test]
    fn argument_values_have_no_field_to_go_in() {
        let json = serde_json::to_value(entry("todomvc_add_todo")).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["client", "ms", "origin", "outcome", "tab", "time", "tool"]
        );
    }
}
