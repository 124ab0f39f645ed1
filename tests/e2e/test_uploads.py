"""Uploads (issue 20): files from the user's uploads directory put on a page's `<input type=file>` (by
selector, by label, behind a hidden input) and dropped on a drop zone, through page_act and through an
adapter's `upload` step, in real Chromium with the real extension. A small local app stores what it
receives: the bytes it got are the file's (binary, non-ASCII name), several at once; the drop zone's page
reads each dropped File itself. Refused names (outside the directory, an absolute path, a symlink out, a
missing file, more than the 32 MiB cap) answer a typed error naming the file and the rule, and nothing reaches
the page or the app.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from harness.files_app import FilesApp
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

CALL_TIMEOUT_MS = 15_000
BINARY_NAME = "résumé ü.bin"


def adapter(origin: str) -> dict:
    def tool(name: str, description: str, steps: list[dict]) -> dict:
        files = {"type": "array", "items": {"type": "string"}, "description": "names in the uploads folder"}
        schema = {"type": "object", "properties": {"files": files}, "required": ["files"]}
        return {"name": name, "description": description, "input_schema": schema, "steps": steps}

    send = {"step": "click", "selector": "#send", "navigates": True}
    return {
        "name": "files",
        "match": [f"{origin}/*"],
        "tools": [
            tool("send", "Attach files to the form and send it.", [
                {"step": "upload", "selector": "label=Attachments", "files": "{{files}}"}, send,
            ]),
            tool("send_from_the_form", "Go to the form, attach files and send it.", [
                {"step": "navigate", "url": "/upload"},
                {"step": "wait", "selector": "#many"},
                {"step": "upload", "selector": "#many", "files": "{{files}}"},
                send,
            ]),
            tool("drop", "Drop files on the drop zone; answers what the page read.", [
                {"step": "upload", "selector": "#zone", "files": "{{files}}"},
                {"step": "wait", "selector": "#zone[data-dropped]"},
                {"step": "extract", "selector": "#dropped li", "fields": {"line": {}}, "into": "seen"},
                {"step": "return", "value": "{{seen}}"},
            ]),
        ],
    }


@pytest.fixture
def uploads(tmp_path: Path) -> Path:
    """The uploads directory: a binary file with a non-ASCII name (every byte value), a text file, a
    picture; beside it (outside), a secret and a link into it that leads out."""
    root = tmp_path / "uploads"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / BINARY_NAME).write_bytes(bytes(range(256)) * 300 + os.urandom(4096))
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2048))
    with open(root / "big.bin", "wb") as over_the_cap:  # sparse: 33 MiB, over the 32 MiB cap
        over_the_cap.truncate(33 * 1024 * 1024)
    (root / "twelve.bin").write_bytes(os.urandom(12 * 1024 * 1024))
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret")
    (root / "escape.txt").symlink_to(secret)
    return root


@pytest.fixture
def tabwire_command(tabwire_command, files_app, uploads: Path, tmp_path: Path):
    return tabwire_command.serving_adapter_file(
        adapter(files_app.origin), tmp_path / "adapters", call_timeout_ms=CALL_TIMEOUT_MS, uploads_dir=uploads
    ).allowing_all_origins()


def received(app: FilesApp) -> list[dict]:
    with urllib.request.urlopen(app.url("/received.json"), timeout=5) as response:
        return json.loads(response.read())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def open_form(tabwire, launch_chromium, extension_dir, files_app):
    url = files_app.url("/upload")
    browser = await launch_chromium(extension_dir=extension_dir)
    tab = (await tabwire.browser_open(url)).structured["tab_id"]
    page = await browser.cdp.wait_for_page(url)
    return browser, page, tab


async def test_page_act_puts_files_on_inputs_and_the_form_sends_their_bytes(
    tabwire, launch_chromium, extension_dir, files_app, uploads
):
    browser, page, tab = await open_form(tabwire, launch_chromium, extension_dir, files_app)

    async def upload(selector: str, files: list[str]):
        out = await tabwire.call("page_act", {"tab_id": tab, "selector": selector, "action": "upload", "files": files})
        assert not out.is_error, out
        return await browser.cdp.evaluate(page, "document.getElementById('chosen').textContent")

    binary = f"docs/{BINARY_NAME}"
    assert await upload("#single", [binary]) == f"single: {BINARY_NAME} application/octet-stream"
    # By the ref the snapshot shows it with, several files at once, each with its extension's type.
    snapshot = await tabwire.call("page_snapshot", {"tab_id": tab})
    line = next(line for line in snapshot.text.splitlines() if '"Attachments"' in line)
    assert "button" in line and "file multiple" in line, snapshot.text
    ref = re.search(r"\b(e\d+)\b", line)[1]
    out = await tabwire.call("page_act", {"tab_id": tab, "ref": ref, "action": "upload", "files": ["notes.txt", "photo.png"]})
    assert not out.is_error, out
    assert await browser.cdp.evaluate(page, "document.getElementById('chosen').textContent") == (
        "many: notes.txt text/plain, photo.png image/png"
    )
    # A hidden input, through the label a person would click.
    assert await upload("label[for=hidden]", ["photo.png"]) == "hidden: photo.png image/png"
    sent = await tabwire.call("page_act", {"tab_id": tab, "selector": "#send", "action": "click"})
    assert not sent.is_error and "/upload?sent=4" in sent.text, sent

    got = received(files_app)
    assert [(f["field"], f["name"]) for f in got] == [
        ("single", BINARY_NAME), ("many", "notes.txt"), ("many", "photo.png"), ("hidden", "photo.png"),
    ]
    expected = [uploads / binary, uploads / "notes.txt", uploads / "photo.png", uploads / "photo.png"]
    assert [(f["size"], f["sha256"]) for f in got] == [(p.stat().st_size, sha256(p)) for p in expected]


async def test_a_drop_zone_gets_the_files_and_reads_them_in_the_page(
    tabwire, launch_chromium, extension_dir, files_app, uploads
):
    browser, page, tab = await open_form(tabwire, launch_chromium, extension_dir, files_app)
    dropped = await tabwire.call(
        "page_act", {"tab_id": tab, "selector": "#zone", "action": "upload", "files": [f"docs/{BINARY_NAME}", "notes.txt"]}
    )
    assert not dropped.is_error, dropped
    got = await wait_for(lambda: len(received(files_app)) == 2 and received(files_app), timeout=10,
                         what="the drop zone's page posting what it read")
    for entry, path in zip(got, [uploads / "docs" / BINARY_NAME, uploads / "notes.txt"]):
        # What the page read from each dropped File, and what reached the app, are the file's bytes.
        assert (entry["field"], entry["name"]) == ("dropped", path.name)
        assert entry["page_sha256"] == entry["sha256"] == sha256(path), entry
        assert entry["size"] == path.stat().st_size

    # An element that is no drop zone (it cancels no dragover) says so, and nothing happened.
    heading = await tabwire.call("page_act", {"tab_id": tab, "selector": "h1", "action": "upload", "files": ["notes.txt"]})
    assert heading.is_error and heading.text.startswith("NO_EFFECT:"), heading
    assert "did not take the dropped files" in heading.text, heading


async def test_refused_files_answer_a_typed_error_and_nothing_reaches_the_page(
    tabwire, launch_chromium, extension_dir, files_app, uploads, tmp_path
):
    browser, page, tab = await open_form(tabwire, launch_chromium, extension_dir, files_app)
    cases = [
        ("../secret.txt", "FILE_REFUSED", "outside the uploads directory"),
        (str(tmp_path / "secret.txt"), "FILE_REFUSED", "outside the uploads directory"),
        ("escape.txt", "FILE_REFUSED", "symlink"),  # the same words as the two above
        ("missing.pdf", "FILE_REFUSED", "no file \"missing.pdf\" in the uploads directory"),
        ("big.bin", "TOO_LARGE", "over the 32 MiB one call may carry"),
    ]
    for name, code, why in cases:
        out = await tabwire.call(
            "page_act", {"tab_id": tab, "selector": "#single", "action": "upload", "files": [name]}
        )
        assert out.is_error and out.text.startswith(f"{code}:"), (name, out)
        assert why in out.text, (name, out)
        if code == "FILE_REFUSED":
            assert json.dumps(name)[1:-1] in out.text, (name, out)
    # A refusal says nothing about what lies outside: a name leading out gets the same words (but for the name)
    # whether its target exists, is missing, is a folder or sits behind a link, dangling or not.
    (tmp_path / "a-folder").mkdir(exist_ok=True)
    (uploads / "dangling.txt").symlink_to(tmp_path / "nothing-here.txt")
    (uploads / "to-folder").symlink_to(tmp_path / "a-folder")
    probes = ["../secret.txt", "../nothing-here.txt", "../a-folder", str(tmp_path / "secret.txt"),
              str(tmp_path / "nothing-here.txt"), "/etc/shadow", "/no/such/file", "escape.txt", "dangling.txt",
              "to-folder", "to-folder/x.txt"]
    said = set()
    for name in probes:
        out = await tabwire.call("page_act", {"tab_id": tab, "selector": "#single", "action": "upload", "files": [name]})
        assert out.is_error and out.text.startswith("FILE_REFUSED:"), (name, out)
        said.add(out.text.replace(json.dumps(name)[1:-1], "NAME"))
    assert len(said) == 1, said
    assert str(tmp_path / "a-folder") not in next(iter(said)) and "secret" not in next(iter(said)), said
    # Through an adapter too, one bad name among good ones refuses them all.
    mixed = await tabwire.call("files_send", {"files": ["notes.txt", "../secret.txt"]})
    assert mixed.is_error and mixed.text.startswith("FILE_REFUSED:"), mixed
    # More files than the input takes: refused in the page, nothing set.
    two = await tabwire.call(
        "page_act", {"tab_id": tab, "selector": "#single", "action": "upload", "files": ["notes.txt", "photo.png"]}
    )
    assert two.is_error and two.text.startswith("NOT_ACTIONABLE:") and "takes one file" in two.text, two

    assert await browser.cdp.evaluate(page, "document.getElementById('chosen').textContent") == ""
    files_on_inputs = "[...document.querySelectorAll('input[type=file]')].map((i) => i.files.length)"
    assert await browser.cdp.evaluate(page, files_on_inputs) == [0, 0, 0]
    assert received(files_app) == []
    # The tab serves the next call at once.
    read = await tabwire.call("page_read", {"tab_id": tab})
    assert not read.is_error and "Send files" in read.text, read


async def test_an_adapters_upload_steps_send_and_drop_files(
    tabwire, launch_chromium, extension_dir, files_app, uploads
):
    await open_form(tabwire, launch_chromium, extension_dir, files_app)
    sent = await tabwire.call("files_send", {"files": [f"docs/{BINARY_NAME}", "photo.png"]})
    assert not sent.is_error, sent
    got = received(files_app)
    assert [(f["field"], f["name"], f["sha256"]) for f in got] == [
        ("many", BINARY_NAME, sha256(uploads / "docs" / BINARY_NAME)),
        ("many", "photo.png", sha256(uploads / "photo.png")),
    ]

    # The call above landed on /upload?sent=2: the same adapter drops there.
    dropped = await tabwire.call("files_drop", {"files": ["notes.txt"]})
    assert not dropped.is_error, dropped
    digest = sha256(uploads / "notes.txt")
    assert dropped.structured["result"] == [{"line": f"notes.txt {(uploads / 'notes.txt').stat().st_size} {digest}"}]
    assert received(files_app)[-1]["page_sha256"] == digest

    # After a navigation, the rest of the call still has its files.
    again = await tabwire.call("files_send_from_the_form", {"files": ["photo.png"]})
    assert not again.is_error, again
    assert received(files_app)[-1] == {
        "field": "many", "name": "photo.png", "size": (uploads / "photo.png").stat().st_size,
        "sha256": sha256(uploads / "photo.png"), "page_sha256": None,
    }


async def test_a_12_mib_file_arrives_whole(tabwire, launch_chromium, extension_dir, files_app, uploads):
    # Far over one frame's 8 MiB bound: its bytes travel in upload_chunk frames and reach the page whole.
    await open_form(tabwire, launch_chromium, extension_dir, files_app)
    sent = await tabwire.call("files_send", {"files": ["twelve.bin"]})
    assert not sent.is_error, sent
    path = uploads / "twelve.bin"
    assert [(f["name"], f["size"], f["sha256"]) for f in received(files_app)] == [
        (path.name, path.stat().st_size, sha256(path))
    ]
