//! Embeds every `adapters/*.json` of the repository into the binary as the built-in adapters
//! (`BUILTIN_ADAPTERS` in `$OUT_DIR/builtin_adapters.rs`), so adding a file needs no code change.
//! They are validated at startup like user files, and by a unit test.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let adapters_dir = manifest_dir.join("..").join("adapters");
    println!("cargo:rerun-if-changed={}", adapters_dir.display());

    let mut files: Vec<PathBuf> = std::fs::read_dir(&adapters_dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", adapters_dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();

    let mut out = String::from("/// Built-in adapters: (file name, file text).\n");
    out.push_str("pub static BUILTIN_ADAPTERS: &[(&str, &str)] = &[\n");
    for path in &files {
        let canonical = path.canonicalize().expect("adapter file exists");
        let name = path.file_name().expect("a file").to_string_lossy();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            canonical.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let out_path = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"))
        .join("builtin_adapters.rs");
    std::fs::write(&out_path, out)
        .unwrap_or_else(|e| panic!("writing {}: {e}", out_path.display()));
}
