//! The tools the extension's build runs after cargo, found or installed into the cache:
//! `wasm-bindgen` (wasm-bindgen-cli at exactly the version Cargo.lock pins for the crate, `cargo
//! install`ed when missing), binaryen's `wasm-opt` and `wasm2js` (a new enough binaryen on
//! PATH, else the npm package, installed into the cache when missing), and esbuild (npm, pinned),
//! which minifies the wasm2js output. Debian's binaryen 108 silently corrupts wasm-bindgen's output
//! (the externref table export), so a binaryen older than [`MIN_BINARYEN`] is never used.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::util::{Paths, log, output, run, warn};

/// The npm package version installed when no binaryen on PATH will do.
pub const NPM_BINARYEN: u32 = 132;
/// The esbuild installed from npm to minify the wasm2js output (the version the input fixtures use).
pub const NPM_ESBUILD: &str = "0.28.2";
/// The oldest binaryen taken from PATH. 108 (Debian 12's) corrupts wasm-bindgen 0.2.13x output;
/// 132 is the version every build here is made and measured with.
pub const MIN_BINARYEN: u32 = 120;

pub struct Tools {
    pub wasm_bindgen: PathBuf,
    pub wasm_opt: PathBuf,
    pub wasm2js: PathBuf,
    pub esbuild: PathBuf,
    /// Files whose change must redo every post-processed output.
    pub fingerprint: Vec<PathBuf>,
}

impl Tools {
    pub fn ensure(paths: &Paths) -> anyhow::Result<Tools> {
        let wasm_bindgen = ensure_wasm_bindgen(paths)?;
        let (wasm_opt, wasm2js) = ensure_binaryen(paths)?;
        let esbuild = ensure_esbuild(paths)?;
        let mut fingerprint = vec![
            wasm_bindgen.clone(),
            wasm_opt.clone(),
            wasm2js.clone(),
            esbuild.clone(),
        ];
        // This driver does the wasm2js fix-ups and the export check: a new driver redoes them.
        fingerprint.extend(std::env::current_exe().ok());
        Ok(Tools {
            wasm_bindgen,
            wasm_opt,
            wasm2js,
            esbuild,
            fingerprint,
        })
    }
}

/// The version of package `name` that a Cargo.lock pins (the first one listed).
pub fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut current = None;
    for line in lock.lines() {
        if line.starts_with("[[package]]") {
            current = None;
        } else if let Some(n) = line.strip_prefix("name = ") {
            current = Some(n.trim_matches('"').to_owned());
        } else if let Some(v) = line.strip_prefix("version = ")
            && current.as_deref() == Some(name)
        {
            return Some(v.trim_matches('"').to_owned());
        }
    }
    None
}

fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

fn ensure_wasm_bindgen(paths: &Paths) -> anyhow::Result<PathBuf> {
    let lock = std::fs::read_to_string(paths.root.join("Cargo.lock"))
        .context("reading Cargo.lock (run `cargo generate-lockfile`)")?;
    let version =
        locked_version(&lock, "wasm-bindgen").context("Cargo.lock pins no wasm-bindgen version")?;
    let wanted = format!("wasm-bindgen {version}");
    let has_version = |binary: &Path| {
        output(Command::new(binary).arg("--version")).is_ok_and(|v| v.trim() == wanted)
    };
    let root = paths.cache.join("tools");
    let cached = root.join("bin").join(exe("wasm-bindgen"));
    if has_version(&cached) {
        return Ok(cached);
    }
    if let Ok(found) = which("wasm-bindgen")
        && has_version(&found)
    {
        return Ok(found);
    }
    // No --locked: a locked dependency version of wasm-bindgen-cli is missing from the registry.
    log(&format!(
        "cargo install wasm-bindgen-cli --version {version} (3-6 minutes, once) into {}",
        root.display()
    ));
    run(
        crate::util::host_cargo()
            .args([
                "install",
                "wasm-bindgen-cli",
                "--version",
                &version,
                "--root",
            ])
            .arg(&root),
        "cargo install wasm-bindgen-cli",
    )?;
    if !has_version(&cached) {
        bail!(
            "{} --version is not {version} after installing",
            cached.display()
        );
    }
    Ok(cached)
}

/// The major version in `wasm-opt --version` output (`wasm-opt version 132 (version_132)`).
pub fn binaryen_version(text: &str) -> Option<u32> {
    let rest = text.split("version").nth(1)?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Where the build's npm packages are installed (binaryen when PATH has none that will do, esbuild).
fn npm_root(paths: &Paths) -> PathBuf {
    paths.cache.join("npm")
}

/// The launcher npm writes for `name` into `npm_root` (a `.cmd` on Windows).
fn npm_launcher(npm_root: &Path, name: &str) -> PathBuf {
    npm_root
        .join("node_modules")
        .join(".bin")
        .join(if cfg!(windows) {
            format!("{name}.cmd")
        } else {
            name.to_owned()
        })
}

/// The installed version of npm package `package` under `npm_root`, from its package.json.
fn npm_version(npm_root: &Path, package: &str) -> Option<String> {
    let manifest = npm_root
        .join("node_modules")
        .join(package)
        .join("package.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).ok()?).ok()?;
    json["version"].as_str().map(str::to_owned)
}

/// `npm install package@version` into `npm_root`; `why` says what it is needed for when it fails.
fn npm_install(npm_root: &Path, package: &str, why: &str) -> anyhow::Result<()> {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    log(&format!(
        "npm install {package} into {}",
        npm_root.display()
    ));
    std::fs::create_dir_all(npm_root)?;
    run(
        Command::new(npm)
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(npm_root)
            .arg(package),
        &format!("npm install {package}"),
    )
    .with_context(|| why.to_owned())
}

fn ensure_esbuild(paths: &Paths) -> anyhow::Result<PathBuf> {
    let npm_root = npm_root(paths);
    let esbuild = npm_launcher(&npm_root, "esbuild");
    if npm_version(&npm_root, "esbuild").as_deref() == Some(NPM_ESBUILD) && esbuild.exists() {
        return Ok(esbuild);
    }
    npm_install(
        &npm_root,
        &format!("esbuild@{NPM_ESBUILD}"),
        "esbuild (from npm) minifies the strict-CSP fallback: install Node.js (for npm)",
    )?;
    if !esbuild.exists() {
        bail!("npm installed esbuild but {} is missing", esbuild.display());
    }
    Ok(esbuild)
}

fn ensure_binaryen(paths: &Paths) -> anyhow::Result<(PathBuf, PathBuf)> {
    let npm_root = npm_root(paths);
    let npm_pair = (
        npm_launcher(&npm_root, "wasm-opt"),
        npm_launcher(&npm_root, "wasm2js"),
    );
    let npm_major =
        npm_version(&npm_root, "binaryen").and_then(|v| v.split('.').next()?.parse::<u32>().ok());
    if npm_major == Some(NPM_BINARYEN) && npm_pair.0.exists() && npm_pair.1.exists() {
        return Ok(npm_pair);
    }
    if let Ok(wasm_opt) = which("wasm-opt") {
        let version = output(Command::new(&wasm_opt).arg("--version"))
            .ok()
            .and_then(|v| binaryen_version(&v));
        let wasm2js = wasm_opt.with_file_name(exe("wasm2js"));
        match version {
            Some(v) if v >= MIN_BINARYEN && wasm2js.exists() => return Ok((wasm_opt, wasm2js)),
            Some(v) if v >= MIN_BINARYEN => warn(&format!(
                "{} has no wasm2js beside it: using npm's binaryen instead",
                wasm_opt.display()
            )),
            _ => warn(&format!(
                "{} is binaryen {} (older than {MIN_BINARYEN}, which corrupts wasm-bindgen output): \
                 using npm's binaryen {NPM_BINARYEN} instead",
                wasm_opt.display(),
                version.map_or("of unknown version".to_owned(), |v| v.to_string())
            )),
        }
    }
    npm_install(
        &npm_root,
        &format!("binaryen@{NPM_BINARYEN}"),
        &format!(
            "binaryen {MIN_BINARYEN}+ is needed (wasm-opt and wasm2js): install Node.js (for npm) \
             or binaryen {MIN_BINARYEN}+ on PATH"
        ),
    )?;
    if !(npm_pair.0.exists() && npm_pair.1.exists()) {
        bail!(
            "npm installed binaryen but {} is missing",
            npm_pair.0.display()
        );
    }
    Ok(npm_pair)
}

/// The first `name` (with the platform's executable suffix) in PATH.
pub fn which(name: &str) -> anyhow::Result<PathBuf> {
    let file = exe(name);
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(&file))
        .find(|candidate| candidate.is_file())
        .with_context(|| format!("{name} is not on PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locked_version_of_a_package() {
        let lock = "version = 4\n\n[[package]]\nname = \"wasm-bindgen-macro\"\nversion = \"9.9.9\"\n\n\
                    [[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\nsource = \"x\"\n";
        assert_eq!(
            locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(locked_version(lock, "serde"), None);
    }

    #[test]
    fn binaryen_versions_are_read_from_wasm_opt() {
        assert_eq!(
            binaryen_version("wasm-opt version 132 (version_132)"),
            Some(132)
        );
        assert_eq!(binaryen_version("wasm-opt version 108"), Some(108));
        assert_eq!(binaryen_version("wasm-opt"), None);
    }
}
