"""Adapter state and DOM predicates, page side and worker side, at the wire level: the real extension in
headless Chromium connects to a fake tabwire server (harness.fake_tabwire) that speaks the bridge protocol.

- After every call of a tool not annotated read_only the page runs its adapters' `state` extractors and the
  worker pushes `state_update {tab, state, ts}`; read-only calls push nothing.
- `request_state {id, tab}` is answered with `state_response {id, state}` (or `state_error`).
- An adapter with `match_selector` serves a page only once the page has a matching element; the worker
  applies `adapters_updated` to the open tab without a reload.

The oracle is the fixture page's own DOM, read through DevTools.
"""

from __future__ import annotations

import time

import pytest

from harness.adapter_docs import adapter, arguments, listed_state, text_of, tool
from harness.fake_tabwire import FakeTabwire
from harness.waiting import wait_for

pytestmark = pytest.mark.anyio

PAGE = "live/index.html"

LIST_ADAPTER = adapter(
    "live",
    ["http://127.0.0.1/*"],
    [
        tool("add_item", "Add an item.", [
            {"step": "fill", "selector": "#new-item", "value": "{{text}}"},
            {"step": "click", "selector": "#add"},
            {"step": "return", "value": {"added": "{{text}}"}},
        ], input_schema=arguments("text")),
        text_of("heading", "Read the heading.", "#heading"),
    ],
    state=listed_state("#items > li", "items"),
)


def gated(name: str, selector: str) -> dict:
    return adapter(name, ["http://127.0.0.1/*"], [text_of("heading", "Read the heading.", "#heading")],
                   match_selector=selector)


async def page_items(browser, page) -> list[str]:
    return await browser.cdp.evaluate(page, "[...document.querySelectorAll('#items > li')].map(li => li.textContent)")


def texts(state: dict) -> list[str]:
    return [i["text"] for i in state["live"]["items"]]


async def test_state_is_pushed_after_changing_calls_and_answered_on_request(
    pairing, launch_chromium, extension_dir, fixture_server
):
    url = fixture_server.url("plain", PAGE)
    async with FakeTabwire(pairing.port, pairing.secret, [LIST_ADAPTER]) as fake:
        browser = await launch_chromium(extension_dir=extension_dir, url=url)
        tab = await fake.wait_tab_tools({"live_add_item", "live_heading"}, timeout=30)
        page = await browser.cdp.wait_for_page(url)

        # A changing call: its result, then a state_update whose state is what the page shows.
        started_ms = time.time() * 1000
        call = {"type": "call_tool", "tab": tab, "tool": "live_add_item", "args": {"text": "three"}, "timeout_ms": 5000}
        answer = await fake.request(call, ("call_tool_result", "call_tool_error"))
        assert answer["type"] == "call_tool_result", answer
        update = await fake.wait_frame(lambda f: f.get("type") == "state_update", what="a state_update")
        assert update["tab"] == tab
        assert texts(update["state"]) == await page_items(browser, page) == ["one", "two", "three"]
        assert started_ms - 1000 <= update["ts"] <= time.time() * 1000 + 1000, update["ts"]

        # A read-only call pushes nothing: the next update is the one after the next changing call.
        answer = await fake.request(
            {"type": "call_tool", "tab": tab, "tool": "live_heading", "args": {}, "timeout_ms": 5000},
            ("call_tool_result", "call_tool_error"),
        )
        assert answer == {"type": "call_tool_result", "id": answer["id"], "result": "Live page"}
        call["args"] = {"text": "four"}
        assert (await fake.request(call, ("call_tool_result", "call_tool_error")))["type"] == "call_tool_result"
        await fake.wait_frame(
            lambda f: f.get("type") == "state_update" and len(f["state"]["live"]["items"]) == 4,
            what="the state_update after the second changing call",
        )
        updates = fake.of_type("state_update")
        assert [len(u["state"]["live"]["items"]) for u in updates] == [3, 4], updates

        # request_state runs the extractor now: a change made by the page itself shows up.
        await browser.cdp.evaluate(page, "document.getElementById('items').lastChild.remove(); 1")
        answer = await fake.request({"type": "request_state", "tab": tab}, ("state_response", "state_error"))
        assert answer["type"] == "state_response", answer
        assert texts(answer["state"]) == await page_items(browser, page) == ["one", "two", "three"]

        # A tab without a runtime gets a clear error.
        answer = await fake.request({"type": "request_state", "tab": 987654}, ("state_response", "state_error"))
        assert answer["type"] == "state_error" and answer["error"]["code"] == "NO_SUCH_TAB", answer


async def test_state_errors_are_reported(pairing, launch_chromium, extension_dir, fixture_server):
    broken = dict(
        LIST_ADAPTER,
        state={"steps": [{"step": "read", "selector": "#missing", "into": "x"}, {"step": "return", "value": "{{x}}"}]},
    )
    without = {k: v for k, v in LIST_ADAPTER.items() if k != "state"}
    url = fixture_server.url("plain", PAGE)
    async with FakeTabwire(pairing.port, pairing.secret, [broken]) as fake:
        await launch_chromium(extension_dir=extension_dir, url=url)
        tab = await fake.wait_tab_tools({"live_add_item", "live_heading"}, timeout=30)
        answer = await fake.request({"type": "request_state", "tab": tab}, ("state_response", "state_error"))
        assert answer["type"] == "state_error", answer
        assert answer["error"]["code"] == "ELEMENT_NOT_FOUND", answer
        assert "state of adapter live" in answer["error"]["message"], answer

        announced = len(fake.of_type("tools_updated"))
        await fake.send({"type": "adapters_updated", "adapters": [without]})
        await wait_for(
            lambda: len(fake.of_type("tools_updated")) > announced,
            timeout=15,
            what="the tab announcing its tools again after adapters_updated",
        )
        answer = await fake.request({"type": "request_state", "tab": tab}, ("state_response", "state_error"))
        assert answer["type"] == "state_error" and answer["error"]["code"] == "ADAPTER_ERROR", answer
        assert "no adapter on this page declares a state extractor" in answer["error"]["message"]


async def test_dom_predicates_decide_which_adapters_serve_the_page(
    pairing, launch_chromium, extension_dir, fixture_server
):
    url = fixture_server.url("plain", PAGE)
    adapters = [gated("app", ".listapp"), gated("other", ".not-on-this-page"), gated("late", "#late")]
    async with FakeTabwire(pairing.port, pairing.secret, adapters) as fake:
        browser = await launch_chromium(extension_dir=extension_dir, url=url)
        tab = await fake.wait_tab_tools({"app_heading"}, timeout=30)
        page = await browser.cdp.wait_for_page(url)
        answer = await fake.request(
            {"type": "call_tool", "tab": tab, "tool": "app_heading", "args": {}, "timeout_ms": 5000},
            ("call_tool_result", "call_tool_error"),
        )
        assert answer["result"] == "Live page", answer

        # The page renders the element later: the adapter starts serving it.
        await browser.cdp.evaluate(page, "document.body.appendChild(Object.assign(document.createElement('div'), {id: 'late'})); 1")
        assert await fake.wait_tab_tools({"app_heading", "late_heading"}) == tab

        # adapters_updated reaches the open tab: predicates are checked against the new set.
        await fake.send({"type": "adapters_updated", "adapters": [gated("other", ".not-on-this-page"), gated("now", "#items")]})
        assert await fake.wait_tab_tools({"now_heading"}) == tab
        answer = await fake.request(
            {"type": "call_tool", "tab": tab, "tool": "app_heading", "args": {}, "timeout_ms": 5000},
            ("call_tool_result", "call_tool_error"),
        )
        assert answer["type"] == "call_tool_error" and answer["error"]["code"] == "NO_SUCH_TOOL", answer
        assert await browser.cdp.evaluate(page, "performance.getEntriesByType('navigation').length") == 1
