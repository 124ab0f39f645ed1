//! `cargo xtask`: Tabwire's build driver, the build logic that must run on Linux, macOS and Windows
//! alike (build.sh only installs Debian packages, then calls `cargo xtask build`).
//!
//! `build` owns the build order: the wasm toolchain choice ([`toolchain`]), the tools
//! ([`tools`]: wasm-bindgen-cli, binaryen), the extension's wasm and wasm2js builds ([`wasm`],
//! [`wasm2js`]), the code-adapter bundle ([`package`]), the server (which embeds the extension),
//! the pairing, and the packages (the extension `.zip`, the `.mcpb` bundle). A second run with
//! nothing changed takes about a second. Progress goes to stderr.

mod cross;
mod dist;
mod npm;
mod package;
mod release_bundle;
mod repro;
mod toolchain;
mod tools;
mod util;
mod wasm;
mod wasm2js;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::util::{Paths, log};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  build                     the extension, the server, the pairing and the packages (default)
  extension                 only the extension (wasm, wasm2js, code adapters) and its .zip
  check-targets [TRIPLE...] `cargo check` the server for x86_64-apple-darwin and x86_64-pc-windows-gnu
                            (or the targets named; test.sh names macOS: its Windows build checks Windows)
  dist [PLATFORM...]        stripped release binaries for linux-x64, linux-arm64, darwin-x64,
                            darwin-arm64 and win32-x64 (or the ones named) into target/dist/<platform>/,
                            then the npm packages and the multi-platform .mcpb (see dist.rs for the
                            route: std from source, MinGW-w64 for Windows, zig for the others)
  repro [PLATFORM]          build the extension and PLATFORM's binary (default win32-x64) a second
                            time from a copy of HEAD at another path, with another cross target
                            directory, and compare the zips and the binary byte for byte (slow:
                            the copy's std and dependencies build from nothing; not in test.sh)
  packages                  only the npm packages (target/dist/npm/*.tgz) and the multi-platform
                            .mcpb, from the binaries at hand (target/dist/*, this platform's release build)
  bundle-code-adapters SRC OUT
                            bundle the code adapters in SRC (*.js) into the script OUT

environment:
  TABWIRE_CACHE             where tools and private toolchains go (default ~/.cache/tabwire)
  CARGO_TARGET_DIR          the cargo target directory (default <repo>/target)
  TABWIRE_DIST_TARGET_DIR   dist's cross target directory (default $TABWIRE_CACHE/target-dist)
  SOURCE_DATE_EPOCH         the time stamped on the zips' entries (default 1980-01-01, zip's epoch)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[build] ERROR: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> anyhow::Result<()> {
    let paths = Paths::discover()?;
    let started = Instant::now();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["build"] => {
            let extension = build_extension(&paths)?;
            let server = build_server(&paths)?;
            pair(&paths, &server)?;
            package::mcpb(&paths, &server)?;
            log(&format!(
                "done in {:.1} s: {}, the extension in {} (and {}), {}",
                started.elapsed().as_secs_f64(),
                server.display(),
                paths.root.display(),
                extension.display(),
                package::mcpb_path(&paths).display()
            ));
        }
        ["extension"] => {
            let zip = build_extension(&paths)?;
            log(&format!(
                "extension built in {:.1} s: {} (and {})",
                started.elapsed().as_secs_f64(),
                paths.root.join("extension").display(),
                zip.display()
            ));
        }
        ["check-targets", named @ ..] => cross::check_targets(&paths, named)?,
        ["dist", names @ ..] => {
            let platforms = dist::select(names)?;
            build_extension(&paths)?;
            // The host build answers `mcpb-manifest` and fills this platform's npm package.
            build_server(&paths)?;
            dist::build(&paths, &platforms)?;
            npm::pack(&paths)?;
            release_bundle::build(&paths)?;
            log(&format!(
                "dist done in {:.0} s: target/dist/",
                started.elapsed().as_secs_f64()
            ));
        }
        ["repro", names @ ..] => repro::check(&paths, names)?,
        ["packages"] => {
            npm::pack(&paths)?;
            release_bundle::build(&paths)?;
        }
        ["bundle-code-adapters", src, out] => {
            package::bundle_code_adapters(&PathBuf::from(src), &PathBuf::from(out))?
        }
        ["help" | "--help" | "-h"] => println!("{USAGE}"),
        _ => bail!("unknown arguments {args:?}\n{USAGE}"),
    }
    Ok(())
}

/// The extension: both wasm crates, the code-adapter bundle, then its `.zip`. Returns the zip's path.
fn build_extension(paths: &Paths) -> anyhow::Result<PathBuf> {
    let tools = tools::Tools::ensure(paths)?;
    let plan = toolchain::plan(paths)?;
    log(&format!("wasm toolchain: {plan}"));
    let dist = paths.root.join("extension").join("dist");
    let module = wasm::Glue::Module;
    wasm::build_crate(
        paths,
        &tools,
        &plan,
        "worker",
        module,
        &dist.join("worker"),
        None,
    )?;
    wasm::build_crate(
        paths,
        &tools,
        &plan,
        "injector",
        wasm::Glue::ContentScript {
            global: "__tabwireInjector",
        },
        &dist.join("injector"),
        Some(&dist.join("injector-js")),
    )?;
    package::bundle_code_adapters(
        &paths.root.join("adapters").join("code"),
        &dist.join("code-adapters.js"),
    )?;
    package::firefox_zip(paths)?;
    package::extension_zip(paths)
}

/// `cargo build --release -p server` with the toolchain that runs this driver. Returns the binary.
fn build_server(paths: &Paths) -> anyhow::Result<PathBuf> {
    log("cargo build --release -p server");
    util::run(
        util::host_cargo()
            .args(["build", "--release", "-p", "server"])
            .current_dir(&paths.root),
        "cargo build --release -p server",
    )?;
    let binary = paths.server_binary();
    if !binary.is_file() {
        bail!("cargo did not produce {}", binary.display());
    }
    Ok(binary)
}

/// Pairs the repository's extension with this user's tabwire (`extension/pairing.json`).
fn pair(paths: &Paths, server: &std::path::Path) -> anyhow::Result<()> {
    let config = paths.root.join("extension").join("pairing.json");
    util::run(
        std::process::Command::new(server)
            .arg("pair")
            .arg("--extension-config")
            .arg(&config),
        "tabwire pair",
    )
    .context("pairing the repository's extension")?;
    log(&format!("{} written", config.display()));
    Ok(())
}
