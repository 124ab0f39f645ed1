"""What `site_save` refuses, and how adapters stay healthy (issue 11). On the redesign fixture page: a save whose
name collides with a meta-tool or another adapter, whose match pattern is broader than the site, that is over the
size cap or navigates to `javascript:` is refused with a clear message, and nothing is written; saving over a saved
adapter keeps a backup; a file the user wrote is kept unless the user says yes when asked (the model's `overwrite`
alone is not enough, and the person's file outlives every later backup). `tabwire adapters test`
reports the brittle-CSS adapter failing on the redesigned page with its step and locator, the locator one passing;
a failing adapter call tells the model which locator no longer matches and that page tools still work.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import mcp_types as types
import pytest

from test_learn import user_adapters
from test_locators import brittle, documented_adapter

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


def notes_for(origin: str, name: str = "mynotes") -> dict:
    adapter = documented_adapter()
    adapter["name"] = name
    adapter["match"] = [f"{origin}/plain/redesign/*"]
    return adapter


def files_in(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


async def test_refusals_write_nothing_and_saves_keep_backups(
    tabwire_command, tabwire, fixture_server, launch_chromium, extension_dir, tmp_path
):
    v1 = fixture_server.url("plain", "redesign/v1.html")
    origin = v1.split("/plain/")[0]
    await launch_chromium(extension_dir=extension_dir)
    tab = (await tabwire.browser_open(v1)).structured["tab_id"]
    directory = user_adapters(tabwire_command)

    async def save(adapter: dict | str, **more):
        return await tabwire.call("site_save", {"adapter": adapter, "tab_id": tab, **more})

    first = await save(notes_for(origin))
    assert not first.is_error, first
    assert first.structured["results"] == [{"tool": "mynotes_list", "ok": True, "result": {"notes": []}}], first
    # Another adapter, in a file of another name, for the collision.
    (directory / "team.json").write_text(json.dumps(notes_for(origin, "other"), indent=2))
    await tabwire.wait_for_tools("other_list")
    before = files_in(directory)

    huge = notes_for(origin, "big")
    huge["description"] = "x" * 70_000
    script = notes_for(origin, "sneaky")
    script["tools"][1]["steps"].insert(0, {"step": "navigate", "url": "javascript:alert(document.cookie)"})
    everywhere = notes_for(origin, "greedy")
    everywhere["match"] = ["<all_urls>"]
    elsewhere = notes_for(origin, "greedy")
    elsewhere["match"] = ["http://127.0.0.1/*"]
    meta = notes_for(origin, "page")
    clash = notes_for(origin, "other")
    clash["description"] = "Another adapter's name"
    for adapter, code, kind, said in [
        (meta, "INVALID_ARGS", "invalid", 'adapter: name: the adapter name "page" is reserved'),
        (clash, "INVALID_ARGS", "name_taken", f'the name "other" is taken by the adapter in {directory}/team.json'),
        (everywhere, "INVALID_ARGS", "too_broad", f'match pattern "<all_urls>" covers more than the current site {origin}'),
        (elsewhere, "INVALID_ARGS", "too_broad", '"http://127.0.0.1/*" covers more than the current site'),
        (huge, "TOO_LARGE", "too_large", "at most 65536 bytes are accepted"),
        (script, "INVALID_ARGS", "invalid", '"javascript:alert(document.cookie)" is not a page a tool may navigate to'),
    ]:
        out = await save(adapter)
        assert out.is_error and out.structured["refusal"] == kind, (adapter["name"], out)
        assert out.text.startswith(f"{code}: not saved: ") and said in out.text, out
        assert files_in(directory) == before, f"{kind} wrote something"
    # Sent as text, problems have their line and column too.
    out = await save('{\n  "name": "mynotes",\n  oops\n}')
    assert out.is_error and "adapter:3:3: " in out.text, out
    out = await save(json.dumps(meta, indent=2))
    assert out.is_error and 'adapter:2:11: name: the adapter name "page" is reserved' in out.text, out

    # Saving over a saved adapter keeps the previous file in backups/.
    changed = notes_for(origin)
    changed["description"] = "Notes, second version"
    again = await save(changed)
    assert not again.is_error, again
    backup = Path(again.structured["backup"])
    assert backup.parent == directory / "backups", backup
    assert json.loads(backup.read_text())["description"] == notes_for(origin)["description"]
    assert json.loads((directory / "mynotes.json").read_text())["description"] == "Notes, second version"

    # A file the user wrote is theirs: kept unless the save says overwrite.
    by_hand = notes_for(origin, "mine")
    (directory / "mine.json").write_text(json.dumps(by_hand, indent=2))
    await tabwire.wait_for_tools("mine_list")
    mine = copy.deepcopy(by_hand)
    mine["description"] = "from the model"
    before = files_in(directory)
    out = await save(mine)
    assert out.is_error and out.structured["refusal"] == "hand_written", out
    assert "was written by hand" in out.text and "overwrite" in out.text, out
    assert files_in(directory) == before
    # `overwrite` from the model is not the user's yes: this client cannot ask its user, so nothing changes.
    out = await save(mine, overwrite=True)
    assert out.is_error and out.text.startswith("PERMISSION_REQUIRED: not saved: "), out
    assert "written by hand" in out.text and "cannot ask its user" in out.text, out
    assert files_in(directory) == before


async def test_replacing_a_hand_written_adapter_needs_the_users_yes_and_keeps_their_file(
    tabwire_command, fixture_server, launch_chromium, extension_dir
):
    c = tabwire_command
    answers: list[tuple[str, dict | None]] = []
    questions: list[str] = []

    async def ask_the_user(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        questions.append(params.message)
        action, content = answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    v1 = fixture_server.url("plain", "redesign/v1.html")
    origin = v1.split("/plain/")[0]
    directory = user_adapters(c)
    async with c.session(elicitation_callback=ask_the_user) as tabwire:
        await launch_chromium(extension_dir=extension_dir)
        tab = (await tabwire.browser_open(v1)).structured["tab_id"]
        by_hand = notes_for(origin, "mine")
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "mine.json").write_text(json.dumps(by_hand, indent=2))
        await tabwire.wait_for_tools("mine_list")
        mine = copy.deepcopy(by_hand)

        async def save(description: str):
            mine["description"] = description
            return await tabwire.call("site_save", {"adapter": mine, "tab_id": tab, "overwrite": True})

        # The user says no (declines, or accepts the form without saying yes): nothing changes.
        before = files_in(directory)
        for answer in (("decline", None), ("accept", {"replace": False}), ("accept", {})):
            answers.append(answer)
            out = await save("from the model")
            assert out.is_error and out.text.startswith("PERMISSION_REQUIRED: not saved: "), out
            assert "said no" in out.text, out
            assert files_in(directory) == before, answer
        assert len(questions) == 3 and all("mine.json" in q and "wrote" in q for q in questions), questions

        # The user says yes: replaced, and their file kept where no later save prunes it.
        answers.append(("accept", {"replace": True}))
        out = await save("from the model")
        assert not out.is_error, out
        original = Path(out.structured["backup"])
        assert original.parent == directory / "backups" / "hand-written", original
        assert json.loads(original.read_text()) == by_hand
        # Ten more saves (Tabwire's own file now: no question) prune old backups, never the person's file.
        for n in range(12):
            out = await save(f"version {n}")
            assert not out.is_error, out
        assert len(questions) == 4, questions
        assert json.loads(original.read_text()) == by_hand
        assert len(list((directory / "backups").glob("mine-*.json"))) <= 10


def adapters_test(tabwire_command, pairing, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(tabwire_command.binary), "adapters", "test", *args, "--port", str(pairing.port),
         "--secret-file", str(pairing.secret_file)],
        env={**tabwire_command.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def with_ready_check(adapter: dict, locator: str) -> dict:
    """A read-only tool that waits for the note field: what a health check runs."""
    adapter = copy.deepcopy(adapter)
    adapter["tools"].append({
        "name": "ready",
        "description": "Whether the note form is there.",
        "annotations": {"read_only": True},
        "steps": [{"step": "wait", "selector": locator, "timeout_ms": 1500}, {"step": "return", "value": True}],
    })
    return adapter


@pytest.fixture
def health_adapters(tabwire_command, fixture_server, tmp_path) -> tuple[Path, Path]:
    """Both versions of the notes adapter (locators, and v1's CSS) in one folder served by the running tabwire; the
    locator one alone in another folder."""
    origin = fixture_server.url("plain", "redesign/v1.html").split("/plain/")[0]
    both, alone = tmp_path / "both", tmp_path / "alone"
    both.mkdir()
    alone.mkdir()
    notes = with_ready_check(notes_for(origin, "notes"), "label=Note")
    css = with_ready_check(brittle(notes_for(origin, "notes")), "#note-input")
    for directory, adapter in ((both, notes), (both, css)):
        (directory / f"{adapter['name']}.json").write_text(json.dumps(adapter, indent=2))
    # With its test page, for `adapters test --all`.
    notes["test_url"] = fixture_server.url("plain", "redesign/v2.html")
    (alone / "notes.json").write_text(json.dumps(notes, indent=2))
    tabwire_command.args += ["--adapters", str(both)]
    return both, alone


async def test_adapters_test_names_the_step_and_locator_that_broke(
    health_adapters, tabwire_command, tabwire, pairing, fixture_server, launch_chromium, extension_dir
):
    both, alone = health_adapters
    v1 = fixture_server.url("plain", "redesign/v1.html")
    v2 = fixture_server.url("plain", "redesign/v2.html")
    await launch_chromium(extension_dir=extension_dir, url=v1)
    await tabwire.wait_for_tools("notes_ready", "notes_css_ready")

    passed = adapters_test(tabwire_command, pairing, v1, "--adapters", str(both))
    assert passed.returncode == 0, passed
    assert "notes_css  notes_css_list   pass" in passed.stdout, passed.stdout

    failed = adapters_test(tabwire_command, pairing, v2, "--adapters", str(both))
    assert failed.returncode == 1, failed
    rows = {line.split()[1]: line for line in failed.stdout.splitlines()[1:] if line.strip() and line.split()[0] in ("notes", "notes_css")}
    assert rows["notes_list"].split()[2] == "pass" and rows["notes_ready"].split()[2] == "pass", failed.stdout
    assert rows["notes_css_ready"].endswith("FAIL    steps[0] (wait)  #note-input"), failed.stdout
    assert "TIMEOUT: steps[0] (wait): `#note-input` was still not visible" in failed.stdout, failed.stdout

    healthy = adapters_test(tabwire_command, pairing, "--all", "--adapters", str(alone))
    assert healthy.returncode == 0, healthy
    assert "2 tool(s) passed, 0 failed" in healthy.stdout, healthy.stdout
    # The test page of each adapter is opened for it (and closed after).
    assert "notes    notes_list   pass" in healthy.stdout, healthy.stdout

    # The model is told which locator stopped matching, and that page tools still work.
    tab = (await tabwire.call_ok("browser_open", {"url": v2})).structured["tab_id"]
    await tabwire.wait_for_tools("notes_css_add")
    out = await tabwire.call("notes_css_add", {"text": "tea", "tab_id": tab})
    assert out.is_error and out.text.startswith("ELEMENT_NOT_FOUND: steps[0] (fill): no element matches `#note-input`")
    assert "`#note-input`. The locator `#note-input` of steps[0] (fill) no longer matches this page" in out.text, out
    assert "page tools still work here" in out.text, out
