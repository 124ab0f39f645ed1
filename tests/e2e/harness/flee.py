"""The hostile pages of issue 26's race tests (tests/fixtures/read-race/flee.html, screenshot/flee.html),
driven through DevTools: each try loads the allowed page again and sets off its flight to another origin,
then waits for it to arrive there, so a page tool or a state read called in between races the navigation.
"""

from __future__ import annotations

from harness.cdp import Cdp, CdpError, Target
from harness.waiting import wait_for


async def load_and_flee(cdp: Cdp, page: Target, url: str, delay_ms: int, other: str) -> None:
    """Loads `url` (a flee page whose query carries `try=`) in `page`, waits until it is ready, and has it go
    to the origin `other` `delay_ms` later."""
    await cdp.send(page, "Page.navigate", {"url": url})

    async def ready():
        return await cdp.evaluate(
            page, "location.href.includes('try=') && document.readyState === 'complete' && !!window.fixture"
        )

    await wait_for(ready, timeout=20, what="the allowed page to load again", ignore=(CdpError,))
    await cdp.evaluate(page, f"fixture.flee({delay_ms}, {other!r})")


async def arrived(cdp: Cdp, page: Target, other: str, *, stamped: bool) -> None:
    """Waits until `page` shows the origin `other`; with `stamped`, also until the page there has noted when
    its first script ran (`window.arrivedAt`, read-race/elsewhere.html), the tests' oracle of lateness."""
    stamp = " && typeof window.arrivedAt === 'number'" if stamped else ""

    async def there():
        return await cdp.evaluate(page, f"location.origin === {other!r}{stamp}")

    await wait_for(there, timeout=20, what="the page to reach the other origin", ignore=(CdpError,))
