"""Headless Firefox ESR with the Tabwire add-on, driven through WebDriver BiDi, and stopped for sure.

Firefox runs in its own process group with a fresh profile whose prefs pin the add-on's UUID (so its
`moz-extension://` origin is known: `extensions.webextensions.uuids`), keep it off the network and
print the background page's console to the log. The add-on is installed as a temporary add-on through
BiDi's `webExtension.install` (no signing needed), from a folder `tabwire extension install --browser
firefox` wrote. Pages are opened and read through BiDi (`browsingContext.*`, `script.evaluate`); the
add-on's own pages (the popup) through the browser window's script, BiDi's chrome scope.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import websockets

from .waiting import wait_for

FIREFOX = Path(os.environ.get("TABWIRE_FIREFOX", "/usr/bin/firefox-esr"))
GECKO_ID = "tabwire@tabwire.dev"
# The add-on's UUID in the test profiles, and so its origin.
ADDON_UUID = "6a1f0c3e-2b4d-4e5f-9a7b-0c1d2e3f4a5b"
ADDON_ORIGIN = f"moz-extension://{ADDON_UUID}"

PREFS = {
    "extensions.webextensions.uuids": json.dumps({GECKO_ID: ADDON_UUID}),
    "devtools.console.stdout.content": True,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.download.folderList": 2,
    "browser.download.useDownloadDir": True,
    # Only 127.0.0.1 is reachable: no proxy lookups, no DNS prefetch.
    "network.proxy.type": 0,
    "network.dns.disablePrefetch": True,
}


class BidiError(AssertionError):
    pass


class Bidi:
    """A WebDriver BiDi session: one command at a time, its answer matched by id (events are dropped)."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self.socket = socket
        self.ids = itertools.count(1)

    async def send(self, method: str, params: dict | None = None, timeout: float = 20) -> dict:
        id_ = next(self.ids)
        await self.socket.send(json.dumps({"id": id_, "method": method, "params": params or {}}))
        async with asyncio.timeout(timeout):
            while True:
                message = json.loads(await self.socket.recv())
                if message.get("id") != id_:
                    continue
                if message.get("type") == "error":
                    raise BidiError(f"{method}: {message.get('error')}: {message.get('message')}")
                return message["result"]

    async def open(self, url: str) -> str:
        """A new tab showing `url` (loaded); its browsing context id."""
        context = (await self.send("browsingContext.create", {"type": "tab"}))["context"]
        await self.send("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        return context

    async def context_of(self, url_prefix: str, timeout: float = 15) -> str:
        """The browsing context of the tab whose URL starts with `url_prefix`."""

        async def find() -> str | None:
            tree = await self.send("browsingContext.getTree", {"maxDepth": 0})
            return next((c["context"] for c in tree["contexts"] if c["url"].startswith(url_prefix)), None)

        return await wait_for(find, timeout=timeout, what=f"a Firefox tab at {url_prefix}")

    async def evaluate(self, context: str, expression: str) -> Any:
        """`expression` in the page's own world, its value (JSON-serializable results only)."""
        out = await self.send(
            "script.evaluate",
            {
                "expression": f"JSON.stringify(({expression}))",
                "target": {"context": context},
                "awaitPromise": True,
            },
        )
        if out.get("type") == "exception":
            raise BidiError(f"{expression}: {out['exceptionDetails'].get('text')}")
        value = out["result"].get("value")
        return None if value is None else json.loads(value)

    async def open_extension_page(self, path: str) -> str:
        """A new tab showing the add-on's own page `path` (e.g. `extension/popup.html`); its browsing
        context id. BiDi will not navigate a tab to a `moz-extension://` URL, so the browser window's
        own script opens it, as the toolbar button would (BiDi's chrome scope, which Firefox gives only
        when started with `--remote-allow-system-access`)."""
        url = f"{ADDON_ORIGIN}/{path}"
        tree = await self.send("browsingContext.getTree", {"moz:scope": "chrome", "maxDepth": 0})
        window = next(c["context"] for c in tree["contexts"] if c["url"] == "chrome://browser/content/browser.xhtml")
        opened = await self.send(
            "script.evaluate",
            {
                "expression": f"gBrowser.selectedTab = gBrowser.addTab({json.dumps(url)}, "
                "{triggeringPrincipal: Services.scriptSecurityManager.getSystemPrincipal()}); true",
                "target": {"context": window},
                "awaitPromise": False,
            },
        )
        if opened.get("type") == "exception":
            raise BidiError(f"opening {url}: {opened['exceptionDetails'].get('text')}")
        return await self.context_of(url)

    async def suspend_background(self) -> None:
        """Suspends the add-on's background page as Firefox does after ~30 s without an extension API
        call or event (about:debugging's "Terminate background script" does the same): its socket
        closes; the listeners it registered at start stay primed to wake it. Forced: Firefox's own idle
        check postpones a suspension while a listener's promise is pending, which would make the
        moment untestable."""
        tree = await self.send("browsingContext.getTree", {"moz:scope": "chrome", "maxDepth": 0})
        window = next(c["context"] for c in tree["contexts"] if c["url"] == "chrome://browser/content/browser.xhtml")
        done = await self.send(
            "script.evaluate",
            {
                "expression": "(async (ext) => { const before = ext.backgroundState; await ext.terminateBackground({disableResetIdleForTest: true}); "
                "return JSON.stringify([before, ext.backgroundState]); })"
                f"(WebExtensionPolicy.getByID({json.dumps(GECKO_ID)}).extension)",
                "target": {"context": window},
                "awaitPromise": True,
            },
        )
        if done.get("type") == "exception":
            raise BidiError(f"suspending the background: {done['exceptionDetails'].get('text')}")
        states = json.loads(done["result"]["value"])
        assert states[1] != "running", f"the background was not suspended: {states}"

    async def activate(self, context: str) -> None:
        """Brings the tab to the front of its window (what the popup calls the current tab)."""
        await self.send("browsingContext.activate", {"context": context})

    async def reload(self, context: str) -> None:
        await self.send("browsingContext.reload", {"context": context, "wait": "complete"})


class Firefox:
    """One headless Firefox ESR with a fresh profile, the add-on in `extension_dir` installed."""

    def __init__(self, profile_dir: Path, log_path: Path, port: int) -> None:
        if not (FIREFOX.is_file() and os.access(FIREFOX, os.X_OK)):
            raise AssertionError(
                f"Firefox not found at {FIREFOX}: install it (apt-get install -y firefox-esr; ./build.sh deps "
                "does) or set TABWIRE_FIREFOX"
            )
        profile_dir.mkdir(parents=True, exist_ok=True)
        (profile_dir / "user.js").write_text(
            "".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in PREFS.items())
            + f"user_pref(\"browser.download.dir\", {json.dumps(str(profile_dir / 'Downloads'))});\n"
        )
        self.port = port
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.bidi: Bidi | None = None
        self.socket: websockets.ClientConnection | None = None
        self.process = subprocess.Popen(
            # System access: BiDi's chrome scope, to open the add-on's own pages (`open_extension_page`).
            [str(FIREFOX), "--headless", "--no-remote", "--remote-debugging-port", str(port),
             "--remote-allow-system-access", "--profile", str(profile_dir)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "MOZ_HEADLESS": "1", "MOZ_CRASHREPORTER_DISABLE": "1"},
            start_new_session=True,
        )

    async def start(self, extension_dir: Path) -> Bidi:
        """Waits for BiDi, opens a session and installs the add-on from `extension_dir`."""

        async def connected() -> websockets.ClientConnection | None:
            if self.process.poll() is not None:
                raise AssertionError(f"Firefox exited with {self.process.returncode}: see {self.log_path}")
            try:
                return await websockets.connect(f"ws://127.0.0.1:{self.port}/session", max_size=None)
            except OSError:
                return None

        self.socket = await wait_for(connected, timeout=60, what="Firefox's WebDriver BiDi port")
        self.bidi = Bidi(self.socket)
        await self.bidi.send("session.new", {"capabilities": {}}, timeout=60)
        installed = await self.bidi.send(
            "webExtension.install", {"extensionData": {"type": "path", "path": str(extension_dir)}}
        )
        assert installed.get("extension") == GECKO_ID, installed
        return self.bidi

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass
        self.log.close()


async def add_on_connected(tabwire: Any) -> None:
    """Waits until `tabwire` (a TabwireSession) has a browser connected: `browser_tabs` answers."""

    async def up() -> bool:
        return not (await tabwire.call("browser_tabs")).is_error

    await wait_for(up, timeout=30, what="the Firefox add-on to connect")
