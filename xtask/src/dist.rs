//! `cargo xtask dist`: release binaries of `tabwire` (the extension embedded, as always) for every
//! platform Tabwire ships on, cross-built on this Linux machine, stripped, into
//! `target/dist/<platform>/`. The one table of those platforms ([`PLATFORMS`]) is also what the npm
//! packages ([`crate::npm`]) and the multi-platform `.mcpb` are made from.
//!
//! The route, and why: no prebuilt standard library for other targets can be downloaded here
//! (rustup reaches no server), so every cross target builds its std from Rust's sources
//! (`-Zbuild-std` under `RUSTC_BOOTSTRAP`, Debian's rust-web-src or rustup's rust-src), as
//! `check-targets` does. Linking: Windows with Debian's MinGW-w64 gcc (a plain apt package, and the
//! linker the `-gnu` target expects); macOS and Linux arm64 with zig as the linker through
//! `cargo-zigbuild`, it and zig both from PyPI wheels (`cargo-zigbuild`, `ziglang`) — zig carries the macOS
//! SDK stubs and glibc versions, so no Apple SDK or sysroot is needed. All of it is installed once
//! into the cache and works offline afterwards; the cargo target directory lives in the cache too.
//! Paths in the binaries are remapped (`--remap-path-prefix`) so the output does not depend on
//! where the checkout or the cache lives.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::util::{Paths, log, run};

/// How a platform's binary is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linker {
    /// MinGW-w64's gcc (Debian: gcc-mingw-w64-x86-64).
    Mingw,
    /// zig, through cargo-zigbuild.
    Zig,
}

/// A platform Tabwire ships a binary for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// The Rust target.
    pub triple: &'static str,
    /// Node's `process.platform` (also the `.mcpb` platform name).
    pub os: &'static str,
    /// Node's `process.arch`.
    pub cpu: &'static str,
    pub linker: Linker,
}

impl Platform {
    /// `linux-x64`, `win32-x64`, ...: the folder under `target/dist` and the npm package's suffix.
    pub fn name(&self) -> String {
        format!("{}-{}", self.os, self.cpu)
    }

    pub fn exe(&self) -> &'static str {
        if self.os == "win32" {
            "tabwire.exe"
        } else {
            "tabwire"
        }
    }

    /// Whether this machine runs this platform's binaries natively (the host build is used).
    pub fn is_host(&self) -> bool {
        let os = match std::env::consts::OS {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        let cpu = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            other => other,
        };
        self.os == os && self.cpu == cpu
    }
}

pub const PLATFORMS: &[Platform] = &[
    Platform {
        triple: "x86_64-unknown-linux-gnu",
        os: "linux",
        cpu: "x64",
        linker: Linker::Zig,
    },
    Platform {
        triple: "aarch64-unknown-linux-gnu",
        os: "linux",
        cpu: "arm64",
        linker: Linker::Zig,
    },
    Platform {
        triple: "x86_64-apple-darwin",
        os: "darwin",
        cpu: "x64",
        linker: Linker::Zig,
    },
    Platform {
        triple: "aarch64-apple-darwin",
        os: "darwin",
        cpu: "arm64",
        linker: Linker::Zig,
    },
    Platform {
        triple: "x86_64-pc-windows-gnu",
        os: "win32",
        cpu: "x64",
        linker: Linker::Mingw,
    },
];

/// The glibc the Linux binaries are linked against (zig's `<triple>.<glibc>` suffix): old enough
/// for every distribution still maintained.
const GLIBC: &str = "2.28";

/// The oldest macOS the binaries run on (`MACOSX_DEPLOYMENT_TARGET`, checked in
/// test_dist_formats.py).
const MACOS_MIN: &str = "11.0";

/// `target/dist/<platform>/<exe>`.
pub fn binary_path(paths: &Paths, platform: &Platform) -> PathBuf {
    paths
        .target
        .join("dist")
        .join(platform.name())
        .join(platform.exe())
}

/// The binary a package gets for `platform`: the cross build's, else, for this machine's own
/// platform, the release build's (`target/release/tabwire`, what test.sh has without a cross build).
pub fn binary_at_hand(paths: &Paths, platform: &Platform) -> Option<PathBuf> {
    let dist = binary_path(paths, platform);
    if dist.is_file() {
        return Some(dist);
    }
    let host = paths.server_binary();
    (platform.is_host() && host.is_file()).then_some(host)
}

/// Parses `dist`'s arguments: platform names (`win32-x64`) or Rust targets; none means all.
pub fn select(names: &[&str]) -> anyhow::Result<Vec<Platform>> {
    if names.is_empty() {
        return Ok(PLATFORMS.to_vec());
    }
    names
        .iter()
        .map(|name| {
            PLATFORMS
                .iter()
                .find(|p| p.name() == *name || p.triple == *name)
                .copied()
                .with_context(|| {
                    let known: Vec<String> = PLATFORMS.iter().map(Platform::name).collect();
                    format!("unknown platform {name:?}; known: {}", known.join(", "))
                })
        })
        .collect()
}

/// Builds each platform's stripped release binary; returns them with their sizes logged.
pub fn build(paths: &Paths, platforms: &[Platform]) -> anyhow::Result<Vec<PathBuf>> {
    let (cargo, rustc) = crate::cross::std_source_toolchain()?;
    let mut built = Vec::new();
    for platform in platforms {
        let started = Instant::now();
        log(&format!(
            "dist: {} ({}, linked with {:?})",
            platform.name(),
            platform.triple,
            platform.linker
        ));
        let mut cmd = match platform.linker {
            Linker::Mingw => {
                crate::tools::which("x86_64-w64-mingw32-gcc").context(
                    "the Windows build links with MinGW-w64: apt-get install gcc-mingw-w64-x86-64",
                )?;
                let mut cmd = Command::new(&cargo);
                cmd.args(["build", "--target", platform.triple]).env(
                    "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER",
                    "x86_64-w64-mingw32-gcc",
                );
                cmd
            }
            Linker::Zig => {
                let zigbuild = zig_tools(paths)?;
                let target = if platform.os == "linux" {
                    format!("{}.{GLIBC}", platform.triple)
                } else {
                    platform.triple.to_owned()
                };
                let mut cmd = Command::new(&zigbuild.cargo_zigbuild);
                if platform.os == "darwin" {
                    // Without it zig links for its own newest macOS (a first darwin-arm64 build
                    // here came out LC_BUILD_VERSION minos 15.0); 11.0 is Rust's own minimum for
                    // Apple silicon and the oldest macOS still maintained.
                    cmd.env("MACOSX_DEPLOYMENT_TARGET", MACOS_MIN);
                }
                cmd.arg("zigbuild")
                    .args(["--target", target.as_str()])
                    .env("CARGO", &cargo)
                    .env("PATH", zigbuild.path_with_python()?);
                cmd
            }
        };
        let target_dir = dist_target_dir(paths);
        cmd.args(["--release", "--quiet", "-p", "server"])
            .args(["-Zbuild-std=std,panic_abort", "--target-dir"])
            .arg(&target_dir)
            .current_dir(&paths.root)
            .env_remove("RUSTUP_TOOLCHAIN")
            .env("RUSTC", &rustc)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
            .env("RUSTFLAGS", dist_rustflags(paths));
        run(&mut cmd, &format!("the {} build", platform.name()))?;
        let produced = target_dir
            .join(platform.triple)
            .join("release")
            .join(platform.exe());
        let out = binary_path(paths, platform);
        std::fs::create_dir_all(out.parent().context("a folder")?)?;
        std::fs::copy(&produced, &out)
            .with_context(|| format!("copying {} to {}", produced.display(), out.display()))?;
        let size = std::fs::metadata(&out)?.len();
        log(&format!(
            "dist: {} {:.1} MB stripped ({:.0} s)",
            out.display(),
            size as f64 / 1e6,
            started.elapsed().as_secs_f64()
        ));
        built.push(out);
    }
    Ok(built)
}

/// The cargo target directory of the cross builds: `~/.cache/tabwire/target-dist`, or
/// `TABWIRE_DIST_TARGET_DIR` (a second directory lets two builds run side by side without waiting
/// on cargo's lock of the first, and lets `cargo xtask repro` build the same binary twice).
pub fn dist_target_dir(paths: &Paths) -> PathBuf {
    std::env::var_os("TABWIRE_DIST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| paths.cache.join("target-dist"))
}

/// Warnings are errors, as in clippy and check-targets (a `cfg` that leaves an unused import on
/// one OS counts: test.sh's Windows build is its Windows check); source paths as they appear in
/// panic messages are the same wherever the checkout and cargo's registry are.
fn dist_rustflags(paths: &Paths) -> String {
    let mut flags = String::from("-Dwarnings");
    // test.sh sets TABWIRE_DIST_KEEP_PATHS: the checkout's path in RUSTFLAGS would make every
    // clone (CI's is new each run) rebuild all of the target's dependencies.
    if std::env::var_os("TABWIRE_DIST_KEEP_PATHS").is_none() {
        flags.push_str(&format!(
            " --remap-path-prefix={}=/tabwire",
            paths.root.display()
        ));
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(home) = cargo_home {
        flags.push_str(&format!(" --remap-path-prefix={}=/cargo", home.display()));
    }
    flags
}

/// cargo-zigbuild and zig, installed once into the cache: both are PyPI wheels (`cargo-zigbuild`
/// ships its binary there too), so one `pip install` into a virtual environment gets them, with no
/// compile.
struct ZigTools {
    cargo_zigbuild: PathBuf,
    /// The environment whose `python3 -m ziglang` cargo-zigbuild runs when no `zig` is on PATH.
    venv: PathBuf,
}

impl ZigTools {
    fn path_with_python(&self) -> anyhow::Result<std::ffi::OsString> {
        let mut dirs = vec![self.venv.join("bin")];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        Ok(std::env::join_paths(dirs)?)
    }
}

const ZIG_PACKAGES: &[&str] = &["cargo-zigbuild==0.24.0", "ziglang==0.17.1"];

fn zig_tools(paths: &Paths) -> anyhow::Result<ZigTools> {
    let venv = paths.cache.join("zig-venv");
    let stamp = venv.join(".tabwire-packages");
    let wanted = ZIG_PACKAGES.join(" ");
    let tools = ZigTools {
        cargo_zigbuild: venv.join("bin").join("cargo-zigbuild"),
        venv: venv.clone(),
    };
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) && tools.cargo_zigbuild.is_file()
    {
        return Ok(tools);
    }
    log(&format!("pip install {wanted} into {}", venv.display()));
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(venv.join("bin").join("python3"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(ZIG_PACKAGES),
        "pip install cargo-zigbuild ziglang",
    )?;
    if !tools.cargo_zigbuild.is_file() {
        bail!("pip did not install {}", tools.cargo_zigbuild.display());
    }
    std::fs::write(&stamp, wanted)?;
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platforms_are_named_as_node_names_them_and_selected_by_either_name() {
        let names: Vec<String> = PLATFORMS.iter().map(Platform::name).collect();
        assert_eq!(
            names,
            [
                "linux-x64",
                "linux-arm64",
                "darwin-x64",
                "darwin-arm64",
                "win32-x64"
            ]
        );
        assert_eq!(
            select(&["win32-x64"]).unwrap(),
            select(&["x86_64-pc-windows-gnu"]).unwrap()
        );
        assert!(
            select(&["beos-x64"])
                .unwrap_err()
                .to_string()
                .contains("known: linux-x64")
        );
        assert_eq!(select(&[]).unwrap().len(), 5);
    }
}
