#!/usr/bin/env node
// The `tabwire` command of the npm package: finds the binary of this platform, which npm installed
// as one of the package's optional dependencies (`@tabwire/<platform>-<arch>`, each limited to its
// platform by its `os` and `cpu` fields, so npm installs only the matching one: no postinstall
// script, no download), and runs it with this process's arguments and standard streams (stdio is the
// MCP protocol when a client starts `npx -y tabwire mcp`). Its exit status is tabwire's.
"use strict";

const { spawnSync } = require("child_process");
const path = require("path");
// Written by `cargo xtask packages` from the build's one table of platforms.
const { version, packages } = require("../platforms.json");

const platform = `${process.platform}-${process.arch}`;
const pkg = packages[platform];
if (!pkg) {
  console.error(
    `tabwire ${version} has no binary for ${platform}; it ships for ${Object.keys(packages).join(", ")}.\n` +
      "Build it from source instead (the repository's README, \"Build from source\")."
  );
  process.exit(1);
}

let binary;
try {
  binary = require.resolve(`${pkg.name}/bin/${pkg.exe}`);
} catch {
  console.error(
    `tabwire: the package ${pkg.name}@${version}, which holds the binary for ${platform}, is not installed.\n` +
      "npm installs it as an optional dependency: it is skipped with --omit=optional (or --no-optional),\n" +
      `or when installing from a lockfile made on another platform. Install it: npm install ${pkg.name}@${version}`
  );
  process.exit(1);
}

const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
if (run.error) {
  console.error(`tabwire: cannot run ${path.normalize(binary)}: ${run.error.message}`);
  process.exit(1);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
