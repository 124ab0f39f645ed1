//! `cargo xtask repro [PLATFORM]`: whether a release build is reproducible. It builds the extension
//! and `PLATFORM`'s binary (default `win32-x64`) twice — here (the cross build in `dist`'s target
//! directory), and from a second copy of the checkout at another path (`git worktree add --detach`
//! of HEAD) into another cross target directory, `target-dist-repro`, with its own standard library
//! and dependencies built from nothing — and compares the two builds' files byte for byte: the
//! Chrome and Firefox `.zip`s (the wasm inside them) and the stripped binary. (The copy shares this
//! checkout's cargo target directory for the host tools and the wasm dependencies; its own crates
//! and the wasm are compiled again at its path.)
//! Both builds get the same `SOURCE_DATE_EPOCH` (HEAD's commit time, for the zips' timestamps) and
//! remap the checkout's and cargo's paths (`dist.rs`), so neither where the checkout is nor when it
//! was built may show. Slow (a cross build from nothing for the second copy), so not in test.sh.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::dist::{self, Platform};
use crate::util::{Paths, log, output, run};

/// What is compared: the two zips (under `target/dist/`) and the platform's binary.
fn artifacts(version: &str, platform: &Platform) -> Vec<PathBuf> {
    vec![
        PathBuf::from(format!("tabwire-extension-{version}.zip")),
        PathBuf::from(format!("tabwire-extension-firefox-{version}.zip")),
        PathBuf::from(platform.name()).join(platform.exe()),
    ]
}

pub fn check(paths: &Paths, names: &[&str]) -> anyhow::Result<()> {
    let platform = match dist::select(if names.is_empty() {
        &["win32-x64"]
    } else {
        names
    })?[..]
    {
        [one] => one,
        _ => bail!("repro checks one platform at a time"),
    };
    let epoch = output(
        Command::new("git")
            .args(["log", "-1", "--format=%ct"])
            .current_dir(&paths.root),
    )?;
    let version = crate::package::version(paths)?;
    let first_dir = paths.cache.join("repro").join("first");
    let second_dir = paths.cache.join("repro").join("second");

    // 1. Here, as `cargo xtask dist` builds it.
    build(
        &paths.root,
        &paths.target,
        &dist::dist_target_dir(paths),
        platform,
        &epoch,
    )?;
    keep(&paths.target.join("dist"), &first_dir, &version, &platform)?;

    // 2. From a copy of HEAD elsewhere, with a cross target directory of its own.
    let copy = paths.cache.join("repro").join("elsewhere").join("tabwire");
    if copy.exists() {
        let _ = run(
            Command::new("git")
                .args(["worktree", "remove", "--force"])
                .arg(&copy)
                .current_dir(&paths.root),
            "git worktree remove",
        );
    }
    run(
        Command::new("git")
            .args(["worktree", "add", "--detach"])
            .arg(&copy)
            .arg("HEAD")
            .current_dir(&paths.root),
        "git worktree add",
    )?;
    build(
        &copy,
        &paths.target,
        &paths.cache.join("target-dist-repro"),
        platform,
        &epoch,
    )?;
    keep(&paths.target.join("dist"), &second_dir, &version, &platform)?;

    let mut differ = Vec::new();
    for name in artifacts(&version, &platform) {
        let (a, b) = (
            read(&first_dir.join(&name))?,
            read(&second_dir.join(&name))?,
        );
        log(&format!(
            "repro: {} ({} bytes) {}",
            name.display(),
            a.len(),
            if a == b { "identical" } else { "DIFFERS" }
        ));
        if a != b {
            differ.push(name.display().to_string());
        }
    }
    if !differ.is_empty() {
        bail!(
            "not reproducible: {} (the two builds are in {} and {})",
            differ.join(", "),
            first_dir.display(),
            second_dir.display()
        );
    }
    log("repro: both builds are byte-identical");
    Ok(())
}

/// `cargo xtask dist PLATFORM` in `root`, its cargo target `target`, its cross builds in `cross`.
fn build(
    root: &Path,
    target: &Path,
    cross: &Path,
    platform: Platform,
    epoch: &str,
) -> anyhow::Result<()> {
    log(&format!(
        "repro: building {} in {}",
        platform.name(),
        root.display()
    ));
    run(
        crate::util::host_cargo()
            .args([
                "run",
                "--quiet",
                "-p",
                "xtask",
                "--",
                "dist",
                &platform.name(),
            ])
            .current_dir(root)
            .env("CARGO_TARGET_DIR", target)
            .env("TABWIRE_DIST_TARGET_DIR", cross)
            .env("SOURCE_DATE_EPOCH", epoch)
            .env_remove("TABWIRE_DIST_KEEP_PATHS")
            .env_remove("CARGO_MANIFEST_DIR"),
        &format!("the build of {} in {}", platform.name(), root.display()),
    )
}

/// Copies the compared files out of `dist` (the next build writes the same names).
fn keep(dist: &Path, into: &Path, version: &str, platform: &Platform) -> anyhow::Result<()> {
    for name in artifacts(version, platform) {
        let to = into.join(&name);
        std::fs::create_dir_all(to.parent().context("a folder")?)?;
        std::fs::copy(dist.join(&name), &to)
            .with_context(|| format!("copying {} out of {}", name.display(), dist.display()))?;
    }
    Ok(())
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}
