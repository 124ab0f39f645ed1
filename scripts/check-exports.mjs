// scripts/check-exports.mjs — checks that a wasm2js build is a syntactically valid set of ES modules whose
// entry exports exactly the functions/classes of the wasm (--target web) build.
// Usage: node check-exports.mjs <web glue: dist/x/x.js> <js build dir> <name>
import { readFileSync, readdirSync, mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";

const [webGlue, jsDir, name] = process.argv.slice(2);

// Names a module exports (statically), following `export * from "./y.js"` into sibling files.
function exportsOf(file, seen = new Set()) {
  if (seen.has(file)) return new Set();
  seen.add(file);
  const src = readFileSync(file, "utf8");
  const names = new Set();
  for (const m of src.matchAll(/^export\s+(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)/gm)) names.add(m[1]);
  for (const m of src.matchAll(/^export\s*\{([^}]*)\}/gm)) {
    for (const part of m[1].split(",").map((s) => s.trim()).filter(Boolean)) {
      names.add(part.split(/\s+as\s+/).pop().trim());
    }
  }
  for (const m of src.matchAll(/^export\s*\*\s*from\s*["']([^"']+)["']/gm)) {
    for (const n of exportsOf(join(dirname(file), m[1]), seen)) if (n !== "default") names.add(n);
  }
  return names;
}

// 1. Every .js of the JS build parses as an ES module (node --check on .mjs copies).
const tmp = mkdtempSync(join(tmpdir(), "tabwire-esm-"));
try {
  for (const f of readdirSync(jsDir).filter((f) => f.endsWith(".js"))) {
    const copy = join(tmp, f.replace(/\.js$/, ".mjs"));
    copyFileSync(join(jsDir, f), copy);
    execFileSync(process.execPath, ["--check", copy], { stdio: "inherit" });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// 2. Same public exports (the web build adds its init functions).
const web = exportsOf(webGlue);
for (const n of ["default", "initSync"]) web.delete(n);
const js = exportsOf(join(jsDir, `${name}.js`));
js.delete("__wbg_set_wasm");
const missing = [...web].filter((n) => !js.has(n));
const extra = [...js].filter((n) => !web.has(n));
if (missing.length || extra.length) {
  console.error(`exports differ: missing in JS build [${missing}], only in JS build [${extra}]`);
  process.exit(1);
}
if (js.size === 0) console.error(`[build] WARNING: ${name} exports nothing (placeholder crate?)`);
console.error(`[build] JS build exports the same ${js.size} names as the wasm build: ${[...js].sort().join(", ")}`);
