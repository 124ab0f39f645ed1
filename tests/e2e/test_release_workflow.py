"""The release workflow (.github/workflows/release.yml) cannot run here (no CI runners), so it is
checked for what can be checked: YAML that parses, every job with a runner and steps, each step either
`run` or `uses`, `needs` naming jobs that exist, every `${{ ... }}` closed, and every `run` script valid
bash (`bash -n`, with the expressions stood in for)."""

from __future__ import annotations

import re
import subprocess

import yaml

from conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "release.yml"


def test_the_release_workflow_is_well_formed():
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert flow["name"] == "release"
    # PyYAML reads the key `on` as True (YAML 1.1).
    triggers = flow.get("on", flow.get(True))
    assert "tags" in triggers["push"], triggers
    jobs = flow["jobs"]
    assert {"build", "test-cli", "release"} <= set(jobs)
    for name, job in jobs.items():
        assert "runs-on" in job and job["steps"], name
        for need in [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", []):
            assert need in jobs, f"{name} needs unknown job {need}"
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), f"{name}: {step}"
            if "run" in step:
                script = re.sub(r"\$\{\{[^}]*\}\}", "X", step["run"])
                assert "${{" not in script, f"{name}: an unclosed expression in {step['run']!r}"
                checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
                assert checked.returncode == 0, f"{name}: {checked.stderr}\n{step['run']}"
    platforms = {entry["platform"] for entry in jobs["test-cli"]["strategy"]["matrix"]["include"]}
    assert platforms == {"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"}
