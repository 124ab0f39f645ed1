//! The npm packages (`cargo xtask packages`, and `dist` after its builds), as `npm pack`
//! tarballs in `target/dist/npm/`:
//! - `tabwire`, the launcher (`npm/tabwire/`: `bin/tabwire.js`) with every platform package as an
//!   optional dependency, and `platforms.json` saying which package holds which platform's binary;
//! - `@tabwire/<os>-<cpu>` for each platform whose binary is at hand: `cargo xtask dist`'s in
//!   `target/dist/<platform>/`, or, for this machine's own platform, the release build's
//!   (`target/release/tabwire`). Each says its `os` and `cpu`, so npm installs only the one that
//!   runs (the pattern of esbuild and biome; no postinstall script, no download at install).
//!
//! The platform list is [`crate::dist::PLATFORMS`]; the version is the workspace's (manifest.json's).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use serde_json::{Value, json};

use crate::dist::{PLATFORMS, Platform};
use crate::util::{Paths, log, output, warn};

/// The npm scope of the platform packages.
const SCOPE: &str = "@tabwire";

fn package_name(platform: &Platform) -> String {
    format!("{SCOPE}/{}", platform.name())
}

/// Stages and packs the packages; returns the tarballs (the launcher's first).
pub fn pack(paths: &Paths) -> anyhow::Result<Vec<PathBuf>> {
    let version = crate::package::version(paths)?;
    let out = paths.target.join("dist").join("npm");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("clearing {}", out.display()))?;
    }
    std::fs::create_dir_all(&out)?;
    let mut tarballs = vec![npm_pack(&stage_launcher(paths, &version, &out)?, &out)?];
    for platform in PLATFORMS {
        match crate::dist::binary_at_hand(paths, platform) {
            Some(binary) => {
                let dir = stage_platform(platform, &binary, &version, &out)?;
                tarballs.push(npm_pack(&dir, &out)?);
            }
            None => warn(&format!(
                "no {} binary (run `cargo xtask dist {}`): its package is left out",
                platform.name(),
                platform.name()
            )),
        }
    }
    for tarball in &tarballs {
        log(&format!("npm: {}", tarball.display()));
    }
    Ok(tarballs)
}

/// The launcher package, from `npm/tabwire/` with its version, optional dependencies and
/// `platforms.json` filled in.
fn stage_launcher(paths: &Paths, version: &str, out: &Path) -> anyhow::Result<PathBuf> {
    let template = paths.root.join("npm").join("tabwire");
    let dir = out.join("tabwire");
    std::fs::create_dir_all(dir.join("bin"))?;
    for file in ["bin/tabwire.js", "README.md"] {
        std::fs::copy(template.join(file), dir.join(file))
            .with_context(|| format!("copying npm/tabwire/{file}"))?;
    }
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(template.join("package.json"))
            .context("reading npm/tabwire/package.json")?,
    )?;
    manifest["version"] = json!(version);
    manifest["optionalDependencies"] = PLATFORMS
        .iter()
        .map(|p| (package_name(p), json!(version)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    write_json(&dir.join("package.json"), &manifest)?;
    let packages: serde_json::Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (p.name(), json!({"name": package_name(p), "exe": p.exe()})))
        .collect();
    write_json(
        &dir.join("platforms.json"),
        &json!({"version": version, "packages": packages}),
    )?;
    Ok(dir)
}

fn stage_platform(
    platform: &Platform,
    binary: &Path,
    version: &str,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let dir = out.join(format!("tabwire-{}", platform.name()));
    std::fs::create_dir_all(dir.join("bin"))?;
    let exe = dir.join("bin").join(platform.exe());
    std::fs::copy(binary, &exe)
        .with_context(|| format!("copying {} into the package", binary.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))?;
    }
    let manifest = json!({
        "name": package_name(platform),
        "version": version,
        "description": format!("The tabwire binary for {} (installed by the `tabwire` package).", platform.name()),
        "license": "MIT OR Apache-2.0",
        "os": [platform.os],
        "cpu": [platform.cpu],
        "files": [format!("bin/{}", platform.exe())],
        "preferUnplugged": true,
    });
    write_json(&dir.join("package.json"), &manifest)?;
    Ok(dir)
}

fn write_json(path: &Path, value: &Value) -> anyhow::Result<()> {
    std::fs::write(path, serde_json::to_string_pretty(value)? + "\n")
        .with_context(|| format!("writing {}", path.display()))
}

/// `npm pack` of `dir` into `out`; returns the tarball (npm prints its file name last).
fn npm_pack(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    let printed = output(
        Command::new(npm)
            .args(["pack", "--silent", "--pack-destination"])
            .arg(out)
            .current_dir(dir)
            .env("npm_config_update_notifier", "false"),
    )
    .with_context(|| format!("npm pack in {}", dir.display()))?;
    let name = printed.lines().last().unwrap_or_default().trim();
    let tarball = out.join(name);
    anyhow::ensure!(
        !name.is_empty() && tarball.is_file(),
        "npm pack in {} made no tarball (it printed {printed:?})",
        dir.display()
    );
    Ok(tarball)
}
