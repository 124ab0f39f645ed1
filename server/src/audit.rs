//! The audit log: one JSON line per tool call (adapter tools, meta-tools and page tools alike) with
//! its time, the client, the tool, the origin and tab it acted on, its outcome (`ok` or the error
//! code) and how long it took — never an argument's value, which may be a secret. Appended to
//! `audit.jsonl` in Tabwire's data folder; past [`MAX_BYTES`] the file becomes `audit.jsonl.1`
//! (replacing the older one), so the log stays bounded. `tabwire audit` prints its last lines.
//!
//! A tool name, a client name or an origin may come from a page or a client, so every text field
//! is capped at [`MAX_FIELD_CHARS`] when it is recorded (one line is bounded whatever a caller
//! sends), and every field is printed escaped: a newline, an ANSI escape or a bidi override shows
//! as its escape (`\n`, `\u{1b}`), so no field can print a line or a colour of its own.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use bridge::TabId;
use serde::{Deserialize, Serialize};

/// The size at which the log is rotated.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// The client of what a person did in the extension's popup (a grant changed, a recording saved).
pub const POPUP: &str = "popup";

/// The most characters of one text field a line keeps (the rest is cut, and the cut is said).
pub const MAX_FIELD_CHARS: usize = 200;

/// One call, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// UTC, RFC 3339 with milliseconds.
    pub time: String,
    pub client: String,
    /// The agent (issue 28) that made the call: its client's name, with a suffix when two
    /// sessions share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<TabId>,
    /// `ok`, or the failure's error code.
    pub outcome: String,
    pub ms: u64,
}

impl Entry {
    /// The entry with each text field capped, as it is written.
    fn bounded(&self) -> Entry {
        Entry {
            time: cap(&self.time),
            client: cap(&self.client),
            agent: self.agent.as_deref().map(cap),
            tool: cap(&self.tool),
            origin: self.origin.as_deref().map(cap),
            tab: self.tab,
            outcome: cap(&self.outcome),
            ms: self.ms,
        }
    }
}

/// `text` cut to [`MAX_FIELD_CHARS`] characters, saying how many were cut.
fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_FIELD_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => {
            let cut = text[end..].chars().count();
            format!("{}…[{cut} more characters]", &text[..end])
        }
    }
}

/// Characters that change how a terminal shows text without being visible themselves: controls
/// (newline, escape, ...) and the Unicode format characters that reorder or hide text.
fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// `text` as one visible run: capped, every invisible character written as its escape (and a
/// backslash doubled, so an escape a field spells itself cannot pass for one).
pub fn printable(text: &str) -> String {
    let capped = cap(text);
    let mut out = String::with_capacity(capped.len());
    for c in capped.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if is_invisible(c) => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client as it called itself, and the agent when its name differs (the second
        // session of a client, or a name made readable): `claude-code [claude-code-2]`.
        let client = match &self.agent {
            Some(agent) if *agent != self.client => {
                format!("{} [{}]", printable(&self.client), printable(agent))
            }
            Some(_) | None => printable(&self.client),
        };
        let tool = printable(&self.tool);
        write!(f, "{}  {client:<18} {tool:<24}", printable(&self.time))?;
        let origin = self.origin.as_deref().map(printable);
        match (origin, self.tab) {
            (Some(origin), Some(tab)) => write!(f, " {origin} (tab {tab})")?,
            (Some(origin), None) => write!(f, " {origin}")?,
            (None, Some(tab)) => write!(f, " tab {tab}")?,
            (None, None) => {}
        }
        write!(f, "  {} {} ms", printable(&self.outcome), self.ms)
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
            crate::user_dirs::create_private_dir(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() >= self.max_bytes) {
            std::fs::rename(&self.path, self.previous())?;
        }
        let mut line = serde_json::to_string(&entry.bounded()).expect("entries serialize");
        line.push('\n');
        let mut options = crate::user_dirs::private_file();
        options.create(true).append(true);
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
            agent: None,
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

    #[test]
    fn a_line_names_the_agent_beside_its_client_when_they_differ() {
        let mut second = entry("page_read");
        second.client = "mcp".into();
        second.agent = Some("mcp-2".into());
        assert!(second.to_string().contains("  mcp [mcp-2] "), "{second}");
        second.agent = Some("mcp".into());
        assert!(!second.to_string().contains('['), "{second}");
    }

    #[test]
    fn a_field_cannot_print_a_line_or_a_colour_of_its_own() {
        let mut forged = entry("evil\n2026-01-01T00:00:00.000Z  claude  bank_transfer ok 1 ms");
        forged.client = "client\u{1b}[2K\r\u{202e}x\\n".into();
        forged.origin = Some("http://a.example\r\n".into());
        let text = forged.to_string();
        assert!(
            !text.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{text:?}"
        );
        assert!(text.contains(r"evil\n2026"), "{text}");
        assert!(text.contains(r"client\u{1b}[2K\r\u{202e}x\\n"), "{text}");
        assert!(text.contains(r"http://a.example\r\n (tab 3)"), "{text}");
    }

    #[test]
    fn a_huge_field_is_capped_when_recorded_and_when_printed() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::new(dir.path().join("audit.jsonl"));
        let huge = "n".repeat(64 * 1024);
        log.record(&entry(&huge));
        let written = std::fs::metadata(log.path()).unwrap().len();
        assert!(written < 1024, "one line took {written} bytes");
        let back = log.last(1).unwrap().remove(0);
        assert!(back.tool.ends_with(&format!(
            "…[{} more characters]",
            64 * 1024 - MAX_FIELD_CHARS
        )));
        assert!(entry(&huge).to_string().len() < 1024);
    }
}
