"""The popup's site section as a person sees it, read the same way in Chromium (CDP) and Firefox (BiDi):
what it says, which buttons it shows, and whether a change is still on its way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from harness.waiting import wait_for

SITE_DOM = """(() => {
  const q = (s) => document.querySelector(s);
  const shown = (s) => !q(s).hidden;
  return {
    connection: q('#connection').dataset.state,
    site: q('#site').dataset.site,
    origin: q('#site-origin').textContent,
    text: q('#site-state').textContent,
    allow: shown('#allow'), revoke: shown('#revoke'), trusted_box: shown('#trusted-box'),
    trusted: q('#trusted').checked,
    // A change on its way: the popup disables its buttons until the worker answers, and a click on
    // them does nothing then, as for a person.
    busy: q('#allow').disabled || q('#revoke').disabled || q('#trusted').disabled,
    problem: shown('#grant-problem') ? q('#grant-problem').textContent : null,
    grants: [...document.querySelectorAll('#grants li')].map((li) => li.textContent),
    grants_text: q('#grants').textContent,
  };
})()"""


class PopupSite:
    """The popup page's site section in one browser, read and clicked as a person does, through `evaluate`
    (a JS expression in the popup → its value: CDP's in Chromium, BiDi's in Firefox)."""

    def __init__(self, evaluate: Callable[[str], Awaitable[Any]]) -> None:
        self.evaluate = evaluate

    async def when(self, condition, what: str) -> dict:
        """Waits until the site section, settled (no change on its way), meets `condition`."""

        async def check():
            dom = await self.evaluate(SITE_DOM)
            return dom if dom["site"] and not dom["busy"] and condition(dom) else None

        return await wait_for(check, timeout=20, what=f"the popup to show {what}")

    async def click(self, selector: str) -> None:
        # `?? true`: BiDi has no serialization for the `undefined` that click() returns.
        await self.evaluate(f"document.querySelector({selector!r}).click() ?? true")

    async def own_page(self, scheme: str) -> dict:
        """Waits until the popup's own tab, in front, shows as no website (its URL `scheme`), with no buttons."""
        dom = await self.when(lambda d: d["site"] == "not_web", "that its own page is no website")
        assert f"Page tools do not work on this page ({scheme}: pages)" in dom["text"], dom
        assert not (dom["allow"] or dom["revoke"] or dom["trusted_box"]), dom
        return dom

    async def disconnected(self, origin: str) -> dict:
        """Waits until the website `origin`, in front, shows tabwire not connected, with no button to change."""
        dom = await self.when(lambda d: d["site"] == "disconnected", "that tabwire is not connected")
        assert dom["origin"] == origin and dom["connection"] == "disconnected", dom
        assert not (dom["allow"] or dom["revoke"]), dom
        return dom

    async def not_allowed(self, origin: str) -> dict:
        """Waits until the website `origin` shows page tools not allowed, with Allow offered."""
        dom = await self.when(lambda d: d["site"] == "not_allowed", "that page tools are not allowed here")
        assert dom["origin"] == origin and dom["allow"] and not dom["revoke"], dom
        return dom
