//! Where things are (repository, target directory, cache) and how commands are run: the small
//! helpers every step of the build shares.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

pub fn log(message: &str) {
    eprintln!("[build] {message}");
}

pub fn warn(message: &str) {
    eprintln!("[build] WARNING: {message}");
}

/// The directories the build reads and writes.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The repository (the workspace root).
    pub root: PathBuf,
    /// cargo's target directory.
    pub target: PathBuf,
    /// Tools and private toolchains, shared by every checkout of this user.
    pub cache: PathBuf,
}

impl Paths {
    pub fn discover() -> anyhow::Result<Paths> {
        // `cargo xtask` (cargo run) names this checkout at run time; the path compiled in is that
        // of the checkout the binary was built for, another one when the target dir is shared.
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        let root = manifest_dir
            .parent()
            .context("xtask lives in the workspace")?
            .to_path_buf();
        let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => root.join(dir),
            None => root.join("target"),
        };
        let cache = match std::env::var_os("TABWIRE_CACHE").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => default_cache()?,
        };
        Ok(Paths {
            root,
            target,
            cache,
        })
    }

    /// `target/release/tabwire` (`.exe` on Windows).
    pub fn server_binary(&self) -> PathBuf {
        self.target
            .join("release")
            .join(format!("tabwire{}", std::env::consts::EXE_SUFFIX))
    }
}

/// `~/.cache/tabwire` on Linux and macOS, `%LOCALAPPDATA%\tabwire\cache` on Windows.
fn default_cache() -> anyhow::Result<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if cfg!(windows) {
        let local = var("LOCALAPPDATA").context("LOCALAPPDATA is not set: set TABWIRE_CACHE")?;
        Ok(PathBuf::from(local).join("tabwire").join("cache"))
    } else {
        let home = var("HOME").context("HOME is not set: set TABWIRE_CACHE")?;
        Ok(PathBuf::from(home).join(".cache").join("tabwire"))
    }
}

/// The cargo that runs this driver (cargo tells its children where it is).
pub fn host_cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs `cmd` with inherited output; fails saying `what` when it cannot start or does not succeed.
pub fn run(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("{what}: cannot run {}", program(cmd)))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` and returns its stdout, trimmed; stderr is kept for the error.
pub fn output(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", program(cmd)))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            program(cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn program(cmd: &Command) -> String {
    let args: Vec<&OsStr> = cmd.get_args().collect();
    format!(
        "`{} {}`",
        cmd.get_program().to_string_lossy(),
        args.iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// Whether `out` exists and is newer than every existing file of `inputs`.
pub fn newer_than(out: &Path, inputs: &[&Path]) -> bool {
    let Ok(out_time) = out.metadata().and_then(|m| m.modified()) else {
        return false;
    };
    inputs.iter().all(|input| match input.metadata() {
        Ok(meta) => meta.modified().is_ok_and(|t| t < out_time),
        Err(_) => true,
    })
}

/// Replaces directory `dir` with `fresh` (a sibling, fully written) in as few steps as possible.
pub fn replace_dir(fresh: &Path, dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(fresh, dir)
        .with_context(|| format!("moving {} to {}", fresh.display(), dir.display()))
}

/// A directory removed when dropped (the build's scratch space).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh `<near>.tmp.<pid>` directory next to `near`.
    pub fn beside(near: &Path) -> anyhow::Result<TempDir> {
        let mut name = near.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".tmp.{}", std::process::id()));
        let dir = near.with_file_name(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_than_compares_modification_times() {
        let dir = std::env::temp_dir().join(format!("xtask-newer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in");
        let out = dir.join("out");
        std::fs::write(&input, "a").unwrap();
        assert!(
            !newer_than(&out, &[&input]),
            "a missing output is never newer"
        );
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::write(&out, "b").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&input)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(newer_than(&out, &[&input, &dir.join("missing")]));
        std::fs::File::options()
            .write(true)
            .open(&out)
            .unwrap()
            .set_modified(old - std::time::Duration::from_secs(60))
            .unwrap();
        assert!(!newer_than(&out, &[&input]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
