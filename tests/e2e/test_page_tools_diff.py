"""An act's answer is as true as a snapshot of the whole page before and after it, on TodoMVC (vanillajs and
React) with no adapter: the lines its diff takes away and adds (an element gone with everything under it said
in one line) are exactly the lines a whole snapshot after the act has more or fewer than one before it, and the whole page an act answers with (`snapshot: true`) is the
whole snapshot taken right after, act after act (adds, checks, unchecks, all toggled, an item deleted, a
filter, clearing the completed ones).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from test_page_tools import Agent, page_lines

pytestmark = pytest.mark.anyio


@pytest.fixture
def tabwire_command(tabwire_command):
    return tabwire_command.serving_page_tools_only(call_timeout_ms=8000).allowing_all_origins()


FOLDED = re.compile(r"^(.*) \(and the (\d+) lines under it\)$")


def diff_lines(answer: str, before: list[str]) -> tuple[Counter, Counter]:
    """The lines an act's diff takes away and adds (without their sign); an element gone with everything
    under it, said in one line, stands for its lines in the snapshot `before`."""
    gone, came = Counter(), Counter()
    after_fold = 0  # the diff goes in the page's order: a folded line is after the one before it
    for line in answer.splitlines()[2:]:
        if line.startswith("-"):
            text = line[1:]
            if folded := FOLDED.match(text):
                text, under = folded[1], int(folded[2])
                at = before.index(text, after_fold)
                gone.update(before[at + 1 : at + 1 + under])
                after_fold = at + 1 + under
            gone[text] += 1
        elif line.startswith("+"):
            came[line[1:]] += 1
    return gone, came


async def act_matches_whole_snapshots(agent: Agent, what: str, **act) -> list[str]:
    """Acts, and checks its diff against whole snapshots before and after it; the lines after."""
    before = await agent.snapshot(max_chars=100_000)
    answer = await agent.ok("page_act", **act)
    after = await agent.snapshot(max_chars=100_000)
    gone, came = diff_lines(answer, before)
    assert gone or came, f"{what}: no change shown:\n{answer}"
    assert (gone, came) == (Counter(before) - Counter(after), Counter(after) - Counter(before)), (
        f"{what}: the act answered\n{answer}\nbefore:\n" + "\n".join(before) + "\nafter:\n" + "\n".join(after)
    )
    return after


@pytest.mark.parametrize("example", ["vanillajs", "react"])
async def test_an_acts_diff_is_what_whole_snapshots_before_and_after_it_say(
    example, tabwire, launch_chromium, extension_dir, static_server
):
    url = static_server.url("plain", f"examples/{example}/index.html")
    await launch_chromium(extension_dir=extension_dir)
    opened = await tabwire.browser_open(url)
    assert not opened.is_error, opened
    agent = Agent(tabwire, opened.structured["tab_id"])
    lines = await agent.snapshot_until(r'^textbox e\d+ "What needs to be done\?"')
    field = agent.ref(lines, r'^textbox e\d+ "What needs to be done\?"')
    for title in ["buy milk", "walk the dog", "call mum"]:
        await agent.ok("page_act", ref=field, action="fill", value=title)
        lines = await act_matches_whole_snapshots(agent, f"adding {title}", ref=field, action="press", key="Enter")

    def toggle(title: str, lines: list[str]) -> str:
        return agent.ref(agent.block(lines, rf"^\s*{title}$|: {title}$"), r"^checkbox e\d+")

    lines = await act_matches_whole_snapshots(agent, "a check", ref=toggle("buy milk", lines), action="check")
    lines = await act_matches_whole_snapshots(agent, "a second check", ref=toggle("call mum", lines), action="check")
    lines = await act_matches_whole_snapshots(agent, "an uncheck", ref=toggle("buy milk", lines), action="uncheck")
    # The checkbox outside the list (React's has no name).
    toggle_all = next(re.match(r"checkbox (e\d+)", line)[1] for line in lines if re.match(r"checkbox e\d+", line))
    lines = await act_matches_whole_snapshots(agent, "all toggled", ref=toggle_all, action="click")
    delete = agent.ref(agent.block(lines, r"^\s*walk the dog$|: walk the dog$"), r"^button e\d+")
    lines = await act_matches_whole_snapshots(agent, "an item deleted", ref=delete, action="click")
    active = agent.ref(lines, r'^link e\d+ "Active"')
    lines = await act_matches_whole_snapshots(agent, "the Active filter", ref=active, action="click")
    every = agent.ref(lines, r'^link e\d+ "All"')
    lines = await act_matches_whole_snapshots(agent, "the All filter", ref=every, action="click")
    clear = agent.ref(lines, r"^button e\d+ \"Clear completed")
    await act_matches_whole_snapshots(agent, "the completed cleared", ref=clear, action="click")

    # The whole page an act answers with is the whole snapshot right after it.
    lines = await agent.snapshot(max_chars=100_000)
    await agent.ok("page_act", ref=field, action="fill", value="one more")
    answered = await agent.ok("page_act", ref=field, action="press", key="Enter", snapshot=True)
    shown = page_lines(answered)[1:]
    assert shown and shown == await agent.snapshot(max_chars=100_000), answered
    lines = await agent.snapshot(max_chars=100_000)
    answered = await agent.ok("page_act", ref=toggle("one more", lines), action="check", snapshot=True)
    assert page_lines(answered)[1:] == await agent.snapshot(max_chars=100_000), answered
    assert re.search(r"checkbox e\d+ checked", answered), answered
