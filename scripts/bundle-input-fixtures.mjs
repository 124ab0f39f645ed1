// node scripts/bundle-input-fixtures.mjs NODE_MODULES OUT_DIR — bundles the input fixtures' pages
// (tests/fixtures/input/src/*.js, *.jsx) with the real libraries they use (CodeMirror, ProseMirror,
// Lexical, Quill, Monaco, Draft.js, SortableJS, React, react-select, Radix), installed from npm into NODE_MODULES by
// scripts/test-env.sh, into OUT_DIR/<name>.js (and <name>.css, fonts), with esbuild, offline. A bundle
// is rebuilt only when a source, this script or the installed libraries changed (stamp file per bundle).
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve, basename, extname } from "node:path";

const [modules, outDir] = process.argv.slice(2).map((p) => resolve(p));
if (!modules || !outDir) {
  console.error("usage: node scripts/bundle-input-fixtures.mjs NODE_MODULES OUT_DIR");
  process.exit(2);
}
const esbuild = createRequire(join(modules, "noop.js"))("esbuild");
const srcDir = resolve(new URL("../tests/fixtures/input/src", import.meta.url).pathname);
mkdirSync(outDir, { recursive: true });

const sources = readdirSync(srcDir).sort();
// Modules the pages import (not pages themselves): page.js for the editors, react-app.js for the
// React widgets.
const MODULES = ["page.js", "react-app.js"];
const shared = sources.filter((f) => !/\.(js|jsx)$/.test(f) || MODULES.includes(f));
const lock = existsSync(join(modules, ".package-lock.json")) ? readFileSync(join(modules, ".package-lock.json")) : "";
for (const file of sources.filter((f) => /\.(js|jsx)$/.test(f) && !MODULES.includes(f))) {
  const name = basename(file, extname(file));
  // This script's own options (esbuild's defines) are part of every bundle too.
  const hash = createHash("sha256").update(lock).update(readFileSync(new URL(import.meta.url)));
  for (const input of [file, ...shared]) hash.update(input).update(readFileSync(join(srcDir, input)));
  const stamp = join(outDir, `${name}.stamp`);
  const digest = hash.digest("hex");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest && statSync(join(outDir, `${name}.js`), { throwIfNoEntry: false })) {
    continue;
  }
  const started = Date.now();
  await esbuild.build({
    entryPoints: [join(srcDir, file)],
    outfile: join(outDir, `${name}.js`),
    bundle: true,
    format: "iife",
    minify: true,
    jsx: "automatic",
    nodePaths: [modules],
    loader: { ".ttf": "file" },
    // Draft.js's fbjs reads Node's `global`.
    define: { "process.env.NODE_ENV": '"production"', global: "globalThis" },
    logLevel: "warning",
  });
  writeFileSync(stamp, digest);
  console.error(`bundled ${name} in ${Date.now() - started} ms`);
}
