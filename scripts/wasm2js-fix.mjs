// scripts/wasm2js-fix.mjs — patches the wasm2js build of a wasm-bindgen crate (toolchain.md step 7).
// Owns two edits, each asserted to apply exactly once (a format change in binaryen/wasm-bindgen must fail loudly):
//  1. memory.grow fix: wasm2js's __wasm_memory_grow swaps in a new ArrayBuffer without detaching the old one,
//     while wasm-bindgen's glue refreshes its cached views only when the old buffer is detached (byteLength 0):
//     after growth, strings would come back empty. Detach the old buffer (ArrayBuffer.prototype.transfer,
//     Chrome 114+; structuredClone with transfer where that is missing, e.g. Node 20).
//  2. the bundler glue imports "./<name>_bg.wasm": point it at the generated "./<name>_bg.wasm.js".
// Usage: node wasm2js-fix.mjs <name>_bg.wasm.js <name>.js ./<name>_bg.wasm
import { readFileSync, writeFileSync } from "node:fs";

const [wasmJs, glue, wasmSpec] = process.argv.slice(2);
if (!wasmJs || !glue || !wasmSpec) throw new Error("usage: wasm2js-fix.mjs X_bg.wasm.js X.js ./X_bg.wasm");

function replaceOnce(file, text, re, replacement, what) {
  const hits = text.match(new RegExp(re.source, re.flags.includes("g") ? re.flags : re.flags + "g"));
  if (!hits || hits.length !== 1) {
    throw new Error(`${file}: expected exactly one ${what}, found ${hits ? hits.length : 0}`);
  }
  return text.replace(re, replacement);
}

// 1. memory.grow: inside __wasm_memory_grow, `buffer = newBuffer;` is where the old buffer is dropped.
let src = readFileSync(wasmJs, "utf8");
const grow = src.indexOf("function __wasm_memory_grow(");
if (grow < 0) throw new Error(`${wasmJs}: no __wasm_memory_grow helper found (wasm2js output format changed?)`);
const end = src.indexOf("\n }\n", grow);
let body = src.slice(grow, end);
body = replaceOnce(wasmJs, body, /^(\s*)buffer = newBuffer;$/m,
  "$1var oldBuffer = buffer;\n" +
  "$1buffer = newBuffer;\n" +
  "$1/* tabwire: detach the old buffer so wasm-bindgen's cached memory views see the growth */\n" +
  "$1if (typeof oldBuffer.transfer === \"function\") oldBuffer.transfer(0);\n" +
  "$1else structuredClone(oldBuffer, { transfer: [oldBuffer] });",
  "`buffer = newBuffer;` in __wasm_memory_grow");
src = src.slice(0, grow) + body + src.slice(end);
writeFileSync(wasmJs, src);

// 2. glue import of the .wasm → the .wasm.js module.
const esc = wasmSpec.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
let g = readFileSync(glue, "utf8");
g = replaceOnce(glue, g, new RegExp(`(from\\s*)(["'])${esc}\\2`), `$1$2${wasmSpec}.js$2`, `import of "${wasmSpec}"`);
writeFileSync(glue, g);
