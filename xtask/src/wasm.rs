//! One wasm-bindgen crate of the extension, built and post-processed:
//! cargo (profile `wasm-release`) → `wasm-bindgen` → `wasm-opt -Oz` into the output directory. A
//! module's glue is an ES module (`--target web`: the service worker imports it); a content
//! script's is a classic script (`--target no-modules`, setting a global), with the module's bytes
//! beside it as a classic script too (`<name>_wasm.js`, base64), so that a page's runtime is
//! registered and injected as content scripts, which Chrome hands each page from memory, and no
//! document fetches an extension file before its first call (issue 32: those fetches took 10–50 ms
//! each on a busy machine). With a JS directory also the fallback for pages whose CSP forbids wasm: the MVP
//! build → `wasm-bindgen --target bundler` → `wasm-opt -Oz` → `wasm2js -Oz` → the fix-ups of
//! [`crate::wasm2js`] → esbuild's minifier. Post-processing is skipped when its outputs are newer than its inputs.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use base64::Engine as _;

use crate::toolchain::{Build, Plan, WASM_TARGET};
use crate::tools::Tools;
use crate::util::{Paths, TempDir, log, newer_than, replace_dir, run};

/// How a crate's glue is loaded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Glue {
    /// An ES module (the service worker's).
    Module,
    /// Classic scripts, run as content scripts: the glue sets `globalThis[global]`, and
    /// `<name>_wasm.js` sets `globalThis[global + "Wasm"]` to the module's bytes in base64.
    ContentScript { global: &'static str },
}

/// Builds crate `extension/<name>` (lib name `name`) into `out_dir` with its `glue`, and its JS
/// fallback into `js_dir` when given.
pub fn build_crate(
    paths: &Paths,
    tools: &Tools,
    plan: &Plan,
    name: &str,
    glue_kind: Glue,
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
    let bytes_script = out_dir.join(format!("{name}_wasm.js"));
    let complete = match glue_kind {
        Glue::Module => glue.is_file(),
        Glue::ContentScript { .. } => glue.is_file() && bytes_script.is_file(),
    };
    if newer_than(&shipped, &inputs) && complete {
        log(&format!("{} up to date", out_dir.display()));
    } else {
        let tmp = TempDir::beside(out_dir)?;
        let target = match glue_kind {
            Glue::Module => "web",
            Glue::ContentScript { .. } => "no-modules",
        };
        bindgen(tools, target, &wasm, &tmp.0, name)?;
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
        if let Glue::ContentScript { global } = glue_kind {
            as_content_scripts(&tmp.0, name, global)?;
        }
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

/// Makes `dir`'s `--target no-modules` glue of `name` a content script that may run twice in a
/// page (the registered script and an injection: it keeps the first), setting `globalThis[global]`,
/// and writes the module's bytes beside it as `<name>_wasm.js`, setting `globalThis[global +
/// "Wasm"]` once (a second run does not even evaluate the literal).
fn as_content_scripts(dir: &Path, name: &str, global: &str) -> anyhow::Result<()> {
    let glue = dir.join(format!("{name}.js"));
    let text =
        std::fs::read_to_string(&glue).with_context(|| format!("reading {}", glue.display()))?;
    if !text.starts_with("let wasm_bindgen = ") {
        bail!("{} is not wasm-bindgen's no-modules glue", glue.display());
    }
    let wrapped = format!(
        "// Generated by `cargo xtask build`: {name}'s wasm-bindgen glue as a classic content script.\n\
         (() => {{\nif (globalThis.{global}) return;\n{text}\nglobalThis.{global} = wasm_bindgen;\n}})();\n"
    );
    std::fs::write(&glue, wrapped)?;
    let wasm = std::fs::read(dir.join(format!("{name}_bg.wasm")))?;
    let bytes = format!(
        "// Generated by `cargo xtask build`: {name}_bg.wasm in base64, a classic content script.\n\
         globalThis.{global}Wasm ??= \"{}\";\n",
        base64::engine::general_purpose::STANDARD.encode(wasm)
    );
    std::fs::write(dir.join(format!("{name}_wasm.js")), bytes)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_content_scripts_glue_sets_its_global_once_and_its_bytes_decode_to_the_module() {
        let dir = TempDir::beside(&std::env::temp_dir().join("xtask-content-scripts")).unwrap();
        let glue = "let wasm_bindgen = (function(exports) {\n    exports.start = () => 1;\n    return exports;\n})({});\n";
        std::fs::write(dir.0.join("lib.js"), glue).unwrap();
        let module = [0u8, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0xff];
        std::fs::write(dir.0.join("lib_bg.wasm"), module).unwrap();
        as_content_scripts(&dir.0, "lib", "__lib").unwrap();

        let wrapped = std::fs::read_to_string(dir.0.join("lib.js")).unwrap();
        assert!(
            wrapped.contains("if (globalThis.__lib) return;\nlet wasm_bindgen"),
            "{wrapped}"
        );
        assert!(
            wrapped.ends_with("globalThis.__lib = wasm_bindgen;\n})();\n"),
            "{wrapped}"
        );
        let bytes = std::fs::read_to_string(dir.0.join("lib_wasm.js")).unwrap();
        let literal = bytes
            .split_once("globalThis.__libWasm ??= \"")
            .and_then(|(_, rest)| rest.strip_suffix("\";\n"))
            .unwrap_or_else(|| panic!("no assignment of the bytes: {bytes}"));
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(literal)
            .unwrap();
        assert_eq!(decoded, module);

        // Run twice, as a registered script and an injection both would: the first glue stays.
        if let Ok(node) = crate::tools::which("node") {
            let script = format!(
                "{wrapped}const first = globalThis.__lib;\n{wrapped}{bytes}{bytes}\
                 if (globalThis.__lib !== first || first.start() !== 1) throw new Error('glue');\n\
                 if (atob(globalThis.__libWasm).length !== {}) throw new Error('bytes');\n",
                module.len()
            );
            let path = dir.0.join("twice.js");
            std::fs::write(&path, script).unwrap();
            let ran = Command::new(node).arg(&path).output().unwrap();
            assert!(
                ran.status.success(),
                "{}",
                String::from_utf8_lossy(&ran.stderr)
            );
        }

        std::fs::write(dir.0.join("lib.js"), "export function start() {}\n").unwrap();
        assert!(
            as_content_scripts(&dir.0, "lib", "__lib").is_err(),
            "an ES module's glue"
        );
    }
}
