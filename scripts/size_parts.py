#!/usr/bin/env python3
"""scripts/size_parts.py — a wasm module's bytes by the part of the code that needs them.

Reads `twiggy top -f csv` of a module built with its names kept (scripts/size-report.sh --parts
makes it) on stdin and prints the shallow sizes summed per part: our own crates by module
(`injector::steps`, `bridge::adapter::decode`), the standard library by module (`alloc::collections`),
other crates whole (`serde_json`), the data segments. A generic function instantiated for our types
counts for the crate that defines the function (serde_json's deserializer of a bridge type is
serde_json's). What is printed is a trade table: what each part costs, so a cut can be weighed.
"""

from __future__ import annotations

import collections
import csv
import re
import sys

OURS = ("injector", "worker", "bridge")
STD = ("core", "alloc", "std")


def part(name: str) -> str | None:
    """The part a twiggy item belongs to, or None for the name section (absent from shipped builds)."""
    if "function names" in name:
        return None
    if name.startswith(("data[", "data segment")):
        return "data segments (strings, tables)"
    if "externref shim" in name:
        return "wasm-bindgen shims (exports' glue, inlined)"
    if name.startswith("import "):
        return "imports (the JS functions called)"
    plain = re.sub(r"\[[0-9a-f]+\]", "", name)  # the crate disambiguators rustc adds
    path = re.match(r"^<*&?(?:mut )?(\w+)(?:::(\w+))?(?:::(\w+))?", plain)
    if not path:
        return "other"
    krate, module, inner = path.group(1), path.group(2) or "", path.group(3) or ""
    if krate in OURS:
        return f"{krate}::{module}::{inner}" if (krate, module) == ("bridge", "adapter") and inner else f"{krate}::{module}"
    if krate in STD:
        return f"{krate}::{module}"
    if krate in ("f64", "f32", "str", "u8", "u32", "u64", "usize", "i64"):
        return f"primitive {krate} (formatting, parsing)"
    return krate


def main() -> None:
    rows = ROWS_DEFAULT
    if len(sys.argv) > 1:
        rows = int(sys.argv[1])
    sizes: collections.Counter[str] = collections.Counter()
    for record in list(csv.reader(sys.stdin))[1:]:
        name, shallow = record[0], int(record[1])
        where = part(name)
        if where is not None:
            sizes[where] += shallow
    total = sum(sizes.values())
    print(f"{total:,} bytes in code and data (names left out), by part:")
    for where, size in sizes.most_common(rows):
        print(f"{size / 1024:8.1f} KB  {100 * size / total:5.1f} %  {where}")
    rest = total - sum(size for _, size in sizes.most_common(rows))
    print(f"{rest / 1024:8.1f} KB  {100 * rest / total:5.1f} %  everything else")


ROWS_DEFAULT = 20

if __name__ == "__main__":
    main()
