//! `cargo xtask check-targets`: the server type-checks for macOS and Windows, on this machine.
//! No prebuilt std exists here for those targets, so cargo builds one from Rust's sources
//! (`-Zbuild-std`, under `RUSTC_BOOTSTRAP`): Debian's rust-web-src, or the active toolchain's
//! rust-src. `cargo check` links nothing, so no cross linker is needed; Windows' std does need
//! MinGW's `dlltool` for its import libraries (Debian: binutils-mingw-w64-x86-64). The target
//! directory lives in the cache, so the two std builds (~2.5 min each) happen once per machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

use crate::util::{Paths, log, output, run};

pub const TARGETS: &[&str] = &["x86_64-apple-darwin", "x86_64-pc-windows-gnu"];

/// Checks the server for `named` targets (each one of [`TARGETS`]), or for all of them.
pub fn check_targets(paths: &Paths, named: &[&str]) -> anyhow::Result<()> {
    if let Some(unknown) = named.iter().find(|t| !TARGETS.contains(t)) {
        bail!("check-targets knows {TARGETS:?}, not {unknown:?}");
    }
    let targets = if named.is_empty() { TARGETS } else { named };
    let (cargo, rustc) = std_source_toolchain()?;
    if crate::tools::which("x86_64-w64-mingw32-dlltool").is_err() {
        bail!(
            "checking for x86_64-pc-windows-gnu needs MinGW's dlltool: apt-get install \
             binutils-mingw-w64-x86-64"
        );
    }
    for target in targets {
        log(&format!("cargo check -p server --target {target}"));
        let started = std::time::Instant::now();
        run(
            Command::new(&cargo)
                .args(["check", "--quiet", "-p", "server", "--target", target])
                .args(["-Zbuild-std=std,panic_abort", "--target-dir"])
                .arg(paths.cache.join("target-cross"))
                .current_dir(&paths.root)
                .env_remove("RUSTUP_TOOLCHAIN")
                .env("RUSTC", &rustc)
                .env("RUSTC_BOOTSTRAP", "1")
                // Warnings are errors, as in clippy: a `cfg` that leaves an unused import on one OS counts.
                .env("RUSTFLAGS", "-Dwarnings"),
            &format!("cargo check of the server for {target}"),
        )?;
        log(&format!(
            "server checks for {target} ({:.0} s)",
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// A cargo and rustc that have the standard library's sources: Debian's, else the active
/// toolchain's with rust-src.
pub fn std_source_toolchain() -> anyhow::Result<(PathBuf, PathBuf)> {
    let debian = Path::new("/usr/lib/rustlib/src/rust/library/std");
    if debian.is_dir() && Path::new("/usr/bin/cargo").is_file() {
        return Ok(("/usr/bin/cargo".into(), "/usr/bin/rustc".into()));
    }
    let sysroot = PathBuf::from(output(Command::new("rustc").args(["--print", "sysroot"]))?);
    if sysroot.join("lib/rustlib/src/rust/library/std").is_dir() {
        let exe = std::env::consts::EXE_SUFFIX;
        return Ok((
            sysroot.join("bin").join(format!("cargo{exe}")),
            sysroot.join("bin").join(format!("rustc{exe}")),
        ));
    }
    bail!(
        "checking other targets needs the standard library's sources: `rustup component add \
         rust-src` (or, on Debian, apt-get install -t bookworm-security rust-web-src)"
    )
}
