//! Which Rust toolchain and which standard library build each of the extension's two wasm builds:
//! the wasm build (`--target web`) and the MVP build that wasm2js turns into the JS fallback for
//! pages whose CSP forbids wasm.
//!
//! Standard toolchains first: the active toolchain (rustup's, on any OS) is used when it can do
//! the job, with the smallest standard library it can give:
//! - a prebuilt wasm32 std already built with `-Cpanic=immediate-abort` (a probe compile tells);
//! - else a std that cargo builds from the toolchain's `rust-src` (`-Zbuild-std`, under
//!   `RUSTC_BOOTSTRAP`), with immediate-abort panics and std's `optimize_for_size`;
//! - else its prebuilt wasm32 std as rustup ships it (unwinding-free, but with panic messages).
//!
//! The MVP build needs a std compiled for MVP wasm, which no prebuilt std is: it comes from
//! `rust-src`. Where the active toolchain cannot do a build, the Debian fallback does: private
//! sysroots whose std is built once, offline, from Debian's rust-web-src (the recipe
//! [`DEBIAN_VARIANT`] names), cached and linked into rustup as `tabwire-wasm-*`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::util::{Paths, log, output, run, warn};

pub const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// The rustc flags of a std (and so of the crates linked with it) whose panics trap at once,
/// without formatting a message (in a wasm module without a panic hook it went nowhere anyway).
pub const IMMEDIATE_ABORT: &[&str] = &["-Zunstable-options", "-Cpanic=immediate-abort"];
/// What a wasm2js-bound build adds.
pub const MVP: &str = "-Ctarget-cpu=mvp";
/// std's smaller sorts, integer formatting and escapes (same results, a bit slower).
const STD_FEATURES: &str = "optimize_for_size";
/// Names the Debian sysroots' recipe (immediate-abort, optimize_for_size) in their directories and
/// the target directories built against them: change it with the recipe, or cargo would reuse crates
/// compiled against the previous std (it does not notice a std swapped under the same path).
pub const DEBIAN_VARIANT: &str = "ia-small";

/// Where a build's standard library comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasmStd {
    /// The toolchain's own wasm32 std; `immediate_abort` when it was built with it (then the
    /// crates must be too).
    Prebuilt { immediate_abort: bool },
    /// Built by cargo from the toolchain's `rust-src` along with the crates.
    FromSource,
    /// A private sysroot built from Debian's rust-web-src.
    Debian,
}

/// What is known about the active toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub has_wasm_std: bool,
    /// Its wasm32 std was built with immediate-abort panics.
    pub immediate_abort_std: bool,
    pub has_rust_src: bool,
    /// Debian's rustc, std sources and a wasm linker are installed.
    pub debian: bool,
}

/// The std of the wasm build and of the MVP build, or why the build cannot be done here.
pub fn decide(facts: Facts) -> Result<(WasmStd, WasmStd), String> {
    let wasm = if facts.has_wasm_std && facts.immediate_abort_std {
        WasmStd::Prebuilt {
            immediate_abort: true,
        }
    } else if facts.has_rust_src {
        WasmStd::FromSource
    } else if facts.has_wasm_std {
        WasmStd::Prebuilt {
            immediate_abort: false,
        }
    } else if facts.debian {
        WasmStd::Debian
    } else {
        return Err(format!(
            "the active Rust toolchain has no {WASM_TARGET} target: run `rustup target add \
             {WASM_TARGET}` and `rustup component add rust-src` (on Debian, ./build.sh installs \
             the fallback instead)"
        ));
    };
    let mvp = if facts.has_rust_src {
        WasmStd::FromSource
    } else if facts.debian {
        WasmStd::Debian
    } else {
        return Err(
            "the JS fallback (for pages whose CSP forbids wasm) needs a standard library \
             built for MVP wasm, from the toolchain's sources: run `rustup component add rust-src`"
                .to_owned(),
        );
    };
    Ok((wasm, mvp))
}

/// How cargo is run for one wasm build.
#[derive(Debug, Clone)]
pub struct Build {
    pub std: WasmStd,
    /// Toolchain name, for messages and the target directory.
    pub toolchain: String,
    pub cargo: PathBuf,
    pub rustc: PathBuf,
    pub rustflags: Vec<String>,
    /// `-Zbuild-std...` for [`WasmStd::FromSource`].
    pub cargo_args: Vec<String>,
    pub target_dir: PathBuf,
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let std = match self.std {
            WasmStd::Prebuilt {
                immediate_abort: true,
            } => "its prebuilt std (immediate-abort)",
            WasmStd::Prebuilt {
                immediate_abort: false,
            } => "its prebuilt std",
            WasmStd::FromSource => "std built from its rust-src (immediate-abort, size-optimized)",
            WasmStd::Debian => {
                "std built from Debian's rust-web-src (immediate-abort, size-optimized)"
            }
        };
        write!(f, "{} with {std}", self.toolchain)
    }
}

pub struct Plan {
    pub wasm: Build,
    pub mvp: Build,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wasm: {}; JS fallback: {}", self.wasm, self.mvp)
    }
}

/// Looks at the active toolchain and the Debian fallback, and decides.
pub fn plan(paths: &Paths) -> anyhow::Result<Plan> {
    let sysroot = PathBuf::from(
        output(
            Command::new("rustc")
                .args(["--print", "sysroot"])
                .current_dir(&paths.root),
        )
        .context("asking the active Rust toolchain for its sysroot")?,
    );
    let rustlib = sysroot.join("lib").join("rustlib");
    let has_wasm_std = has_std_rlib(&rustlib.join(WASM_TARGET).join("lib"));
    let facts = Facts {
        has_wasm_std,
        immediate_abort_std: has_wasm_std && immediate_abort_probe(&sysroot, paths)?,
        has_rust_src: rustlib.join("src/rust/library/std/Cargo.toml").is_file(),
        debian: debian_available(),
    };
    let (wasm, mvp) = decide(facts).map_err(anyhow::Error::msg)?;
    let active = |std: WasmStd, mvp: bool| {
        let bin = sysroot.join("bin");
        let name = sysroot
            .file_name()
            .map_or("active".into(), |n| n.to_string_lossy().into_owned());
        let kind = match std {
            WasmStd::FromSource => "source",
            _ => "prebuilt",
        };
        let mut rustflags: Vec<String> = Vec::new();
        let mut cargo_args = Vec::new();
        if matches!(
            std,
            WasmStd::FromSource
                | WasmStd::Prebuilt {
                    immediate_abort: true
                }
        ) {
            rustflags.extend(IMMEDIATE_ABORT.iter().map(|s| s.to_string()));
        }
        if std == WasmStd::FromSource {
            cargo_args = vec![
                "-Zbuild-std=std,panic_abort".to_owned(),
                format!("-Zbuild-std-features={STD_FEATURES}"),
            ];
        }
        if mvp {
            rustflags.push(MVP.to_owned());
        }
        let exe = std::env::consts::EXE_SUFFIX;
        Build {
            std,
            toolchain: format!("toolchain {name}"),
            cargo: bin.join(format!("cargo{exe}")),
            rustc: bin.join(format!("rustc{exe}")),
            rustflags,
            cargo_args,
            target_dir: paths.target.join(format!(
                "wasm-{}{name}-{kind}",
                if mvp { "mvp-" } else { "" }
            )),
        }
    };
    let resolve = |std: WasmStd, mvp: bool| -> anyhow::Result<Build> {
        match std {
            WasmStd::Debian => debian_build(paths, mvp),
            _ => Ok(active(std, mvp)),
        }
    };
    Ok(Plan {
        wasm: resolve(wasm, false)?,
        mvp: resolve(mvp, true)?,
    })
}

fn has_std_rlib(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libstd-") && name.ends_with(".rlib")
        })
    })
}

/// Whether the toolchain's wasm32 std panics with immediate-abort: an empty cdylib links
/// against it only when built with the same strategy (a fraction of a second).
fn immediate_abort_probe(sysroot: &Path, paths: &Paths) -> anyhow::Result<bool> {
    let dir = paths.target.join("wasm-std-probe");
    std::fs::create_dir_all(&dir)?;
    let source = dir.join("probe.rs");
    std::fs::write(&source, "")?;
    let rustc = sysroot
        .join("bin")
        .join(format!("rustc{}", std::env::consts::EXE_SUFFIX));
    let status = Command::new(rustc)
        .args(["--crate-type", "cdylib", "--target", WASM_TARGET])
        .args(IMMEDIATE_ABORT)
        .arg("--out-dir")
        .arg(&dir)
        .arg(&source)
        .env("RUSTC_BOOTSTRAP", "1")
        .stderr(std::process::Stdio::null())
        .status()
        .context("running the toolchain's rustc")?;
    Ok(status.success())
}

// ---- the Debian fallback ------------------------------------------------------------------------

const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const DEBIAN_RUSTLIB: &str = "/usr/lib/rustlib";

fn debian_available() -> bool {
    cfg!(unix)
        && Path::new(DEBIAN_RUSTC).is_file()
        && Path::new(DEBIAN_CARGO).is_file()
        && Path::new(DEBIAN_RUSTLIB)
            .join("src/rust/library/std")
            .is_dir()
        && (crate::tools::which("rust-lld").is_ok() || crate::tools::which("wasm-ld").is_ok())
}

fn debian_sysroot(paths: &Paths, mvp: bool) -> PathBuf {
    let kind = if mvp { "mvp-" } else { "" };
    paths
        .cache
        .join(format!("wasm-sysroot-{kind}{DEBIAN_VARIANT}"))
}

fn debian_build(paths: &Paths, mvp: bool) -> anyhow::Result<Build> {
    let sysroot = ensure_debian_sysroot(paths, mvp)?;
    let kind = if mvp { "mvp-" } else { "" };
    let mut rustflags: Vec<String> = IMMEDIATE_ABORT.iter().map(|s| s.to_string()).collect();
    if mvp {
        rustflags.push(MVP.to_owned());
    }
    Ok(Build {
        std: WasmStd::Debian,
        toolchain: format!("Debian's rustc ({})", sysroot.display()),
        cargo: sysroot.join("bin").join("cargo"),
        rustc: sysroot.join("bin").join("rustc"),
        rustflags,
        cargo_args: Vec::new(),
        target_dir: paths.target.join(format!("wasm-{kind}{DEBIAN_VARIANT}")),
    })
}

/// Builds (once) the wasm32 std from Debian's sources and wraps it as a private sysroot, linked
/// into rustup (when there is one) as `tabwire-wasm-[mvp-]ia-small`. Writes nothing outside the
/// cache except that link. A later run finds the stamp and does nothing.
fn ensure_debian_sysroot(paths: &Paths, mvp: bool) -> anyhow::Result<PathBuf> {
    let dir = debian_sysroot(paths, mvp);
    let link_name = format!(
        "tabwire-wasm-{}{DEBIAN_VARIANT}",
        if mvp { "mvp-" } else { "" }
    );
    let mut std_flags = vec!["-Cembed-bitcode=yes".to_owned()];
    std_flags.extend(IMMEDIATE_ABORT.iter().map(|s| s.to_string()));
    if mvp {
        std_flags.push(MVP.to_owned());
    }
    let flags = std_flags.join(" ");
    // rustc -vV's lines joined by spaces, as the shell build wrote it: existing sysroots stay valid.
    let version: String = output(Command::new(DEBIAN_RUSTC).arg("-vV"))?
        .lines()
        .map(|l| format!("{l} "))
        .collect();
    let stamp = format!("{version} | RUSTFLAGS={flags} | features={STD_FEATURES} | layout=1");
    let stamp_file = dir.join(".tabwire-stamp");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp) {
        link_rustup(&link_name, &dir);
        return Ok(dir);
    }
    log(&format!(
        "building the {WASM_TARGET} standard library (RUSTFLAGS='{flags}') from Debian's \
         rust-web-src (~1 min, once)"
    ));
    let started = std::time::Instant::now();
    let work = paths.cache.join(format!(
        "wasm-std-build-{}",
        if mvp { "mvp" } else { "default" }
    ));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(work.join("src"))?;
    std::fs::write(
        work.join("Cargo.toml"),
        "[package]\nname = \"tabwire_std_build\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         [lib]\npath = \"src/lib.rs\"\n[workspace]\n",
    )?;
    std::fs::write(work.join("src/lib.rs"), "")?;
    run(
        Command::new(DEBIAN_CARGO)
            .args(["build", "--quiet", "--release", "--target", WASM_TARGET])
            .args(["-Zbuild-std=std,panic_abort"])
            .arg(format!("-Zbuild-std-features={STD_FEATURES}"))
            .arg("--manifest-path")
            .arg(work.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(work.join("target"))
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTUP_TOOLCHAIN")
            .env("RUSTC", DEBIAN_RUSTC)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTFLAGS", &flags),
        "building the wasm32 std from Debian's rust-web-src",
    )?;
    let deps = work.join("target").join(WASM_TARGET).join("release/deps");
    if !has_std_rlib(&deps) {
        bail!(
            "the std build produced no libstd rlib in {}",
            deps.display()
        );
    }
    // Assemble the sysroot next to its final place, then swap it in.
    let fresh = dir.with_file_name(format!(
        "{}.new.{}",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh)?;
    }
    let lib = fresh.join("lib/rustlib").join(WASM_TARGET).join("lib");
    std::fs::create_dir_all(&lib)?;
    std::fs::create_dir_all(fresh.join("bin"))?;
    assemble_sysroot(&fresh, &dir)?;
    for entry in std::fs::read_dir(&deps)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(".rlib") && !name.starts_with("libtabwire_std_build-") {
            std::fs::copy(&path, lib.join(path.file_name().unwrap_or_default()))?;
        }
    }
    std::fs::write(fresh.join(".tabwire-stamp"), &stamp)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::rename(&fresh, &dir)?;
    std::fs::remove_dir_all(&work)?;
    link_rustup(&link_name, &dir);
    log(&format!(
        "wasm32 std ready in {} s: {}",
        started.elapsed().as_secs(),
        dir.display()
    ));
    Ok(dir)
}

/// The sysroot's `bin/rustc` is a wrapper, not a symlink (rustc derives its sysroot from its own
/// library's location); cargo, the host's libraries, the sources and `etc` are Debian's.
#[cfg(unix)]
fn assemble_sysroot(fresh: &Path, final_dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{PermissionsExt, symlink};
    for tool in ["rustc", "rustdoc"] {
        let wrapper = fresh.join("bin").join(tool);
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexec /usr/bin/{tool} --sysroot \"{}\" \"$@\"\n",
                final_dir.display()
            ),
        )?;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))?;
    }
    symlink(DEBIAN_CARGO, fresh.join("bin/cargo"))?;
    let host = output(Command::new(DEBIAN_RUSTC).args(["--print", "host-tuple"]))
        .or_else(|_| output(Command::new(DEBIAN_RUSTC).args(["-vV"])).map(|v| host_of(&v)))?;
    let rustlib = Path::new(DEBIAN_RUSTLIB);
    for part in [host.as_str(), "src", "etc"] {
        symlink(rustlib.join(part), fresh.join("lib/rustlib").join(part))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn assemble_sysroot(_fresh: &Path, _final_dir: &Path) -> anyhow::Result<()> {
    bail!("the Debian fallback exists on Debian only")
}

#[cfg(unix)]
fn host_of(version: &str) -> String {
    version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or("x86_64-unknown-linux-gnu")
        .to_owned()
}

/// `rustup toolchain link NAME DIR`, so `cargo +NAME` reaches the sysroot (the build itself
/// does not need it).
fn link_rustup(name: &str, dir: &Path) {
    let Ok(list) = output(Command::new("rustup").args(["toolchain", "list", "-v"])) else {
        return;
    };
    let current = list.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some(name)).then(|| line.split_whitespace().last().map(PathBuf::from))?
    });
    if current.as_deref() == Some(dir) {
        return;
    }
    if current.is_some() {
        let _ = output(Command::new("rustup").args(["toolchain", "uninstall", name]));
    }
    if let Err(e) = output(
        Command::new("rustup")
            .args(["toolchain", "link", name])
            .arg(dir),
    ) {
        warn(&format!(
            "rustup toolchain link {name} failed (the build does not need it): {e}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTHING: Facts = Facts {
        has_wasm_std: false,
        immediate_abort_std: false,
        has_rust_src: false,
        debian: false,
    };
    /// The toolchain's own wasm32 std, as rustup ships it, or built with immediate-abort.
    const PREBUILT: WasmStd = WasmStd::Prebuilt {
        immediate_abort: false,
    };
    const PREBUILT_IMMEDIATE_ABORT: WasmStd = WasmStd::Prebuilt {
        immediate_abort: true,
    };

    #[test]
    fn rustup_stable_with_the_target_and_rust_src_builds_std_from_source() {
        let facts = Facts {
            has_wasm_std: true,
            has_rust_src: true,
            ..NOTHING
        };
        assert_eq!(
            decide(facts),
            Ok((WasmStd::FromSource, WasmStd::FromSource))
        );
    }

    #[test]
    fn a_prebuilt_immediate_abort_std_is_used_as_it_is() {
        let facts = Facts {
            has_wasm_std: true,
            immediate_abort_std: true,
            has_rust_src: true,
            ..NOTHING
        };
        let chosen = decide(facts);
        assert_eq!(chosen, Ok((PREBUILT_IMMEDIATE_ABORT, WasmStd::FromSource)));
    }

    #[test]
    fn without_rust_src_the_mvp_build_needs_the_debian_fallback_or_says_what_to_install() {
        let facts = Facts {
            has_wasm_std: true,
            ..NOTHING
        };
        let error = decide(facts).unwrap_err();
        assert!(error.contains("rustup component add rust-src"), "{error}");
        let on_debian = Facts {
            debian: true,
            ..facts
        };
        assert_eq!(decide(on_debian), Ok((PREBUILT, WasmStd::Debian)));
    }

    #[test]
    fn a_toolchain_without_the_target_falls_back_to_debian_or_says_what_to_install() {
        let on_debian = Facts {
            debian: true,
            ..NOTHING
        };
        assert_eq!(decide(on_debian), Ok((WasmStd::Debian, WasmStd::Debian)));
        let error = decide(NOTHING).unwrap_err();
        assert!(
            error.contains("rustup target add wasm32-unknown-unknown"),
            "{error}"
        );
    }
}
