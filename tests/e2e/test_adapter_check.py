"""Authoring workflow, part 1: the adapter format's JSON Schema (adapters/schema/adapter.schema.json) and
`tabwire adapters check`, the real binary.

The schema must accept every shipped adapter and reject broken ones; the checker must reject the same
broken files, printing every problem as FILE:LINE:COLUMN: message and exiting non-zero.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO

SCHEMA_PATH = REPO / "adapters" / "schema" / "adapter.schema.json"
SHIPPED = sorted((REPO / "adapters").glob("*.json"))

GOOD = {
    "$schema": "./schema/adapter.schema.json",
    "name": "notes",
    "match": ["http://127.0.0.1/*"],
    "match_selector": "#notes",
    "state": {"steps": [{"step": "read", "selector": "h1", "into": "heading"}, {"step": "return", "value": "{{heading}}"}]},
    "tools": [
        {
            "name": "add_note",
            "description": "Add a note.",
            "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "annotations": {"destructive": False},
            "steps": [
                {"step": "fill", "selector": "#new", "value": "{{text}}"},
                {"step": "press", "selector": "#new", "key": "Enter"},
                {"step": "within", "selector": "#notes li", "text_equals": "{{text}}", "timeout_ms": 2000,
                 "steps": [{"step": "read", "into": "note"}]},
                {"step": "return", "value": {"added": "{{note}}"}},
            ],
        }
    ],
}


def broken(change) -> dict:
    doc = json.loads(json.dumps(GOOD))
    change(doc)
    return doc


# Each is wrong in a way both the schema and the checker see.
BROKEN = {
    "unknown_step": broken(lambda d: d["tools"][0]["steps"][1].update(step="smash")),
    "unknown_top_level_field": broken(lambda d: d.update(colour="red")),
    "bad_adapter_name": broken(lambda d: d.update(name="Notes App")),
    "no_tools": broken(lambda d: d.update(tools=[])),
    "missing_description": broken(lambda d: d["tools"][0].pop("description")),
    "step_missing_selector": broken(lambda d: d["tools"][0]["steps"][0].pop("selector")),
    "for_each_over_selector_and_items": broken(
        lambda d: d["tools"][0]["steps"].insert(
            0, {"step": "for_each", "selector": "li", "items": "{{text}}", "as": "t", "steps": [{"step": "click"}]}
        )
    ),
    "bad_read_kind": broken(lambda d: d["state"]["steps"][0].update(read="html")),
    "unknown_annotation": broken(lambda d: d["tools"][0]["annotations"].update(dangerous=True)),
    "empty_match_selector": broken(lambda d: d.update(match_selector="")),
    "fetch_another_host": broken(
        lambda d: d["tools"][0]["steps"].insert(0, {"step": "fetch", "url": "//evil.example/x", "into": "x"})
    ),
    "fetch_field_not_a_pointer": broken(
        lambda d: d["tools"][0]["steps"].insert(
            0, {"step": "fetch", "url": "/api/notes", "into": "x", "fields": {"id": "id"}}
        )
    ),
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def run_check(tabwire_binary: Path, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tabwire_binary), "adapters", "check", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_schema_accepts_every_shipped_adapter(validator):
    assert SHIPPED, "no shipped adapters found"
    for path in SHIPPED:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        assert errors == [], f"{path.name}: {errors}"
    assert list(validator.iter_errors(GOOD)) == []


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_schema_and_checker_reject_a_broken_adapter(case, validator, tabwire_binary, tmp_path):
    doc = BROKEN[case]
    assert list(validator.iter_errors(doc)), f"the schema accepted {case}"
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(doc, indent=2))
    out = run_check(tabwire_binary, path)
    assert out.returncode != 0, f"check accepted {case}: {out.stdout}{out.stderr}"
    lines = out.stdout.splitlines()
    assert lines and all(re.match(rf"^{re.escape(str(path))}:\d+:\d+: ", line) for line in lines), out.stdout


def test_checker_accepts_good_files_and_the_shipped_adapters(tabwire_binary, tmp_path):
    (tmp_path / "notes.json").write_text(json.dumps(GOOD, indent=2))
    for target in (tmp_path, REPO / "adapters"):
        out = run_check(tabwire_binary, target)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout == ""
        assert re.search(r"checked [1-9]\d* adapter file\(s\): 0 problem\(s\)", out.stderr), out.stderr


def test_checker_prints_every_problem_with_file_line_and_column(tabwire_binary, tmp_path):
    bad = tmp_path / "bad.json"
    text = json.dumps(GOOD, indent=2)
    text = text.replace('"name": "notes"', '"name": "Notes"').replace('"value": "{{text}}"', '"value": "{{txet}}"')
    bad.write_text(text)
    syntax = tmp_path / "syntax.json"
    syntax.write_text('{\n  "name": "x",\n  "match": [\n    "http://a/*",,\n  ]\n}\n')
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))

    out = run_check(tabwire_binary, tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    lines = out.stdout.splitlines()

    def position(needle: str) -> tuple[int, int]:
        """1-based line and column of the first occurrence of `needle` in `text`."""
        offset = text.index(needle)
        line = text.count("\n", 0, offset) + 1
        return line, offset - (text.rfind("\n", 0, offset) + 1) + 1

    name_line, name_col = position('"Notes"')
    value_line, value_col = position('"{{txet}}"')
    expected_prefixes = [
        f"{bad}:{name_line}:{name_col}: name: adapter name \"Notes\"",
        f"{bad}:{value_line}:{value_col}: tools[0].steps[0].value: {{{{txet}}}} is neither",
        f"{syntax}:4:18: ",
    ]
    for prefix in expected_prefixes:
        assert any(line.startswith(prefix) for line in lines), f"no line starts with {prefix!r}:\n{out.stdout}"
    assert not any(str(good) in line for line in lines), out.stdout
    assert "checked 3 adapter file(s): 3 problem(s)" in out.stderr, out.stderr


def test_checker_reports_a_missing_path(tabwire_binary, tmp_path):
    missing = tmp_path / "nope.json"
    out = run_check(tabwire_binary, missing)
    assert out.returncode == 1
    assert out.stdout.startswith(f"{missing}: "), out.stdout


def test_checker_warns_about_a_tool_that_answers_before_its_effect_shows(tabwire_binary, tmp_path):
    """A valid file whose changing tool ends with an action: exit 0, and a warning naming the step."""
    doc = broken(lambda d: d["tools"][0].update(steps=d["tools"][0]["steps"][:2]))
    path = tmp_path / "unconfirmed.json"
    path.write_text(json.dumps(doc, indent=2))
    out = run_check(tabwire_binary, path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.fullmatch(
        rf"warning: {re.escape(str(path))}:\d+:\d+: tools\[0\]\.steps\[1\]: `add_note` may change the page, "
        r"but nothing after its last action \(press\) waits for the change .*\n",
        out.stdout,
    ), out.stdout
    assert "0 problem(s), 1 warning(s)" in out.stderr, out.stderr
    # The same tool marked idempotent (repeating it is harmless) is not warned about.
    doc["tools"][0]["annotations"]["idempotent"] = True
    path.write_text(json.dumps(doc, indent=2))
    assert run_check(tabwire_binary, path).stdout == ""
