"""Fixtures for Tabwire's end-to-end tests: the real `tabwire mcp` over stdio, headless Chromium with the
real extension and DevTools, TodoMVC served on 127.0.0.1, and the test apps (MailDev, TiddlyWiki).

Everything a test starts is stopped when it ends, pass or fail. Each process's output goes to a file in
the test's tmp dir; when a test fails, the tail of each file is attached to its report.
Nothing is skipped: a missing binary, extension build, Chromium or app is a failure that says what to run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncContextManager, AsyncIterator, Awaitable, Callable, Iterator

import pytest
from mcp.client.stdio import StdioServerParameters

from harness.apps import App, MailDev, Moin, TiddlyWiki, Trac
from harness.chromium import CHROMIUM, Chromium
from harness.files_app import FilesApp
from harness.firefox import FIREFOX, Firefox, add_on_connected
from harness.mcp_client import TabwireSession, open_tabwire_session
from harness.static_server import StaticServer

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("TABWIRE_CACHE") or Path.home() / ".cache" / "tabwire")
TABWIRE_BIN = Path(os.environ.get("TABWIRE_BIN") or REPO / "target" / "release" / "tabwire")
TODOMVC_ROOT = CACHE / "apps" / "node_modules" / "todomvc"
TODOMVC_PAGE = "examples/vanillajs/index.html"
APP_BINS = CACHE / "apps" / "node_modules" / ".bin"
FIXTURES = REPO / "tests" / "fixtures"
TAIL_LINES = 80


# --- plumbing -------------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _register_log(request: pytest.FixtureRequest, label: str, path: Path) -> None:
    request.node.__dict__.setdefault("tabwire_logs", []).append((label, path))


def _tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return f"({path} was never written)"
    text = data.decode("utf-8", "replace").splitlines()
    return "\n".join(text[-lines:]) or "(empty)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for label, path in item.__dict__.get("tabwire_logs", []):
            report.sections.append((f"{label}: last {TAIL_LINES} lines of {path}", _tail(path)))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def extension_id_from_manifest(manifest_path: Path) -> str:
    """Chrome's id for an extension with a `key`: sha256(DER key)[:16], each nibble n -> chr(ord('a') + n)."""
    key = json.loads(manifest_path.read_text())["key"]
    digest = hashlib.sha256(base64.b64decode(key)).digest()[:16]
    return "".join(chr(ord("a") + (b >> 4)) + chr(ord("a") + (b & 0xF)) for b in digest)


# --- things that must exist ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def tabwire_binary() -> Path:
    if not (TABWIRE_BIN.is_file() and os.access(TABWIRE_BIN, os.X_OK)):
        pytest.fail(f"{TABWIRE_BIN} is missing: run ./build.sh first", pytrace=False)
    return TABWIRE_BIN


@pytest.fixture(scope="session")
def todomvc_root() -> Path:
    if not (TODOMVC_ROOT / TODOMVC_PAGE).is_file():
        pytest.fail(
            f"TodoMVC is not installed at {TODOMVC_ROOT}: run "
            f"`npm install --prefix {CACHE / 'apps'} todomvc@0.1.1` (test.sh does this)",
            pytrace=False,
        )
    return TODOMVC_ROOT


@pytest.fixture(scope="session")
def extension_id() -> str:
    manifest = REPO / "manifest.json"
    if not manifest.is_file():
        pytest.fail(f"{manifest} is missing", pytrace=False)
    return extension_id_from_manifest(manifest)


# --- per-test processes --------------------------------------------------------------------------


@pytest.fixture
def static_server(request: pytest.FixtureRequest, todomvc_root: Path, tmp_path: Path):
    """TodoMVC on 127.0.0.1 under /plain/, /csp-header/ and /csp-meta/ (see harness.static_server)."""
    yield from _static_server(request, tmp_path, todomvc_root, "static server")


@pytest.fixture
def fixture_server(request: pytest.FixtureRequest, tmp_path: Path):
    """The project's own fixture pages (tests/fixtures) on 127.0.0.1, under the same variants as TodoMVC."""
    yield from _static_server(request, tmp_path, FIXTURES, "fixture server")


@pytest.fixture
def second_fixture_server(request: pytest.FixtureRequest, tmp_path: Path):
    """The same fixture pages on another port: another origin (for the origin-separation tests)."""
    yield from _static_server(request, tmp_path, FIXTURES, "second fixture server")


def _static_server(request: pytest.FixtureRequest, tmp_path: Path, root: Path, name: str) -> Iterator[StaticServer]:
    """`root` served on 127.0.0.1 (see harness.static_server), its log registered as `name`."""
    log = tmp_path / f"{name.replace(' ', '-')}.log"
    _register_log(request, name, log)
    server = StaticServer(root, log)
    try:
        yield server
    finally:
        server.stop()


def _run_app(request: pytest.FixtureRequest, tmp_path: Path, name: str, start: Callable[[Path, Path], App],
             installed: Path | None = None) -> Iterator[App]:
    """An app installed under the cache by scripts/test-env.sh (`installed`, by default `.bin/<name>` of the
    npm apps), started by `start(installed, log)` with its output in the test's log, yielded once its HTTP
    API answers, stopped at the end."""
    installed = installed or APP_BINS / name
    if not installed.exists():
        pytest.fail(f"{installed} is missing: run ./test.sh (scripts/test-env.sh installs it)", pytrace=False)
    log = tmp_path / f"{name}.log"
    _register_log(request, name, log)
    app = start(installed, log)
    try:
        app.wait_ready()
        yield app
    finally:
        app.stop()


@pytest.fixture
def maildev(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MailDev]:
    """MailDev 2.2.1 with SMTP and web on free ports (see harness.apps)."""
    yield from _run_app(
        request, tmp_path, "maildev", lambda binary, log: MailDev(binary, free_port(), free_port(), tmp_path / "mail", log)
    )


@pytest.fixture
def tiddlywiki(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TiddlyWiki]:
    """A fresh TiddlyWiki 5 Node.js server on a free port (see harness.apps)."""
    yield from _run_app(
        request, tmp_path, "tiddlywiki", lambda binary, log: TiddlyWiki(binary, tmp_path / "wiki", free_port(), log)
    )


@pytest.fixture
def trac(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Trac]:
    """A fresh Trac 1.6 on a free port (see harness.apps)."""
    yield from _run_app(request, tmp_path, "trac", lambda venv, log: Trac(venv, tmp_path / "trac-env", free_port(), log),
                        CACHE / "trac" / "venv")


@pytest.fixture
def moin(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Moin]:
    """A fresh MoinMoin 2 wiki on a free port (see harness.apps)."""
    yield from _run_app(request, tmp_path, "moin", lambda venv, log: Moin(venv, tmp_path / "moin-wiki", free_port(), log),
                        CACHE / "moin" / "venv")


@pytest.fixture
def files_app(request: pytest.FixtureRequest) -> Iterator[FilesApp]:
    """The files app (harness.files_app) on 127.0.0.1, offering the test module's `DOWNLOADS` (name → bytes)
    for download if it has them; stopped at the end."""
    app = FilesApp(getattr(request.module, "DOWNLOADS", None))
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture
def downloads_dir(tmp_path: Path) -> Path:
    """The folder `--downloads-dir` names, where `browser_downloads` saves copies (made by the save)."""
    return tmp_path / "saved downloads"


@pytest.fixture
def todomvc_url(static_server: StaticServer) -> Callable[[str], str]:
    """The vanillajs TodoMVC page's URL for a variant: 'plain', 'csp-header' or 'csp-meta'."""
    return lambda variant: static_server.url(variant, TODOMVC_PAGE)


class Pairing:
    """A per-test WebSocket port and pairing secret, shared by tabwire and the extension copy."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.secret = secrets.token_hex(32)
        self.secret_file = tmp_path / "secret"
        self.secret_file.write_text(self.secret + "\n")
        self.secret_file.chmod(0o600)


@pytest.fixture
def pairing(tmp_path: Path) -> Pairing:
    return Pairing(tmp_path)


@pytest.fixture
def extension_dir(tmp_path: Path, pairing: Pairing) -> Path:
    """A copy of the unpacked extension (repo root's manifest.json + extension/) paired with this test's tabwire.

    The manifest's `key` keeps the extension id of the repo-root install.
    """
    dist = REPO / "extension" / "dist"
    for needed in (REPO / "manifest.json", dist / "worker", dist / "injector", dist / "injector-js"):
        if not needed.exists():
            pytest.fail(f"{needed} is missing: run ./build.sh first", pytrace=False)
    out = tmp_path / "extension-root"
    out.mkdir()
    shutil.copy2(REPO / "manifest.json", out / "manifest.json")
    shutil.copytree(
        REPO / "extension",
        out / "extension",
        ignore=shutil.ignore_patterns("target", "pairing.json"),
    )
    for extra in ("adapters", "icons"):  # whatever else the manifest may reference at the top level
        if (REPO / extra).is_dir():
            shutil.copytree(REPO / extra, out / extra)
    (out / "extension" / "pairing.json").write_text(json.dumps({"port": pairing.port, "secret": pairing.secret}))
    return out


@dataclass
class TabwireCommand:
    """How this test starts `tabwire mcp`: binary, arguments, environment, working dir, stderr file."""

    binary: Path
    args: list[str]
    env: dict[str, str]
    cwd: Path
    stderr_path: Path

    def without_adapter_match(self) -> "TabwireCommand":
        """No adapter for 127.0.0.1 (the default todomvc match left out): only page tools there, the tools a
        page brings itself, and those of the adapters the test adds."""
        i = self.args.index("--adapter-match")
        del self.args[i : i + 2]
        return self

    def with_adapters(self, directory: Path) -> "TabwireCommand":
        """Also serve the adapter files in `directory` (`--adapters`)."""
        self.args += ["--adapters", str(directory)]
        return self

    def with_flags(self, **flags: str | int) -> "TabwireCommand":
        """Further `--flag value` pairs (`call_timeout_ms=6000` is `--call-timeout-ms 6000`)."""
        for flag, value in flags.items():
            self.args += [f"--{flag.replace('_', '-')}", str(value)]
        return self

    def allowing_all_origins(self) -> "TabwireCommand":
        """`--allow-all-origins`: page tools act on any site without asking (the permission flow is
        test_permission's)."""
        self.args.append("--allow-all-origins")
        return self

    def serving_page_tools_only(self, call_timeout_ms: int) -> "TabwireCommand":
        """No adapter for 127.0.0.1 (only tools the page brings itself) and a short call timeout."""
        return self.without_adapter_match().with_flags(call_timeout_ms=call_timeout_ms)

    def serving(self, adapter: str, base: str) -> "TabwireCommand":
        """Serve `adapter` (instead of todomvc) on the app at `base` (`http://127.0.0.1:PORT`)."""
        self.args[self.args.index("todomvc=http://127.0.0.1/*")] = f"{adapter}={base}/*"
        return self

    def serving_adapter_file(self, adapter: dict, directory: Path, **more: str | int) -> "TabwireCommand":
        """Serve `adapter` (its own `match`) from a file in `directory`, instead of the todomvc match; `more`:
        further `--flag value` pairs (`call_timeout_ms=6000`)."""
        directory.mkdir()
        (directory / f"{adapter['name']}.json").write_text(json.dumps(adapter))
        return self.without_adapter_match().with_adapters(directory).with_flags(**more)

    def session(self, **options: Any) -> AsyncContextManager[TabwireSession]:
        """`tabwire mcp` as this command says, driven by the official Python MCP client over stdio, for a test
        that starts it itself (after its browser, or more than once); `options`: `open_tabwire_session`'s
        (another `stderr_path` for a second process)."""
        return open_tabwire_session(
            self.binary, self.args, env=self.env, cwd=self.cwd, **{"stderr_path": self.stderr_path, **options}
        )

    def stdio_parameters(self) -> StdioServerParameters:
        return StdioServerParameters(command=str(self.binary), args=self.args, env=self.env, cwd=self.cwd)


def run_cli(tabwire_command: TabwireCommand, *args: str) -> str:
    """Runs `tabwire ARGS` (`allow`, `grants`, `audit`…) as a user would, with the test's config and data
    folders; its output, once it succeeded."""
    out = subprocess.run(
        [str(tabwire_command.binary), *args],
        env={**tabwire_command.env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out
    return out.stdout


@pytest.fixture
def tabwire_command(
    request: pytest.FixtureRequest, tabwire_binary: Path, pairing: Pairing, tmp_path: Path
) -> TabwireCommand:
    stderr_path = tmp_path / "tabwire.stderr.log"
    _register_log(request, "tabwire stderr", stderr_path)
    config_home = tmp_path / "config"
    config_home.mkdir()
    args = [
        "mcp",
        "--port",
        str(pairing.port),
        "--secret-file",
        str(pairing.secret_file),
        "--adapter-match",
        "todomvc=http://127.0.0.1/*",
    ]
    env = {
        "RUST_LOG": os.environ.get("TABWIRE_TEST_RUST_LOG", "info"),
        "RUST_BACKTRACE": "1",
        "XDG_CONFIG_HOME": str(config_home),
        # The audit log and screenshots saved as files stay in the test's folder.
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    return TabwireCommand(tabwire_binary, args, env, tmp_path, stderr_path)


@pytest.fixture
def unadapted_command(tabwire_command: TabwireCommand) -> TabwireCommand:
    """`tabwire_command` with no adapter for 127.0.0.1: on the fixture pages only page tools and the tools a
    page brings itself, for a test that starts the session itself."""
    return tabwire_command.without_adapter_match()


@pytest.fixture
async def tabwire(tabwire_command: TabwireCommand) -> AsyncIterator[TabwireSession]:
    """`tabwire mcp` on this test's port and secret, driven by the official Python MCP client over stdio."""
    async with tabwire_command.session() as s:
        yield s


@pytest.fixture
def launch_chromium(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[..., Awaitable[Chromium]]:
    """`await launch_chromium(extension_dir=..., url=...)` starts headless Chromium with a fresh profile and
    waits for DevTools; every Chromium started this way is stopped when the test ends."""
    started: list[Chromium] = []

    async def launch(*, extension_dir: Path | None, url: str | None = None) -> Chromium:
        n = len(started)
        log = tmp_path / f"chromium-{n}.log"
        _register_log(request, f"chromium #{n}", log)
        browser = Chromium(tmp_path / f"profile-{n}", log, extension_dir, url)
        started.append(browser)
        await browser.wait_ready()
        return browser

    yield launch
    for browser in started:
        browser.stop()


@pytest.fixture
def firefox_extension_dir(tabwire_command: TabwireCommand, pairing: Pairing, tmp_path: Path) -> Path:
    """The add-on for Firefox, written and paired by `tabwire extension install --browser firefox` as a user
    would (the same files as Chrome's, Firefox's manifest)."""
    out = tmp_path / "firefox-extension"
    run_cli(tabwire_command, "extension", "install", "--browser", "firefox", str(out),
            "--port", str(pairing.port), "--secret-file", str(pairing.secret_file))
    return out


@pytest.fixture
def launch_firefox(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Awaitable[Firefox]]:
    """`await launch_firefox(extension_dir)` starts headless Firefox ESR with a fresh profile and installs the
    add-on through WebDriver BiDi (`browser.bidi`); every Firefox started this way is stopped at the end."""
    started: list[Firefox] = []

    async def launch(extension_dir: Path) -> Firefox:
        n = len(started)
        log = tmp_path / f"firefox-{n}.log"
        _register_log(request, f"firefox #{n}", log)
        browser = Firefox(tmp_path / f"firefox-profile-{n}", log, free_port())
        started.append(browser)
        browser.bidi = await browser.start(extension_dir)
        return browser

    yield launch
    for browser in started:
        browser.stop()


@pytest.fixture
def firefox_connected_to(
    launch_firefox: Callable[..., Awaitable[Firefox]], firefox_extension_dir: Path
) -> Callable[[TabwireSession], Awaitable[Firefox]]:
    """`await firefox_connected_to(tabwire)`: headless Firefox with this test's add-on (`launch_firefox`),
    once `tabwire` has it connected."""

    async def launch(tabwire: TabwireSession) -> Firefox:
        browser = await launch_firefox(firefox_extension_dir)
        await add_on_connected(tabwire)
        return browser

    return launch


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"tabwire: {TABWIRE_BIN}", f"chromium: {CHROMIUM}", f"firefox: {FIREFOX}", f"cache: {CACHE}"]
