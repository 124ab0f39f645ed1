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


def _describe(last: Any, last_exc: BaseException | None) -> str:
    if last_exc is not None:
        return f"last error: {type(last_exc).__name__}: {last_exc}"
    return f"last value: {last!r}"[:2000]


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
    deadline = time.monotonic() + timeout
    last: Any = None
    last_exc: BaseException | None = None
    while True:
        try:
            value = condition()
            if inspect.isawaitable(value):
                value = await value
            last, last_exc = value, None
            if value:
                return value
        except ignore as exc:  # noqa: PERF203 - polling loop
            last_exc = exc
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {what} ({_describe(last, last_exc)})")
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
    deadline = time.monotonic() + timeout
    last: Any = None
    last_exc: BaseException | None = None
    while True:
        try:
            value = condition()
            last, last_exc = value, None
            if value:
                return value
        except ignore as exc:  # noqa: PERF203 - polling loop
            last_exc = exc
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {what} ({_describe(last, last_exc)})")
        time.sleep(interval)
