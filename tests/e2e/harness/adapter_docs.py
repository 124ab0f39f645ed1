"""Declarative adapter documents for the tests that serve their own adapter: the JSON shape ADAPTERS.md
describes (an adapter, its tools, their input schemas, a state extractor), written here once so each test
states only what its tools do: their names, descriptions, arguments and steps.
"""

from __future__ import annotations

from typing import Any


def arguments(*strings: str, required: bool = True, **typed: str) -> dict[str, Any]:
    """An input schema whose arguments are `strings` (each a string) and `typed` (name = JSON type), all of
    them required unless `required` is False."""
    properties = {name: {"type": "string"} for name in strings} | {name: {"type": t} for name, t in typed.items()}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(properties)
    return schema


def tool(
    name: str, description: str, steps: list[dict], *, input_schema: dict | None = None, read_only: bool = False
) -> dict[str, Any]:
    """One tool of an adapter: no arguments unless `input_schema` (see `arguments`)."""
    out: dict[str, Any] = {"name": name, "description": description}
    if input_schema is not None:
        out["input_schema"] = input_schema
    if read_only:
        out["annotations"] = {"read_only": True}
    out["steps"] = steps
    return out


def text_of(name: str, description: str, selector: str) -> dict[str, Any]:
    """A read-only tool that answers the text of the element `selector` matches."""
    steps = [{"step": "read", "selector": selector, "into": "text"}, {"step": "return", "value": "{{text}}"}]
    return tool(name, description, steps, read_only=True)


def adapter(name: str, match: list[str], tools: list[dict], **more: Any) -> dict[str, Any]:
    """An adapter document: `more` holds its other fields (`state`, `match_selector`)."""
    return {"name": name, "match": match, "tools": tools, **more}


def listed_state(selector: str, into: str) -> dict[str, Any]:
    """A state extractor that answers `{into: [{"text": …}, …]}`, one record per element `selector` matches."""
    return {
        "steps": [
            {"step": "extract", "selector": selector, "fields": {"text": {}}, "into": into},
            {"step": "return", "value": {into: "{{" + into + "}}"}},
        ]
    }
