"""The fault and load tests' own fixture pages and test adapter (tests/fixtures/), served on 127.0.0.1.

`tests/fixtures/pages/faults.html?tab=NAME` shows NAME in `#marker`; `tests/fixtures/adapters/faults.json`
is the adapter `faults` (tools echo, wait_forever, spin, huge) that tabwire loads with `--adapters`.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FIXTURE_PAGES = REPO / "tests" / "fixtures" / "pages"
FIXTURE_ADAPTERS = REPO / "tests" / "fixtures" / "adapters"
FAULT_TOOLS = ("faults_echo", "faults_wait_forever", "faults_spin", "faults_huge")


def with_fault_adapter(args: list[str], *, call_timeout_ms: int) -> list[str]:
    """`tabwire mcp` arguments plus the fixture adapter directory and a call timeout."""
    return [*args, "--adapters", str(FIXTURE_ADAPTERS), "--call-timeout-ms", str(call_timeout_ms)]
