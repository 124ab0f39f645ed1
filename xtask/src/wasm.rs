//! One wasm-bindgen crate of the extension, built and post-processed:
//! cargo (profile `wasm-release`) → `wasm-bindgen --target web` → `wasm-opt -Oz` into the output
//! directory; with a JS directory also the fallback for pages whose CSP forbids wasm: the MVP
//! build → `wasm-bindgen --target bundler` → `wasm-opt -Oz` → `wasm2js -Oz` → the fix-ups of
//! [`crate::wasm2js`] → esbuild's minifier. Post-processing is skipped when its outputs are newer than its inputs.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::toolchain::{Build, Plan, WASM_TARGET};
use crate::tools::Tools;
use crate::util::{Paths, TempDir, log, newer_than, replace_dir, run};

/// Builds crate `extension/<name>` (lib name `name`) into `out_dir`, and its JS fallback into
/// `js_dir` when given.
pub fn build_crate(
    paths: &Paths,
    tools: &Tools,
    plan: &Plan,
    name: &str,
    out_dir: &Path,
    js_dir: Option<&Path>,
) -> anyhow::Result<()> {
    let manifest = paths.root.join("extension").join(name).join("Cargo.toml");
    let started = Instant::now();
    let wasm = cargo_build(&plan.wasm, &manifest, name)?;
    let fingerprint: Vec<&Path> = tools.fingerprint.iter().map(|p| p.as_path()).collect();
    let glue = out_dir.join(format!("{name}.js"));
    let shipped = out_dir.join(format!("{name}_bg.wasm"));
    let mut inputs = fingerprint.clone();
    inputs.push(&wasm);
    if newer_than(&shipped, &inputs) && glue.is_file() {
        log(&format!("{} up to date", out_dir.display()));
    } else {
        let tmp = TempDir::beside(out_dir)?;
        bindgen(tools, "web", &wasm, &tmp.0, name)?;
        let raw = tmp.0.join(format!("{name}_bg.wasm"));
        let optimized = tmp.0.join(format!("{name}_bg.opt.wasm"));
        // The `producers` and `target_features` sections are for toolchains and linkers; a
        // browser ignores them (about 280 bytes of each module).
        binaryen_oz(
            &tools.wasm_opt,
            &["--strip-producers", "--strip-target-features"],
            &raw,
            &optimized,
        )?;
        std::fs::rename(&optimized, &raw)?;
        replace_dir(&tmp.0, out_dir)?;
        log(&format!(
            "{}: {name}_bg.wasm {} → {} bytes ({:.1} s)",
            out_dir.display(),
            size(&wasm),
            size(&shipped),
            started.elapsed().as_secs_f64()
        ));
    }
    let Some(js_dir) = js_dir else {
        return Ok(());
    };

    let started = Instant::now();
    let mvp_wasm = cargo_build(&plan.mvp, &manifest, name)?;
    let js = js_dir.join(format!("{name}_bg.wasm.js"));
    let mut inputs = fingerprint;
    inputs.extend([mvp_wasm.as_path(), glue.as_path()]);
    if newer_than(&js, &inputs) && js_dir.join(format!("{name}.js")).is_file() {
        log(&format!("{} up to date", js_dir.display()));
        return Ok(());
    }
    let tmp = TempDir::beside(js_dir)?;
    bindgen(tools, "bundler", &mvp_wasm, &tmp.0, name)?;
    let raw = tmp.0.join(format!("{name}_bg.wasm"));
    let optimized = tmp.0.join(format!("{name}_bg.opt.wasm"));
    let tmp_js = tmp.0.join(format!("{name}_bg.wasm.js"));
    binaryen_oz(&tools.wasm_opt, &["--mvp-features"], &raw, &optimized)?;
    binaryen_oz(&tools.wasm2js, &["--mvp-features"], &optimized, &tmp_js)?;
    std::fs::remove_file(&raw)?;
    std::fs::remove_file(&optimized)?;
    crate::wasm2js::fix_up(&tmp.0, name)?;
    minify(tools, &tmp_js, name)?;
    crate::wasm2js::check_exports(&glue, &tmp.0, name)?;
    replace_dir(&tmp.0, js_dir)?;
    log(&format!(
        "{}: {name}_bg.wasm.js {} bytes ({:.1} s)",
        js_dir.display(),
        size(&js),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Runs binaryen's `tool` (wasm-opt or wasm2js) at `-Oz` with `flags`, from the file `from` into `to`.
fn binaryen_oz(tool: &Path, flags: &[&str], from: &Path, to: &Path) -> anyhow::Result<()> {
    let mut command = Command::new(tool);
    command.arg("-Oz").args(flags).arg(from).arg("-o").arg(to);
    let what = format!("{} -Oz of {}", tool.display(), from.display());
    run(&mut command, &what)
}

/// Minifies the wasm2js output in place with esbuild: wasm2js indents every nested block, and its
/// names are long (`$12_1`); the file is what a strict-CSP page parses before its first call.
fn minify(tools: &Tools, js: &Path, name: &str) -> anyhow::Result<()> {
    let before = size(js);
    run(
        Command::new(&tools.esbuild)
            .arg(js)
            .args([
                "--minify",
                "--format=esm",
                "--log-level=warning",
                "--allow-overwrite",
            ])
            .arg(format!("--outfile={}", js.display())),
        &format!("esbuild --minify of {name}_bg.wasm.js"),
    )?;
    log(&format!(
        "{name}_bg.wasm.js minified: {before} -> {} bytes",
        size(js)
    ));
    Ok(())
}

fn size(path: &Path) -> u64 {
    path.metadata().map_or(0, |m| m.len())
}

/// `cargo build` of the crate at `manifest` for wasm32 as `build` says; returns the `.wasm`.
/// RUSTFLAGS from the environment are meant for host builds and are dropped; per-target rustflags
/// from `.cargo/config.toml` still apply (and are merged).
fn cargo_build(build: &Build, manifest: &Path, lib: &str) -> anyhow::Result<std::path::PathBuf> {
    log(&format!("cargo build {lib} (wasm32, {build})"));
    let mut cmd = Command::new(&build.cargo);
    cmd.args([
        "build",
        "--quiet",
        "--target",
        WASM_TARGET,
        "--profile",
        "wasm-release",
    ])
    .args(&build.cargo_args)
    .arg("--manifest-path")
    .arg(manifest)
    .arg("--target-dir")
    .arg(&build.target_dir);
    if !build.rustflags.is_empty() {
        let list: Vec<String> = build.rustflags.iter().map(|f| format!("{f:?}")).collect();
        cmd.arg("--config").arg(format!(
            "target.{WASM_TARGET}.rustflags=[{}]",
            list.join(", ")
        ));
    }
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTUP_TOOLCHAIN",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUSTC", &build.rustc).env("RUSTC_BOOTSTRAP", "1");
    run(&mut cmd, &format!("cargo build of {lib} for {WASM_TARGET}"))?;
    let wasm = build
        .target_dir
        .join(WASM_TARGET)
        .join("wasm-release")
        .join(format!("{lib}.wasm"));
    if !wasm.is_file() {
        bail!(
            "cargo did not produce {} (is {lib} a cdylib?)",
            wasm.display()
        );
    }
    Ok(wasm)
}

fn bindgen(tools: &Tools, target: &str, wasm: &Path, out: &Path, name: &str) -> anyhow::Result<()> {
    run(
        Command::new(&tools.wasm_bindgen)
            .args([
                "--target",
                target,
                "--no-typescript",
                "--out-name",
                name,
                "--out-dir",
            ])
            .arg(out)
            .arg(wasm),
        &format!("wasm-bindgen --target {target} of {name}"),
    )
    .with_context(|| format!("post-processing {}", wasm.display()))
}
