"""Deadline-bounded polling: every wait in the e2e tests goes through here (no fixed sleeps).

A wait polls a condition until it returns something truthy or the deadline passes; on timeout it fails
with a message that says what it was waiting for and the last value or exception it saw.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Awaitable, Callable

import anyio

POLL_INTERVAL = 0.05


class WaitTimeout(AssertionError):
    """A condition did not become true before its deadline."""


class _Deadline:
    """One wait's deadline and the last thing its condition gave, to say on timeout."""

    def __init__(self, timeout: float, what: str) -> None:
        self.timeout, self.what = timeout, what
        self.end = time.monotonic() + timeout
        self.last: Any = None
        self.last_exc: BaseException | None = None

    def saw(self, value: Any) -> Any:
        self.last, self.last_exc = value, None
        return value

    def failed(self, exc: BaseException) -> None:
        self.last_exc = exc

    def check(self) -> None:
        """Raise WaitTimeout once the deadline has passed."""
        if time.monotonic() < self.end:
            return
        if self.last_exc is not None:
            seen = f"last error: {type(self.last_exc).__name__}: {self.last_exc}"
        else:
            seen = f"last value: {self.last!r}"[:2000]
        raise WaitTimeout(f"timed out after {self.timeout:.1f}s waiting for {self.what} ({seen})")


async def wait_for(
    condition: Callable[[], Any | Awaitable[Any]],
    *,
    timeout: float,
    what: str,
    interval: float = POLL_INTERVAL,
    ignore: tuple[type[BaseException], ...] = (),
) -> Any:
    """Poll `condition` (sync or async) until it returns a truthy value; return that value.

    Exceptions listed in `ignore` count as "not yet" (and are reported if the deadline passes).
    """
    deadline = _Deadline(timeout, what)
    while True:
        try:
            value = condition()
            if inspect.isawaitable(value):
                value = await value
            if deadline.saw(value):
                return value
        except ignore as exc:  # noqa: PERF203 - polling loop
            deadline.failed(exc)
        deadline.check()
        await anyio.sleep(interval)


def wait_for_sync(
    condition: Callable[[], Any],
    *,
    timeout: float,
    what: str,
    interval: float = POLL_INTERVAL,
    ignore: tuple[type[BaseException], ...] = (),
) -> Any:
    """Blocking twin of `wait_for`, for fixtures that run outside the event loop."""
    deadline = _Deadline(timeout, what)
    while True:
        try:
            if deadline.saw(value := condition()):
                return value
        except ignore as exc:  # noqa: PERF203 - polling loop
            deadline.failed(exc)
        deadline.check()
        time.sleep(interval)
