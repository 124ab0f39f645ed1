//! `browser_downloads`: what a tab downloaded (the worker attributes and lists them, see
//! [`bridge::download`]), and saving a finished one into the user's downloads directory. The
//! server copies the file itself from where Chrome wrote it on this machine — the worker passes
//! the path, never the bytes — after checking it is still a regular file (not a symlink) of the
//! size Chrome reported; the copy takes the base name only and never overwrites (` (1)`).

use std::io::ErrorKind;
use std::path::PathBuf;

use bridge::browser_ops::BrowserOp;
use bridge::download::{Download, DownloadList, DownloadState, base_name, numbered};
use bridge::{ErrorCode, WireError};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::browser_tools::{PageTab, decode, resolve_tab};
use crate::hub::Hub;
use crate::mcp::object;
use crate::permission::{Need, Permission};

/// The downloads directory of this process (`--downloads-dir`, else the default under the
/// user's configuration folder), created on first use.
#[derive(Debug, Clone)]
pub struct Downloads {
    pub dir: PathBuf,
}

impl Downloads {
    /// Copies finished `download` into the directory; returns the copy's absolute path.
    pub fn save(&self, download: &Download) -> Result<PathBuf, WireError> {
        let not_ready = |why: String| {
            WireError::new(
                ErrorCode::DownloadNotReady,
                format!("download {} ({}) {why}", download.id, download.file_name),
            )
        };
        match download.state {
            DownloadState::Complete => {}
            DownloadState::InProgress => {
                return Err(not_ready(
                    "is still in progress: call browser_downloads again until its state is complete"
                        .into(),
                ));
            }
            DownloadState::Interrupted => {
                return Err(not_ready(
                    "was interrupted (failed or cancelled): download it again in the page".into(),
                ));
            }
        }
        let gone = || {
            not_ready(
                "was deleted or moved since Chrome saved it: download it again in the page".into(),
            )
        };
        let source = match (&download.path, download.exists) {
            (Some(path), true) if !path.is_empty() => PathBuf::from(path),
            _ => return Err(gone()),
        };
        // Not followed: Chrome writes a regular file, and a link there now is someone else's.
        let meta = match std::fs::symlink_metadata(&source) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(gone()),
            Err(e) => return Err(not_ready(format!("cannot be read: {e}"))),
        };
        if !meta.file_type().is_file() {
            return Err(not_ready(
                "is no longer a regular file where Chrome saved it (a link or a folder now): download it again".into(),
            ));
        }
        if meta.len() != download.bytes {
            return Err(not_ready(format!(
                "changed since Chrome saved it ({} bytes now, {} then): download it again",
                meta.len(),
                download.bytes
            )));
        }
        let failed = |what: String| WireError::new(ErrorCode::Internal, what);
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            failed(format!(
                "the downloads directory {} cannot be made: {e}",
                self.dir.display()
            ))
        })?;
        let name = base_name(&download.file_name);
        let mut source_file =
            std::fs::File::open(&source).map_err(|e| not_ready(format!("cannot be read: {e}")))?;
        for n in 0..1000 {
            let target = self.dir.join(numbered(&name, n));
            // `create_new` fails on anything already there, a dangling link included.
            let mut copy = match std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&target)
            {
                Ok(file) => file,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(format!("creating {}: {e}", target.display()))),
            };
            if let Err(e) = std::io::copy(&mut source_file, &mut copy) {
                let _ = std::fs::remove_file(&target);
                return Err(failed(format!("copying to {}: {e}", target.display())));
            }
            return Ok(std::path::absolute(&target).unwrap_or(target));
        }
        Err(failed(format!(
            "the downloads directory {} already holds 1000 copies of {name:?}",
            self.dir.display()
        )))
    }
}

/// `browser_downloads`.
pub async fn browser_downloads(
    hub: &Hub,
    permission: &Permission,
    peer: &Peer<RoleServer>,
    downloads: &Downloads,
    args: &JsonObject,
    target: &mut Option<PageTab>,
) -> Result<Value, WireError> {
    let invalid = |problem: String| WireError::new(ErrorCode::InvalidArgs, problem);
    let tab = match args.get("tab_id") {
        Some(value) => Some(value.as_u64().ok_or_else(|| {
            invalid(format!(
                "`tab_id` must be a tab id from browser_tabs, got {value}"
            ))
        })?),
        None => None,
    };
    let save = match args.get("save") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_u64().ok_or_else(|| {
            invalid(format!(
                "`save` must be a download id from browser_downloads' list, got {value}"
            ))
        })?),
    };
    let page = resolve_tab(hub, tab).await?;
    *target = Some(page.clone());
    permission
        .authorize(peer, &page.origin, Need::PageTools)
        .await?;
    let list: DownloadList = decode(hub.browser(BrowserOp::Downloads { tab: page.tab }).await?)?;
    let Some(id) = save else {
        let shown: Vec<Value> = list.downloads.iter().map(shown).collect();
        return Ok(json!({"tab_id": page.tab, "downloads": shown}));
    };
    let download = list
        .downloads
        .into_iter()
        .find(|d| d.id == id)
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::NoSuchDownload,
                format!(
                    "tab {} has no download {id}: browser_downloads without `save` lists its downloads",
                    page.tab
                ),
            )
        })?;
    let copier = downloads.clone();
    let saved = {
        let download = download.clone();
        tokio::task::spawn_blocking(move || copier.save(&download))
            .await
            .map_err(|e| WireError::new(ErrorCode::Internal, format!("saving: {e}")))??
    };
    Ok(json!({
        "tab_id": page.tab,
        "id": id,
        "path": saved.display().to_string(),
        "bytes": download.bytes,
    }))
}

/// A download as the model reads it: no path on this machine.
fn shown(download: &Download) -> Value {
    let mut entry = json!({
        "id": download.id,
        "file_name": download.file_name,
        "bytes": download.bytes,
        "state": download.state,
        "mime": download.mime,
        "origin": download.origin,
    });
    if download.state == DownloadState::InProgress
        && let Some(total) = download.total_bytes
    {
        entry["total_bytes"] = json!(total);
    }
    if !download.exists {
        entry["deleted"] = json!(true);
    }
    entry
}

pub fn tool() -> Tool {
    Tool::new(
        "browser_downloads",
        "List a tab's downloads; save: copy that finished download to the downloads folder and \
         return its path.",
        object(json!({
            "type": "object",
            "properties": {
                "tab_id": {"type": "integer", "minimum": 0},
                "save": {"type": "integer", "minimum": 0, "description": "download id"},
            },
        })),
    )
    .with_title("Downloads")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn finished(path: &Path, bytes: u64) -> Download {
        Download {
            id: 3,
            file_name: path.file_name().unwrap().to_string_lossy().into_owned(),
            bytes,
            total_bytes: Some(bytes),
            state: DownloadState::Complete,
            mime: "application/octet-stream".into(),
            origin: Some("http://127.0.0.1:1".into()),
            path: Some(path.display().to_string()),
            exists: true,
        }
    }

    fn setup() -> (tempfile::TempDir, Downloads, PathBuf) {
        let temp = tempfile::tempdir().unwrap();
        let chrome = temp.path().join("chrome");
        std::fs::create_dir_all(&chrome).unwrap();
        let source = chrome.join("résumé ü.bin");
        std::fs::write(&source, [0u8, 1, 2, 255]).unwrap();
        let downloads = Downloads {
            dir: temp.path().join("saved"),
        };
        (temp, downloads, source)
    }

    #[test]
    fn a_finished_download_is_copied_whole_and_never_overwrites() {
        let (_temp, downloads, source) = setup();
        let first = downloads.save(&finished(&source, 4)).unwrap();
        assert_eq!(first, downloads.dir.join("résumé ü.bin"));
        assert_eq!(std::fs::read(&first).unwrap(), [0u8, 1, 2, 255]);
        let second = downloads.save(&finished(&source, 4)).unwrap();
        assert_eq!(second, downloads.dir.join("résumé ü (1).bin"));
        assert_eq!(
            std::fs::read(&first).unwrap(),
            std::fs::read(&second).unwrap()
        );
    }

    #[test]
    fn a_name_that_leads_out_is_cut_to_its_base_name() {
        let (temp, downloads, source) = setup();
        let mut download = finished(&source, 4);
        download.file_name = "../../escaped.bin".into();
        let saved = downloads.save(&download).unwrap();
        assert_eq!(saved, downloads.dir.join("escaped.bin"));
        assert!(!temp.path().join("escaped.bin").exists());
    }

    #[test]
    fn unfinished_deleted_changed_or_linked_files_are_refused_with_what_to_do() {
        let (temp, downloads, source) = setup();
        let refused = |download: Download| {
            let error = downloads.save(&download).expect_err("refused");
            assert_eq!(error.code, ErrorCode::DownloadNotReady);
            error.message
        };
        let mut running = finished(&source, 4);
        running.state = DownloadState::InProgress;
        assert!(refused(running).contains("still in progress"));
        let mut failed = finished(&source, 4);
        failed.state = DownloadState::Interrupted;
        assert!(refused(failed).contains("interrupted"));
        assert!(refused(finished(&source, 5)).contains("changed since Chrome saved it"));
        let mut deleted = finished(&source, 4);
        deleted.exists = false;
        assert!(refused(deleted).contains("deleted or moved"));
        assert!(refused(finished(&temp.path().join("nope.bin"), 4)).contains("deleted or moved"));
        #[cfg(unix)]
        {
            let link = temp.path().join("chrome/link.bin");
            std::os::unix::fs::symlink(&source, &link).unwrap();
            assert!(refused(finished(&link, 4)).contains("no longer a regular file"));
        }
        assert!(
            !downloads.dir.exists() || std::fs::read_dir(&downloads.dir).unwrap().next().is_none()
        );
    }
}
