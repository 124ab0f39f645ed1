//! The user's downloads directory, where `browser_downloads` (in `browser_tools.rs`) saves a
//! tab's finished download (the worker attributes and lists them, see [`bridge::download`]). The
//! server copies the file itself from where Chrome wrote it on this machine — the worker passes
//! the path, never the bytes — after checking it is still a regular file (not a symlink) of the
//! size Chrome reported; the copy takes the base name only and never overwrites (` (1)`).

use std::io::ErrorKind;
use std::path::PathBuf;

use bridge::download::{Download, DownloadState, base_name, numbered};
use bridge::{ErrorCode, WireError};

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
        crate::user_dirs::create_private_dir(&self.dir).map_err(|e| {
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
            let mut copy = match crate::user_dirs::private_file()
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
            started_by: Some("http://127.0.0.1:1".into()),
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
