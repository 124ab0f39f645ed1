//! The JS fallback's fix-ups and checks (toolchain.md step 7). Each edit must apply exactly once,
//! so a format change in binaryen or wasm-bindgen fails the build loudly:
//! 1. wasm2js's `__wasm_memory_grow` swaps in a new ArrayBuffer without detaching the old one,
//!    while wasm-bindgen's glue refreshes its cached views only when the old buffer is detached
//!    (byteLength 0): after growth, strings would come back empty. The old buffer is detached
//!    (`ArrayBuffer.prototype.transfer`, Chrome 114+; `structuredClone` with transfer elsewhere).
//! 2. The bundler glue imports `./<name>_bg.wasm`: it must import `./<name>_bg.wasm.js`.
//!
//! Then [`check_exports`]: the JS build exports exactly what the wasm build does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::util::{log, run};

const DETACH: &str = "var oldBuffer = buffer;\n\
{i}buffer = newBuffer;\n\
{i}/* tabwire: detach the old buffer so wasm-bindgen's cached memory views see the growth */\n\
{i}if (typeof oldBuffer.transfer === \"function\") oldBuffer.transfer(0);\n\
{i}else structuredClone(oldBuffer, { transfer: [oldBuffer] });";

/// Applies both fix-ups to the JS build of `name` in `dir`.
pub fn fix_up(dir: &Path, name: &str) -> anyhow::Result<()> {
    let wasm_js = dir.join(format!("{name}_bg.wasm.js"));
    let text = read(&wasm_js)?;
    std::fs::write(
        &wasm_js,
        detach_on_grow(&text).with_context(|| wasm_js.display().to_string())?,
    )?;
    let glue = dir.join(format!("{name}.js"));
    let text = read(&glue)?;
    std::fs::write(
        &glue,
        import_wasm_js(&text, name).with_context(|| glue.display().to_string())?,
    )?;
    Ok(())
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Fix-up 1 on the text of `<name>_bg.wasm.js`.
pub fn detach_on_grow(text: &str) -> anyhow::Result<String> {
    let start = text
        .find("function __wasm_memory_grow(")
        .context("no __wasm_memory_grow helper found (wasm2js output format changed?)")?;
    let end = text[start..]
        .find("\n }\n")
        .map_or(text.len(), |i| start + i);
    let body = &text[start..end];
    let mut hits = body
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter(|&line| {
            body[line..].split('\n').next().map(str::trim) == Some("buffer = newBuffer;")
        });
    let (Some(line), None) = (hits.next(), hits.next()) else {
        bail!("expected exactly one `buffer = newBuffer;` in __wasm_memory_grow");
    };
    let indent_len = body[line..].len() - body[line..].trim_start().len();
    let indent = &body[line..line + indent_len];
    let line_end = line + body[line..].find('\n').unwrap_or(body.len() - line);
    let replacement = format!("{indent}{}", DETACH.replace("{i}", indent));
    Ok(format!(
        "{}{}{}{}",
        &text[..start],
        &body[..line],
        replacement,
        &text[start + line_end..]
    ))
}

/// Fix-up 2 on the text of the bundler glue `<name>.js`.
pub fn import_wasm_js(text: &str, name: &str) -> anyhow::Result<String> {
    let spec = format!("./{name}_bg.wasm");
    let mut found = Vec::new();
    for quote in ['"', '\''] {
        let quoted = format!("{quote}{spec}{quote}");
        for (i, _) in text.match_indices(&quoted) {
            if text[..i].trim_end().ends_with("from") {
                found.push((i, quote));
            }
        }
    }
    let [(at, quote)] = found[..] else {
        bail!(
            "expected exactly one import of {spec:?}, found {}",
            found.len()
        );
    };
    let old = format!("{quote}{spec}{quote}");
    Ok(format!(
        "{}{quote}{spec}.js{quote}{}",
        &text[..at],
        &text[at + old.len()..]
    ))
}

/// Checks that every `.js` of the JS build in `js_dir` parses as an ES module (with node, when
/// it is installed) and that its entry exports exactly the names of the wasm build's glue
/// `web_glue` (an ES module's `export`s, or a no-modules glue's `exports.<name> =`; less the
/// wasm build's init functions).
pub fn check_exports(web_glue: &Path, js_dir: &Path, name: &str) -> anyhow::Result<()> {
    if let Ok(node) = crate::tools::which("node") {
        let scratch = crate::util::TempDir::beside(&js_dir.with_file_name("esm-check"))?;
        for entry in std::fs::read_dir(js_dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "js") {
                let copy = scratch
                    .0
                    .join(path.with_extension("mjs").file_name().unwrap_or_default());
                std::fs::copy(&path, &copy)?;
                run(
                    Command::new(&node).arg("--check").arg(&copy),
                    &format!("node --check {}", path.display()),
                )?;
            }
        }
    }
    let mut web = exports_of(web_glue, &mut Vec::new())?;
    for init in ["default", "initSync"] {
        web.remove(init);
    }
    let mut js = exports_of(&js_dir.join(format!("{name}.js")), &mut Vec::new())?;
    js.remove("__wbg_set_wasm");
    let missing: Vec<_> = web.difference(&js).collect();
    let extra: Vec<_> = js.difference(&web).collect();
    if !missing.is_empty() || !extra.is_empty() {
        bail!(
            "the JS build of {name} exports differ: missing {missing:?}, only in the JS build {extra:?}"
        );
    }
    log(&format!(
        "JS build exports the same {} names as the wasm build",
        js.len()
    ));
    Ok(())
}

/// The names an ES module exports (statically), following `export * from "./y.js"` into siblings.
fn exports_of(file: &Path, seen: &mut Vec<PathBuf>) -> anyhow::Result<BTreeSet<String>> {
    if seen.iter().any(|s| s == file) {
        return Ok(BTreeSet::new());
    }
    seen.push(file.to_owned());
    let text = read(file)?;
    // wasm-bindgen's no-modules glue: `exports.start = start;`, one a line.
    let mut names: BTreeSet<String> = text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("exports."))
        .filter_map(|rest| rest.split_once(" = ").map(|(name, _)| name.to_owned()))
        .collect();
    for (at, _) in text.match_indices("export") {
        if at > 0 && !text[..at].ends_with('\n') {
            continue;
        }
        let rest = text[at + "export".len()..].trim_start();
        if let Some(list) = rest.strip_prefix('{') {
            let list = &list[..list.find('}').unwrap_or(list.len())];
            names.extend(
                list.split(',')
                    .filter_map(|part| part.split_whitespace().last())
                    .map(str::to_owned),
            );
        } else if let Some(star) = rest.strip_prefix('*') {
            let from = star
                .trim_start()
                .strip_prefix("from")
                .unwrap_or("")
                .trim_start();
            let quote = from.chars().next().unwrap_or('"');
            if let Some(target) = from[quote.len_utf8()..].split(quote).next() {
                let sibling = file.with_file_name(target.trim_start_matches("./"));
                names.extend(
                    exports_of(&sibling, seen)?
                        .into_iter()
                        .filter(|n| n != "default"),
                );
            }
        } else {
            let rest = rest.strip_prefix("async ").unwrap_or(rest).trim_start();
            for keyword in ["function*", "function", "class", "const", "let", "var"] {
                if let Some(after) = rest.strip_prefix(keyword)
                    && after.starts_with(char::is_whitespace)
                {
                    let ident: String = after
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                        .collect();
                    if !ident.is_empty() {
                        names.insert(ident);
                    }
                    break;
                }
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROW: &str = "var x;\n function __wasm_memory_grow(pagesToAdd) {\n  var newBuffer = new ArrayBuffer(1);\n  buffer = newBuffer;\n  return 1;\n }\n var y;\n";

    #[test]
    fn the_old_buffer_is_detached_on_growth() {
        let fixed = detach_on_grow(GROW).unwrap();
        assert!(
            fixed.contains("  var oldBuffer = buffer;\n  buffer = newBuffer;\n"),
            "{fixed}"
        );
        assert!(fixed.contains(
            "  if (typeof oldBuffer.transfer === \"function\") oldBuffer.transfer(0);\n"
        ));
        assert!(fixed.ends_with("  return 1;\n }\n var y;\n"), "{fixed}");
        assert!(
            detach_on_grow("function f() {}\n").is_err(),
            "no grow helper"
        );
        let twice = GROW.replace("  return 1;", "  buffer = newBuffer;");
        assert!(detach_on_grow(&twice).is_err(), "two assignments");
    }

    #[test]
    fn a_no_modules_glue_exports_what_it_assigns_to_exports() {
        let dir =
            crate::util::TempDir::beside(&std::env::temp_dir().join("xtask-exports")).unwrap();
        let glue = dir.0.join("lib.js");
        std::fs::write(
            &glue,
            "let wasm_bindgen = (function(exports) {\n    function start() {}\n    exports.start = start;\n    \
             exports.use_port = use_port;\n    return Object.assign(__wbg_init, { initSync }, exports);\n})({});\n",
        )
        .unwrap();
        let names = exports_of(&glue, &mut Vec::new()).unwrap();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["start", "use_port"]);
    }

    #[test]
    fn the_glue_imports_the_js_module() {
        let glue =
            "import * as wasm from \"./injector_bg.wasm\";\nexport * from \"./injector_bg.js\";\n";
        let fixed = import_wasm_js(glue, "injector").unwrap();
        assert_eq!(
            fixed,
            "import * as wasm from \"./injector_bg.wasm.js\";\nexport * from \"./injector_bg.js\";\n"
        );
        assert!(import_wasm_js(&fixed, "injector").is_err(), "already fixed");
        let single = "import * as wasm from './x_bg.wasm';";
        assert_eq!(
            import_wasm_js(single, "x").unwrap(),
            "import * as wasm from './x_bg.wasm.js';"
        );
    }

    #[test]
    fn exports_are_read_through_reexports() {
        let dir = std::env::temp_dir().join(format!("xtask-exports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.js"),
            "export function start() {}\nexport class Runtime {}\nexport { use_port, x as y };\nexport * from \"./b.js\";\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.js"), "export async function on_event() {}\nexport default 1;\n  export const not_at_line_start = 1;\n").unwrap();
        let names = exports_of(&dir.join("a.js"), &mut Vec::new()).unwrap();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["Runtime", "on_event", "start", "use_port", "y"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
