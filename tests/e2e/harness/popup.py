"""The popup's site section as a person sees it, read the same way in Chromium (CDP) and Firefox (BiDi):
what it says, which buttons it shows, and whether a change is still on its way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

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


async def site_when(evaluate: Callable[[str], Awaitable[dict]], condition, what: str) -> dict:
    """Waits until the popup's site section, settled (no change on its way), meets `condition`."""

    async def check():
        dom = await evaluate(SITE_DOM)
        return dom if dom["site"] and not dom["busy"] and condition(dom) else None

    return await wait_for(check, timeout=20, what=f"the popup to show {what}")
