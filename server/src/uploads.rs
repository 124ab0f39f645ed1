//! The user's uploads directory: the one place a call's files come from (`upload` steps,
//! `page_act`'s `upload`). Resolves the names a call gives relative to it, refuses — naming the
//! file and the rule, before anything is sent — a name that leads outside it (`..`, an absolute
//! path elsewhere, a symlink out), a missing file, one that is not a regular file, and files over
//! the per-call cap, and reads the rest for the page ([`bridge::upload`]). MCP-free.
//!
//! A refusal says nothing about the world outside the directory: a name that leads out gets the
//! same words whether or not its target exists, is a file, a directory or a link, and where it
//! leads is never named. A name is judged lexically first (nothing outside is ever looked at),
//! then through each link inside the directory, where only the link itself is read.

use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bridge::upload::{MAX_UPLOAD_BYTES, UploadFile, mime_for};
use bridge::{ErrorCode, WireError};

/// The uploads directory of this process (`--uploads-dir`, else the default under the user's
/// configuration folder), created on first use.
#[derive(Debug, Clone)]
pub struct Uploads {
    dir: PathBuf,
}

impl Uploads {
    pub fn new(dir: PathBuf) -> Uploads {
        Uploads { dir }
    }

    /// Reads the files `names` (relative to the directory) for one call.
    pub fn read(&self, names: &[String]) -> Result<Vec<UploadFile>, WireError> {
        crate::user_dirs::create_private_dir(&self.dir).map_err(|e| {
            refused(format!(
                "the uploads directory {} cannot be made: {e}",
                self.dir.display()
            ))
        })?;
        let root = self.dir.canonicalize().map_err(|e| {
            refused(format!(
                "the uploads directory {} cannot be read: {e}",
                self.dir.display()
            ))
        })?;
        let mut found = Vec::with_capacity(names.len());
        let mut total: u64 = 0;
        for name in names {
            let path = self.resolve(&root, name)?;
            total = total.saturating_add(std::fs::metadata(&path).map_or(0, |m| m.len()));
            found.push((name, path));
        }
        if total > MAX_UPLOAD_BYTES {
            return Err(WireError::new(
                ErrorCode::TooLarge,
                format!(
                    "the files come to {}, over the {} one call may carry (all files together): upload them in several calls",
                    size(total),
                    size(MAX_UPLOAD_BYTES)
                ),
            ));
        }
        found
            .into_iter()
            .map(|(name, path)| {
                let bytes = std::fs::read(&path)
                    .map_err(|e| refused(format!("{name:?} cannot be read: {e}")))?;
                // The file may have grown since it was measured.
                if bytes.len() as u64 > MAX_UPLOAD_BYTES {
                    return Err(WireError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "{name:?} is over the {} one call may carry",
                            size(MAX_UPLOAD_BYTES)
                        ),
                    ));
                }
                Ok(UploadFile {
                    name: name.clone(),
                    mime: mime_for(name).to_owned(),
                    data: STANDARD.encode(bytes),
                })
            })
            .collect()
    }

    /// The real path of `name` inside `root` (the directory, canonical), or why it is refused.
    fn resolve(&self, root: &Path, name: &str) -> Result<PathBuf, WireError> {
        let outside = || {
            refused(format!(
                "{name:?} is outside the uploads directory (through `..`, an absolute path or a \
                 symlink): only files in the uploads directory {} can be uploaded (put the file \
                 there, or start tabwire with --uploads-dir)",
                root.display()
            ))
        };
        if leads_outside(root, &root.join(name)) {
            return Err(outside());
        }
        // Canonical paths resolve `..` and every symlink, so a name leads where it really goes.
        let real = match root.join(name).canonicalize() {
            Ok(real) if real.starts_with(root) => real,
            Ok(_) => return Err(outside()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(refused(format!(
                    "no file {name:?} in the uploads directory {} (names are relative to it)",
                    root.display()
                )));
            }
            Err(e) => return Err(refused(format!("{name:?} cannot be read: {e}"))),
        };
        if !real.is_file() {
            return Err(refused(format!(
                "{name:?} is not a file (a directory or a device): name a file in the uploads directory"
            )));
        }
        Ok(real)
    }
}

/// Whether `path` (under `root`, canonical) leads out of it: lexically (`..` past the root, an
/// absolute path elsewhere), or through a link inside the root whose target leads out, dangling
/// or not (only links inside the root are read, never anything outside).
fn leads_outside(root: &Path, path: &Path) -> bool {
    leads_outside_within(root, path, 0)
}

/// The most links followed for one name (a loop of links inside the root ends here).
const MAX_LINKS: usize = 40;

fn leads_outside_within(root: &Path, path: &Path, links: usize) -> bool {
    use std::path::Component;
    let mut at = PathBuf::new();
    let mut components = path.components();
    while let Some(component) = components.next() {
        match component {
            Component::ParentDir => {
                at.pop();
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                at.push(component);
            }
        }
        if !(at.starts_with(root) || root.starts_with(&at)) {
            return true;
        }
        if at.starts_with(root)
            && at != root
            && let Ok(target) = std::fs::read_link(&at)
        {
            if links >= MAX_LINKS {
                return true;
            }
            // The link's target, then what the name says after it.
            let parent = at.parent().unwrap_or(root).to_path_buf();
            let mut through = parent.join(target);
            through.extend(components);
            return leads_outside_within(root, &through, links + 1);
        }
    }
    !at.starts_with(root)
}

fn refused(message: String) -> WireError {
    WireError::new(ErrorCode::FileRefused, message)
}

/// A byte count as a person reads it (`5 MiB`, `12.3 MiB`, `900 KiB`).
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib >= 1.0 {
        let text = format!("{mib:.1}");
        format!("{} MiB", text.trim_end_matches(".0"))
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, Uploads) {
        let temp = tempfile::tempdir().unwrap();
        let uploads = Uploads::new(temp.path().join("uploads"));
        (temp, uploads)
    }

    /// The uploads directory, made, and a secret file beside it (outside).
    fn beside_a_secret() -> (tempfile::TempDir, Uploads, PathBuf) {
        let (temp, uploads) = dir();
        std::fs::create_dir_all(&uploads.dir).unwrap();
        let secret = temp.path().join("secret.txt");
        std::fs::write(&secret, "key").unwrap();
        (temp, uploads, secret)
    }

    fn code_and_message(result: Result<Vec<UploadFile>, WireError>) -> (ErrorCode, String) {
        let error = result.expect_err("refused");
        (error.code, error.message)
    }

    #[test]
    fn a_file_inside_travels_with_its_name_type_and_bytes() {
        let (_temp, uploads) = dir();
        std::fs::create_dir_all(uploads.dir.join("docs")).unwrap();
        let bytes: Vec<u8> = (0..=255).collect();
        std::fs::write(uploads.dir.join("docs/résumé ü.bin"), &bytes).unwrap();
        std::fs::write(uploads.dir.join("a.csv"), "x,y\n").unwrap();
        let files = uploads
            .read(&["docs/résumé ü.bin".into(), "a.csv".into()])
            .unwrap();
        assert_eq!(files[0].name, "docs/résumé ü.bin");
        assert_eq!(files[0].file_name(), "résumé ü.bin");
        assert_eq!(STANDARD.decode(&files[0].data).unwrap(), bytes);
        assert_eq!(files[1].mime, "text/csv");
        // `..` that stays inside is the file it names.
        assert!(uploads.read(&["docs/../a.csv".into()]).is_ok());
    }

    #[test]
    fn the_directory_is_made_on_first_use() {
        let (_temp, uploads) = dir();
        let (code, message) = code_and_message(uploads.read(&["nope.txt".into()]));
        assert!(uploads.dir.is_dir());
        assert_eq!(code, ErrorCode::FileRefused);
        assert!(
            message.contains("no file \"nope.txt\" in the uploads directory"),
            "{message}"
        );
    }

    #[test]
    fn names_leading_outside_are_refused_naming_the_file_and_the_rule() {
        let (_temp, uploads, secret) = beside_a_secret();
        for name in [
            "../secret.txt".to_owned(),
            secret.display().to_string(),
            "../missing.txt".to_owned(),
        ] {
            let (code, message) = code_and_message(uploads.read(std::slice::from_ref(&name)));
            assert_eq!(code, ErrorCode::FileRefused, "{name}");
            assert!(
                message.contains("outside the uploads directory"),
                "{name}: {message}"
            );
            assert!(message.contains(&format!("{name:?}")), "{message}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_refusal_says_the_same_whatever_lies_outside() {
        let (temp, uploads, secret) = beside_a_secret();
        std::fs::create_dir_all(temp.path().join("dir")).unwrap();
        let missing = temp.path().join("missing.txt");
        let links = [
            ("to-secret", secret.clone()),
            ("to-missing", missing.clone()),
            ("to-dir", temp.path().join("dir")),
            ("to-root", PathBuf::from("/")),
        ];
        for (link, target) in &links {
            std::os::unix::fs::symlink(target, uploads.dir.join(link)).unwrap();
        }
        let mut names: Vec<String> = links.iter().map(|(l, _)| (*l).to_owned()).collect();
        names.extend([
            "../secret.txt".into(),
            "../missing.txt".into(),
            "../dir".into(),
            secret.display().to_string(),
            missing.display().to_string(),
            "/etc/shadow".into(),
            "/nonexistent/x".into(),
            "to-root/etc/passwd".into(),
            "to-missing/x".into(),
        ]);
        for name in &names {
            let (code, message) = code_and_message(uploads.read(std::slice::from_ref(name)));
            assert_eq!(code, ErrorCode::FileRefused, "{name}");
            // The same words but for the name itself.
            let general = message.replace(&format!("{name:?}"), "NAME");
            let first = code_and_message(uploads.read(&[names[0].clone()])).1;
            assert_eq!(
                general,
                first.replace(&format!("{:?}", names[0]), "NAME"),
                "{name}"
            );
            assert!(!message.contains(&temp.path().join("dir").display().to_string()));
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_leading_out_is_refused_and_one_inside_is_followed() {
        let (temp, uploads, secret) = beside_a_secret();
        std::os::unix::fs::symlink(&secret, uploads.dir.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(temp.path(), uploads.dir.join("up")).unwrap();
        std::fs::write(uploads.dir.join("real.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(uploads.dir.join("real.txt"), uploads.dir.join("alias.txt"))
            .unwrap();
        for name in ["link.txt", "up/secret.txt"] {
            let (code, message) = code_and_message(uploads.read(&[name.into()]));
            assert_eq!(code, ErrorCode::FileRefused);
            assert!(message.contains("symlink"), "{message}");
            assert!(
                !message.contains(&secret.display().to_string()),
                "{message}"
            );
        }
        // A link inside that stays inside (even through `..`) is followed.
        std::fs::create_dir_all(uploads.dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("../real.txt", uploads.dir.join("sub/back.txt")).unwrap();
        assert!(uploads.read(&["sub/back.txt".into()]).is_ok());
        assert_eq!(
            uploads.read(&["alias.txt".into()]).unwrap()[0].name,
            "alias.txt"
        );
    }

    #[test]
    fn directories_are_not_files_and_the_cap_counts_every_file() {
        let (_temp, uploads) = dir();
        std::fs::create_dir_all(uploads.dir.join("sub")).unwrap();
        let (code, message) = code_and_message(uploads.read(&["sub".into()]));
        assert_eq!(code, ErrorCode::FileRefused);
        assert!(message.contains("not a file"), "{message}");
        let half = vec![7u8; (MAX_UPLOAD_BYTES / 2 + 1) as usize];
        std::fs::write(uploads.dir.join("a.bin"), &half).unwrap();
        std::fs::write(uploads.dir.join("b.bin"), &half).unwrap();
        assert!(uploads.read(&["a.bin".into()]).is_ok());
        let (code, message) = code_and_message(uploads.read(&["a.bin".into(), "b.bin".into()]));
        assert_eq!(code, ErrorCode::TooLarge);
        assert!(
            message.contains("over the 32 MiB one call may carry"),
            "{message}"
        );
    }
}
