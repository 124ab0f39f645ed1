//! The adapters tabwire serves: the built-in ones compiled into the binary, then every `*.json`
//! of each `--adapters DIR` (a user adapter replaces a built-in of the same name), then the extra
//! `--adapter-match` patterns. A bad file is reported, each problem as `file:line:column: message`,
//! and skipped; the others still load. Also `tabwire adapters check` ([`check`]) and what live
//! reload needs ([`load_watched`] and [`fingerprint`]; the watching itself is the user adapter
//! store's, `adapter_store.rs`): a broken edit keeps the file's last good version.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use bridge::adapter::{Adapter, Problem, parse_adapter};

use crate::cli::AdapterMatch;

include!(concat!(env!("OUT_DIR"), "/builtin_adapters.rs"));

/// A mistake in the command line that makes the adapter set meaningless.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("--adapter-match {adapter}=...: no adapter is named {adapter:?} (loaded: {known})")]
    UnknownAdapter { adapter: String, known: String },
    #[error("--adapter-match {adapter}=...: {reason}")]
    BadPattern { adapter: String, reason: String },
}

/// One problem in one file (or directory), as an editor jumps to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub file: String,
    pub problem: Problem,
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.problem.line.is_some() {
            write!(f, "{}:{}", self.file, self.problem)
        } else {
            write!(f, "{}: {}", self.file, self.problem)
        }
    }
}

/// The loaded adapters, and what was wrong with the files that were skipped.
#[derive(Debug, Default)]
pub struct LoadedAdapters {
    pub adapters: Vec<Adapter>,
    pub problems: Vec<FileProblem>,
}

/// Built-ins, then `dirs` in order, then `extra_matches`.
#[cfg(test)]
pub fn load(
    dirs: &[PathBuf],
    extra_matches: &[AdapterMatch],
) -> Result<LoadedAdapters, AdapterError> {
    load_from(BUILTIN_ADAPTERS, dirs, extra_matches)
}

/// [`load`], remembering each file's adapter so that a broken edit keeps its last good version.
pub fn load_watched(
    dirs: &[PathBuf],
    extra_matches: &[AdapterMatch],
    last_good: &mut LastGood,
) -> Result<LoadedAdapters, AdapterError> {
    load_keeping(BUILTIN_ADAPTERS, dirs, extra_matches, last_good)
}

#[cfg(test)]
fn load_from(
    builtins: &[(&str, &str)],
    dirs: &[PathBuf],
    extra_matches: &[AdapterMatch],
) -> Result<LoadedAdapters, AdapterError> {
    load_keeping(builtins, dirs, extra_matches, &mut LastGood::new())
}

/// Each file's last valid adapter: what a reload keeps when the file's new text is broken.
pub type LastGood = HashMap<PathBuf, Adapter>;

fn load_keeping(
    builtins: &[(&str, &str)],
    dirs: &[PathBuf],
    extra_matches: &[AdapterMatch],
    last_good: &mut LastGood,
) -> Result<LoadedAdapters, AdapterError> {
    let mut loaded = LoadedAdapters::default();
    let mut seen = Vec::new();
    for (file, text) in builtins {
        if let Some(adapter) = parse_file(&format!("(built-in) {file}"), text, &mut loaded.problems)
        {
            add(&mut loaded.adapters, adapter, file);
        }
    }
    for dir in dirs {
        for path in json_files(dir, &mut loaded.problems) {
            let shown = path.display().to_string();
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    loaded.problems.push(file_problem(&shown, e.to_string()));
                    continue;
                }
            };
            seen.push(path.clone());
            if let Some(adapter) = parse_file(&shown, &text, &mut loaded.problems) {
                last_good.insert(path, adapter.clone());
                add(&mut loaded.adapters, adapter, &shown);
            } else if let Some(previous) = last_good.get(&path) {
                loaded.problems.push(file_problem(
                    &shown,
                    format!(
                        "keeping the last good version of adapter {:?} until this file is fixed",
                        previous.name
                    ),
                ));
                add(&mut loaded.adapters, previous.clone(), &shown);
            }
        }
    }
    last_good.retain(|path, _| seen.contains(path));
    for extra in extra_matches {
        add_match(&mut loaded.adapters, extra)?;
    }
    Ok(loaded)
}

fn parse_file(shown: &str, text: &str, problems: &mut Vec<FileProblem>) -> Option<Adapter> {
    match parse_adapter(text) {
        Ok(adapter) => Some(adapter),
        Err(found) => {
            problems.extend(found.into_iter().map(|problem| FileProblem {
                file: shown.to_owned(),
                problem,
            }));
            None
        }
    }
}

/// The names of the built-in adapters.
pub fn builtin_names() -> Vec<String> {
    let mut ignored = Vec::new();
    BUILTIN_ADAPTERS
        .iter()
        .filter_map(|(file, text)| parse_file(file, text, &mut ignored))
        .map(|adapter| adapter.name)
        .collect()
}

/// Adds `adapter`, replacing one of the same name (a user file overrides a built-in).
fn add(adapters: &mut Vec<Adapter>, adapter: Adapter, source: &str) {
    if let Some(existing) = adapters.iter_mut().find(|a| a.name == adapter.name) {
        tracing::info!(adapter = %adapter.name, %source, "adapter replaces the one loaded before");
        *existing = adapter;
    } else {
        tracing::debug!(adapter = %adapter.name, %source, "adapter loaded");
        adapters.push(adapter);
    }
}

fn add_match(adapters: &mut [Adapter], extra: &AdapterMatch) -> Result<(), AdapterError> {
    bridge::pattern::MatchPattern::parse(&extra.pattern).map_err(|e| AdapterError::BadPattern {
        adapter: extra.adapter.clone(),
        reason: e.to_string(),
    })?;
    let known = adapters
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let adapter = adapters
        .iter_mut()
        .find(|a| a.name == extra.adapter)
        .ok_or_else(|| AdapterError::UnknownAdapter {
            adapter: extra.adapter.clone(),
            known,
        })?;
    if !adapter.matches.contains(&extra.pattern) {
        adapter.matches.push(extra.pattern.clone());
    }
    Ok(())
}

/// What `tabwire adapters check` found.
#[derive(Debug, Default)]
pub struct CheckReport {
    pub files: usize,
    pub problems: Vec<FileProblem>,
    /// Valid adapters' likely mistakes ([`bridge::lint`]): printed, never fatal.
    pub warnings: Vec<FileProblem>,
}

/// Validates adapter files: each path a file or a directory (its `*.json`); no paths: the
/// built-in adapters.
pub fn check(paths: &[PathBuf]) -> CheckReport {
    let mut report = CheckReport::default();
    if paths.is_empty() {
        for (file, text) in BUILTIN_ADAPTERS {
            check_file(&format!("(built-in) {file}"), text, &mut report);
        }
        return report;
    }
    for path in paths {
        let files = if path.is_dir() {
            json_files(path, &mut report.problems)
        } else {
            vec![path.clone()]
        };
        for file in files {
            let shown = file.display().to_string();
            match std::fs::read_to_string(&file) {
                Ok(text) => check_file(&shown, &text, &mut report),
                Err(e) => {
                    report.files += 1;
                    report.problems.push(file_problem(&shown, e.to_string()));
                }
            }
        }
    }
    report
}

/// One file of `tabwire adapters check`: its problems, or, when it is valid, its warnings.
fn check_file(shown: &str, text: &str, report: &mut CheckReport) {
    report.files += 1;
    let Some(adapter) = parse_file(shown, text, &mut report.problems) else {
        return;
    };
    report
        .warnings
        .extend(
            bridge::lint::unconfirmed_effects(&adapter)
                .into_iter()
                .map(|warning| {
                    let (line, column) = bridge::adapter::locate(text, &warning.path).unzip();
                    FileProblem {
                        file: shown.to_owned(),
                        problem: Problem {
                            path: warning.path,
                            line,
                            column,
                            message: warning.message,
                        },
                    }
                }),
        );
}

pub type Fingerprint = Vec<(PathBuf, Option<SystemTime>, u64)>;

/// What live reload compares: each adapter file's path, modification time and size.
pub fn fingerprint(dirs: &[PathBuf]) -> Fingerprint {
    let mut ignored = Vec::new();
    dirs.iter()
        .flat_map(|dir| json_files(dir, &mut ignored))
        .map(|path| {
            let meta = std::fs::metadata(&path).ok();
            let modified = meta.as_ref().and_then(|m| m.modified().ok());
            let len = meta.map_or(0, |m| m.len());
            (path, modified, len)
        })
        .collect()
}

/// The `*.json` files directly in `dir`, sorted so the load order is stable. A symbolic link that
/// leads out of `dir` is refused (and not read: its target's text would show in errors).
fn json_files(dir: &Path, problems: &mut Vec<FileProblem>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(file_problem(
                &dir.display().to_string(),
                format!("cannot read the adapter directory: {e}"),
            ));
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json") && path.is_file())
        .filter(|path| {
            let inside = stays_inside(dir, path);
            if !inside {
                problems.push(file_problem(
                    &path.display().to_string(),
                    format!(
                        "a symbolic link to a file outside {}: refused (an adapter directory holds \
                         its own files)",
                        dir.display()
                    ),
                ));
            }
            inside
        })
        .collect();
    files.sort();
    files
}

/// Whether `path` (an entry of `dir`) is a file of `dir`, or a link to one; not a link leading
/// elsewhere.
fn stays_inside(dir: &Path, path: &Path) -> bool {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return true;
    }
    match (std::fs::canonicalize(dir), std::fs::canonicalize(path)) {
        (Ok(dir), Ok(target)) => target.parent() == Some(dir.as_path()),
        _ => false,
    }
}

pub(crate) fn file_problem(file: &str, message: String) -> FileProblem {
    FileProblem {
        file: file.to_owned(),
        problem: Problem {
            path: Default::default(),
            line: None,
            column: None,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"{
  "name": "mini",
  "match": ["https://mini.example/*"],
  "tools": [{"name": "read", "description": "Read.", "steps": [{"step": "return", "value": 1}]}]
}"#;

    fn matching(adapter: &str, pattern: &str) -> AdapterMatch {
        AdapterMatch {
            adapter: adapter.into(),
            pattern: pattern.into(),
        }
    }

    #[test]
    fn a_symlink_out_of_an_adapter_directory_is_refused_unread() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("adapters");
        std::fs::create_dir(&dir).unwrap();
        let outside = root.path().join("private.json");
        std::fs::write(&outside, r#"{"secret": "do not show me"}"#).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("leak.json")).unwrap();
        std::fs::write(dir.join("mini.json"), MINI).unwrap();
        std::os::unix::fs::symlink(dir.join("mini.json"), dir.join("alias.json")).unwrap();
        let loaded = load(std::slice::from_ref(&dir), &[]).unwrap();
        let shown: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
        assert!(
            shown.iter().any(|p| p.contains("leak.json")
                && p.contains("a symbolic link to a file outside")),
            "{shown:?}"
        );
        assert!(
            !shown.iter().any(|p| p.contains("do not show me")),
            "{shown:?}"
        );
        // A link to a file of the directory itself is one more name for it.
        assert!(
            !shown.iter().any(|p| p.contains("alias.json: a symbolic")),
            "{shown:?}"
        );
        assert!(loaded.adapters.iter().any(|a| a.name == "mini"));
        let report = check(&[dir]);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.to_string().contains("a symbolic link to a file outside")),
        );
    }

    #[test]
    fn builtins_are_valid_and_include_todomvc() {
        let loaded = load(&[], &[]).unwrap();
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let todomvc = loaded
            .adapters
            .iter()
            .find(|a| a.name == "todomvc")
            .unwrap();
        let tools: Vec<_> = todomvc.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            tools,
            [
                "add_todo",
                "list_todos",
                "toggle_todo",
                "clear_completed",
                "set_filter",
                "edit_todo",
                "delete_todo"
            ]
        );
    }

    #[test]
    fn bad_files_are_reported_with_position_and_the_others_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a_broken.json"),
            "{\n  \"name\": \"x\",\n  oops\n}",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b_invalid.json"),
            MINI.replace("\"mini\"", "\"Bad Name\""),
        )
        .unwrap();
        std::fs::write(dir.path().join("c_good.json"), MINI).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not an adapter").unwrap();

        let loaded = load_from(&[], &[dir.path().to_owned()], &[]).unwrap();
        let names: Vec<_> = loaded.adapters.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["mini"]);

        let reports: Vec<String> = loaded.problems.iter().map(ToString::to_string).collect();
        let broken = dir.path().join("a_broken.json").display().to_string();
        assert!(
            reports
                .iter()
                .any(|r| r.starts_with(&format!("{broken}:3:3: "))),
            "{reports:?}"
        );
        let invalid = dir.path().join("b_invalid.json").display().to_string();
        assert!(
            reports
                .iter()
                .any(|r| r.starts_with(&format!("{invalid}:2:"))
                    && r.contains("name")
                    && r.contains("Bad Name")),
            "{reports:?}"
        );
    }

    #[test]
    fn a_user_adapter_replaces_the_builtin_of_that_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.json"), MINI).unwrap();
        let builtin = MINI.replace("mini.example", "builtin.example");
        let loaded = load_from(&[("mini.json", &builtin)], &[dir.path().to_owned()], &[]).unwrap();
        assert_eq!(loaded.adapters.len(), 1);
        assert_eq!(loaded.adapters[0].matches, ["https://mini.example/*"]);
    }

    #[test]
    fn a_broken_edit_keeps_the_last_good_version() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mini.json");
        std::fs::write(&file, MINI).unwrap();
        let dirs = [dir.path().to_owned()];
        let mut last_good = LastGood::new();
        let first = load_keeping(&[], &dirs, &[], &mut last_good).unwrap();
        assert_eq!(first.adapters.len(), 1);

        std::fs::write(&file, MINI.replace("\"Read.\"", "\"Read.\",,")).unwrap();
        let broken = load_keeping(&[], &dirs, &[], &mut last_good).unwrap();
        assert_eq!(broken.adapters, first.adapters);
        let reports: Vec<String> = broken.problems.iter().map(ToString::to_string).collect();
        assert!(
            reports[0].starts_with(&format!("{}:4:", file.display())),
            "{reports:?}"
        );
        assert!(
            reports[1].contains("keeping the last good version"),
            "{reports:?}"
        );

        std::fs::remove_file(&file).unwrap();
        let gone = load_keeping(&[], &dirs, &[], &mut last_good).unwrap();
        assert!(gone.adapters.is_empty() && last_good.is_empty());
    }

    #[test]
    fn check_reports_files_and_every_problem() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good.json"), MINI).unwrap();
        let bad = dir.path().join("bad.json");
        std::fs::write(
            &bad,
            MINI.replace("\"mini\"", "\"Mini\"").replace("https://", ""),
        )
        .unwrap();
        let report = check(&[dir.path().to_owned()]);
        assert_eq!(report.files, 2);
        let reports: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        assert_eq!(reports.len(), 2, "{reports:?}");
        assert!(
            reports[0].starts_with(&format!("{}:2:11: name:", bad.display())),
            "{reports:?}"
        );
        assert!(
            reports[1].starts_with(&format!("{}:3:13: match[0]:", bad.display())),
            "{reports:?}"
        );
        let builtins = check(&[]);
        assert!(
            builtins.files >= 1 && builtins.problems.is_empty(),
            "{:?}",
            builtins.problems
        );
    }

    #[test]
    fn a_missing_directory_is_reported_not_fatal() {
        let loaded = load_from(&[("mini.json", MINI)], &["/no/such/dir".into()], &[]).unwrap();
        assert_eq!(loaded.adapters.len(), 1);
        assert!(loaded.problems[0].to_string().starts_with("/no/such/dir: "));
    }

    /// The adapter `MINI` alone, with the extra match `pattern` given for adapter `adapter`.
    fn mini_matching(adapter: &str, pattern: &str) -> Result<LoadedAdapters, AdapterError> {
        load_from(&[("mini.json", MINI)], &[], &[matching(adapter, pattern)])
    }

    #[test]
    fn extra_match_patterns_extend_an_adapter() {
        let loaded = mini_matching("mini", "http://127.0.0.1/*").unwrap();
        assert_eq!(
            loaded.adapters[0].matches,
            ["https://mini.example/*", "http://127.0.0.1/*"]
        );
        assert!(loaded.adapters[0].matches_url("http://127.0.0.1:8080/index.html"));
    }

    #[test]
    fn extra_match_for_an_unknown_adapter_names_it() {
        let err = mini_matching("nope", "http://x/*").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("\"nope\"") && text.contains("mini"), "{text}");
        let err = mini_matching("mini", "bad").unwrap_err();
        assert!(matches!(err, AdapterError::BadPattern { .. }), "{err}");
    }
}
