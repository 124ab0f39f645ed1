//! The user's adapter directory (`<config>/tabwire/adapters`, see `user_dirs.rs`) and the set of
//! adapters tabwire serves: built-ins, then that directory, then each `--adapters DIR`, loaded at
//! start and watched ([`AdapterStore::watch`]), and [`AdapterStore::save`], through which the
//! model (`site_save`) and the popup's recorder add an adapter for the site they are on.
//!
//! A save is checked before anything is written ([`AdapterStore::check`]): the document's size,
//! its validation (every problem located), its name (never another loaded adapter's), its match
//! patterns (never broader than the current site) and the file it would replace (never one a
//! person wrote, unless asked: `site_save` asks the user first). Then it is written atomically
//! (temporary file, then rename), the file it replaces copied to `backups/` first — a file a person
//! wrote to `backups/hand-written/`, which is never pruned: the person's original stays until the
//! person deletes it — and the served set is reloaded at once.
//!
//! Which files Tabwire wrote is kept beside them in `.tabwire-saved` (file name → SHA-256 of the
//! text written): a file whose text differs, because a person wrote or edited it, is theirs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use bridge::ErrorCode;
use bridge::adapter::{Adapter, parse_adapter};
use bridge::pattern::MatchPattern;
use sha2::{Digest, Sha256};

use crate::adapters::{self, AdapterError, FileProblem, Fingerprint, LastGood, LoadedAdapters};
use crate::cli::AdapterMatch;

/// The largest adapter document a save accepts (the largest built-in is under 10 KB).
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024;

/// How often [`AdapterStore::watch`] looks at the adapter directories: edits show up well within
/// a second.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(200);

/// The folder of the copies of replaced adapter files (not loaded: only the directory's own
/// `*.json` are).
const BACKUPS: &str = "backups";

/// How many backups of one adapter are kept (the oldest go first).
pub const BACKUPS_KEPT: usize = 10;

/// The folder (in [`BACKUPS`]) of the files a person wrote that a save replaced: never pruned.
const HAND_WRITTEN: &str = "hand-written";

/// The record of the files Tabwire wrote (no `.json`: it is not an adapter).
const SAVED_RECORD: &str = ".tabwire-saved";

/// The label of a document being saved in its located problems (`adapter:3:5: ...`).
const DOCUMENT: &str = "adapter";

/// Why a save was refused. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum SaveRefusal {
    #[error("the adapter is {bytes} bytes; at most {cap} bytes are accepted")]
    TooLarge { bytes: usize, cap: usize },
    #[error("the adapter is not valid:\n{}", lines(.0))]
    Invalid(Vec<FileProblem>),
    #[error(
        "the name {name:?} is taken by {by}; choose another adapter name (or tool name) so both \
         keep working"
    )]
    NameTaken { name: String, by: String },
    #[error(
        "match pattern {pattern:?} covers more than the current site {origin} as Chrome reads it \
         (a host without a port is every port): use \"{fits}\" or a path under it"
    )]
    TooBroad {
        pattern: String,
        origin: String,
        /// The broadest pattern within the origin.
        fits: String,
    },
    #[error(
        "{} was written by hand, not saved by Tabwire: it is kept unless the save says \
         overwrite (a backup is made then)", .path.display()
    )]
    HandWritten { path: PathBuf },
    #[error("cannot write {}: {error}", .path.display())]
    Io { path: PathBuf, error: String },
}

fn lines(problems: &[FileProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

impl SaveRefusal {
    /// The error code a tool call reports it with.
    pub fn code(&self) -> ErrorCode {
        match self {
            SaveRefusal::TooLarge { .. } => ErrorCode::TooLarge,
            SaveRefusal::Invalid(_)
            | SaveRefusal::NameTaken { .. }
            | SaveRefusal::TooBroad { .. } => ErrorCode::InvalidArgs,
            SaveRefusal::HandWritten { .. } => ErrorCode::Refused,
            SaveRefusal::Io { .. } => ErrorCode::Internal,
        }
    }

    /// A short machine-readable kind (`structuredContent.refusal` of a tool's answer).
    pub fn kind(&self) -> &'static str {
        match self {
            SaveRefusal::TooLarge { .. } => "too_large",
            SaveRefusal::Invalid(_) => "invalid",
            SaveRefusal::NameTaken { .. } => "name_taken",
            SaveRefusal::TooBroad { .. } => "too_broad",
            SaveRefusal::HandWritten { .. } => "hand_written",
            SaveRefusal::Io { .. } => "io",
        }
    }
}

/// A document that passed every check: what saving it would do.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub adapter: Adapter,
    /// The file it goes to.
    pub path: PathBuf,
    /// Whether a file is there already (it is backed up before it is replaced).
    pub replaces: bool,
    /// Whether that file is one a person wrote (or edited) rather than one Tabwire saved.
    pub hand_written: bool,
    text: String,
}

/// What a save did.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub adapter: Adapter,
    pub path: PathBuf,
    /// The copy of the file it replaced.
    pub backup: Option<PathBuf>,
}

/// What is loaded from where, and what the watcher last saw.
struct Loader {
    /// The user adapter directory first, then `--adapters` ones (a later one wins a name).
    dirs: Vec<PathBuf>,
    extra_matches: Vec<AdapterMatch>,
    last_good: LastGood,
    seen: Fingerprint,
    served: Vec<Adapter>,
}

/// Who hears of each adapter set the store serves (the hub, in `main.rs`). An event, so the store
/// and the hub never hold each other: whoever saves gets the store from its owner, not the hub.
pub type ServeAdapters = Box<dyn Fn(Vec<Adapter>) + Send + Sync>;

/// The user adapter directory and the adapter set served from it and the others.
pub struct AdapterStore {
    dir: PathBuf,
    loader: Mutex<Loader>,
    serve_to: OnceLock<ServeAdapters>,
}

impl AdapterStore {
    /// Loads built-ins, `dir` (created if missing) and `extra_dirs`, plus `extra_matches`.
    /// Problems with files are in the answer (those files are skipped); a bad `extra_matches`
    /// is an error.
    pub fn open(
        dir: PathBuf,
        extra_dirs: &[PathBuf],
        extra_matches: &[AdapterMatch],
    ) -> Result<(AdapterStore, LoadedAdapters), AdapterError> {
        if let Err(e) = crate::user_dirs::create_private_dir(&dir) {
            tracing::warn!(dir = %dir.display(), "cannot create the user adapter directory: {e}");
        }
        let mut dirs = vec![dir.clone()];
        dirs.extend(extra_dirs.iter().filter(|d| **d != dir).cloned());
        let seen = adapters::fingerprint(&dirs);
        let mut last_good = LastGood::new();
        let loaded = adapters::load_watched(&dirs, extra_matches, &mut last_good)?;
        let store = AdapterStore {
            dir,
            loader: Mutex::new(Loader {
                dirs,
                extra_matches: extra_matches.to_vec(),
                last_good,
                seen,
                served: loaded.adapters.clone(),
            }),
            serve_to: OnceLock::new(),
        };
        Ok((store, loaded))
    }

    /// The user adapter directory (where a site's recorded adapter is found again).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// From now on, every adapter set this store serves (a reload, a save, a trial) goes to
    /// `serve_to`, synchronously: a saved adapter's tools are served when the save returns.
    pub fn serve_to(&self, serve_to: impl Fn(Vec<Adapter>) + Send + Sync + 'static) {
        if self.serve_to.set(Box::new(serve_to)).is_err() {
            tracing::error!("the adapter store already serves its adapters somewhere");
        }
    }

    /// Every check of a save, nothing written: see [`AdapterStore::save`].
    pub fn check(&self, text: &str, origin: &str, overwrite: bool) -> Result<Checked, SaveRefusal> {
        if text.len() > MAX_DOCUMENT_BYTES {
            return Err(SaveRefusal::TooLarge {
                bytes: text.len(),
                cap: MAX_DOCUMENT_BYTES,
            });
        }
        let adapter = parse_adapter(text).map_err(|problems| {
            SaveRefusal::Invalid(
                problems
                    .into_iter()
                    .map(|problem| FileProblem {
                        file: DOCUMENT.to_owned(),
                        problem,
                    })
                    .collect(),
            )
        })?;
        // A text that is no canonical origin has nothing within it.
        let site = bridge::Origin::parse(origin).ok();
        for pattern in &adapter.matches {
            let within = site.as_ref().is_some_and(|site| {
                MatchPattern::parse(pattern).is_ok_and(|p| p.is_within_origin(site))
            });
            if !within {
                return Err(SaveRefusal::TooBroad {
                    pattern: pattern.clone(),
                    origin: origin.to_owned(),
                    fits: site
                        .as_ref()
                        .map_or_else(|| format!("{origin}/*"), MatchPattern::for_origin),
                });
            }
        }
        let path = self.dir.join(format!("{}.json", adapter.name));
        self.check_names(&adapter, &path)?;
        let replaces = path.exists();
        let hand_written = replaces && !self.saved_by_tabwire(&path);
        if hand_written && !overwrite {
            return Err(SaveRefusal::HandWritten { path });
        }
        Ok(Checked {
            adapter,
            path,
            replaces,
            hand_written,
            text: text.to_owned(),
        })
    }

    /// Saves `text`, an adapter document for the site `origin` (`scheme://host[:port]`) into the
    /// user adapter directory as `<name>.json`, and serves it at once. Refused, nothing written:
    /// a document over [`MAX_DOCUMENT_BYTES`], one that is not valid (every problem located), a
    /// name another loaded adapter (built-in, or another file's) has, a match pattern broader
    /// than `origin`, or, unless `overwrite`, replacing a file Tabwire did not write. A file it
    /// replaces is copied to `backups/` first. Do not call it with the hub's registry locked.
    pub fn save(&self, text: &str, origin: &str, overwrite: bool) -> Result<Saved, SaveRefusal> {
        let checked = self.check(text, origin, overwrite)?;
        self.write(checked)
    }

    /// Writes what [`AdapterStore::check`] accepted, and reloads.
    fn write(&self, checked: Checked) -> Result<Saved, SaveRefusal> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |e: std::io::Error| SaveRefusal::Io {
                path,
                error: e.to_string(),
            }
        };
        crate::user_dirs::create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let backup = if checked.replaces {
            let backups = self.dir.join(BACKUPS);
            // A person's file goes where no pruning reaches.
            let folder = if checked.hand_written {
                backups.join(HAND_WRITTEN)
            } else {
                backups.clone()
            };
            crate::user_dirs::create_private_dir(&folder).map_err(io(&folder))?;
            let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.9fZ");
            let backup = folder.join(format!("{}-{stamp}.json", checked.adapter.name));
            std::fs::copy(&checked.path, &backup).map_err(io(&backup))?;
            prune_backups(&backups, &checked.adapter.name);
            Some(backup)
        } else {
            None
        };
        write_atomically(&checked.path, checked.text.as_bytes()).map_err(io(&checked.path))?;
        self.remember_saved(&checked.path, &checked.text)
            .map_err(io(&self.dir.join(SAVED_RECORD)))?;
        tracing::info!(adapter = %checked.adapter.name, file = %checked.path.display(), "adapter saved");
        self.reload();
        Ok(Saved {
            adapter: checked.adapter,
            path: checked.path,
            backup,
        })
    }

    /// Serves `trial` (replacing the loaded adapter of its name) without saving it, until
    /// [`AdapterStore::end_trial`] or the next reload: a dry run's tools run on the live tab.
    pub fn start_trial(&self, trial: &Adapter) {
        let mut set = self.lock().served.clone();
        match set.iter_mut().find(|a| a.name == trial.name) {
            Some(existing) => *existing = trial.clone(),
            None => set.push(trial.clone()),
        }
        self.serve(set);
    }

    /// Serves the loaded set again after [`AdapterStore::start_trial`].
    pub fn end_trial(&self) {
        let set = self.lock().served.clone();
        self.serve(set);
    }

    /// Reloads every directory now and serves the result.
    pub fn reload(&self) {
        let mut loader = self.lock();
        loader.seen = adapters::fingerprint(&loader.dirs);
        self.reload_locked(&mut loader);
    }

    /// Live reload: polls the directories (one listing and a `stat` per file) and reloads when a
    /// file appears, changes or goes. Problems go to the log; a broken file keeps its last good
    /// version.
    pub async fn watch(self: Arc<Self>) {
        let mut ticker = tokio::time::interval(WATCH_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let mut loader = self.lock();
            let now = adapters::fingerprint(&loader.dirs);
            if now != loader.seen {
                loader.seen = now;
                self.reload_locked(&mut loader);
            }
        }
    }

    fn reload_locked(&self, loader: &mut Loader) {
        let Loader {
            dirs,
            extra_matches,
            last_good,
            ..
        } = &mut *loader;
        let loaded = match adapters::load_watched(dirs, extra_matches, last_good) {
            Ok(loaded) => loaded,
            Err(e) => {
                tracing::error!("adapter reload: {e}; keeping the adapters loaded before");
                return;
            }
        };
        for problem in &loaded.problems {
            tracing::error!("{problem}");
        }
        if loader.served != loaded.adapters {
            tracing::info!(
                adapters = ?loaded.adapters.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
                "adapters reloaded"
            );
            loader.served = loaded.adapters;
        }
        self.serve(loader.served.clone());
    }

    fn serve(&self, set: Vec<Adapter>) {
        if let Some(serve_to) = self.serve_to.get() {
            serve_to(set);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Loader> {
        self.loader.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuses `adapter` when a loaded adapter other than the one in `path` has its name, or one
    /// of its tools' public names.
    fn check_names(&self, adapter: &Adapter, path: &Path) -> Result<(), SaveRefusal> {
        let taken = |by: String| SaveRefusal::NameTaken {
            name: adapter.name.clone(),
            by,
        };
        if adapters::builtin_names().contains(&adapter.name) {
            return Err(taken("a built-in adapter".to_owned()));
        }
        let loader = self.lock();
        let ours: Vec<String> = adapter.tool_names().collect();
        for (file, other) in &loader.last_good {
            if file == path {
                continue;
            }
            if other.name == adapter.name {
                return Err(taken(format!("the adapter in {}", file.display())));
            }
            if let Some(tool) = other.tool_names().find(|t| ours.contains(t)) {
                return Err(SaveRefusal::NameTaken {
                    name: tool,
                    by: format!("a tool of the adapter in {}", file.display()),
                });
            }
        }
        Ok(())
    }

    /// Whether the served adapter `name` is one the model saved (`site_save`) or the recorder
    /// made: loaded from the user adapter directory, from a file Tabwire wrote and nobody has
    /// edited since. Its tools pass the page tools' per-origin gate at every call; an adapter a
    /// person wrote or installed does not (SECURITY.md).
    pub fn is_learned(&self, name: &str) -> bool {
        let path = {
            let loader = self.lock();
            loader
                .last_good
                .iter()
                .find(|(path, adapter)| {
                    adapter.name == name && path.parent() == Some(self.dir.as_path())
                })
                .map(|(path, _)| path.clone())
        };
        path.is_some_and(|path| self.saved_by_tabwire(&path))
    }

    fn saved_record(&self) -> BTreeMap<String, String> {
        std::fs::read_to_string(self.dir.join(SAVED_RECORD))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Whether the file's text is the one Tabwire last wrote there.
    fn saved_by_tabwire(&self, path: &Path) -> bool {
        let (Some(name), Ok(text)) = (file_name(path), std::fs::read(path)) else {
            return false;
        };
        self.saved_record().get(&name) == Some(&digest(&text))
    }

    fn remember_saved(&self, path: &Path, text: &str) -> std::io::Result<()> {
        let mut record = self.saved_record();
        if let Some(name) = file_name(path) {
            record.insert(name, digest(text.as_bytes()));
        }
        let text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
        write_atomically(&self.dir.join(SAVED_RECORD), text.as_bytes())
    }
}

/// Removes all but the [`BACKUPS_KEPT`] newest backups of adapter `name` (their names sort by
/// time; adapter names have no `-`, so `notes-` is never a prefix of another adapter's).
fn prune_backups(backups: &Path, name: &str) {
    let prefix = format!("{name}-");
    let Ok(entries) = std::fs::read_dir(backups) else {
        return;
    };
    let mut own: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file() && file_name(path).is_some_and(|n| n.starts_with(&prefix)))
        .collect();
    own.sort();
    let surplus = own.len().saturating_sub(BACKUPS_KEPT);
    for old in &own[..surplus] {
        if let Err(e) = std::fs::remove_file(old) {
            tracing::warn!(file = %old.display(), "cannot remove an old adapter backup: {e}");
        }
    }
}

fn file_name(path: &Path) -> Option<String> {
    Some(path.file_name()?.to_string_lossy().into_owned())
}

fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `path` whole or not at all: a temporary file beside it (not `*.json`, so never
/// loaded half-written), flushed, then renamed over it.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = file_name(path).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temporary);
    let written = crate::user_dirs::private_file()
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        });
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests;
