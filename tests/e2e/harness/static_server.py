"""A threaded static file server on 127.0.0.1 that serves one directory under three CSP variants.

- `/plain/<path>`       the file as is;
- `/csp-header/<path>`  the file with the response header `Content-Security-Policy: script-src 'self'`;
- `/csp-meta/<path>`    HTML files get `<meta http-equiv="Content-Security-Policy" content="script-src 'self'">`
                        inserted as the first child of `<head>`; other files as is.

`?delay_ms=N` on any of them answers N ms late (a subresource that holds a page's load event).

These are the project's fixture pages for the injector's wasm2js fallback: under `script-src 'self'` the page
(and a content script in it) may not compile WebAssembly.
"""

from __future__ import annotations

import http.server
import io
import os
import posixpath
import re
import threading
import time
import urllib.parse
from pathlib import Path

CSP = "script-src 'self'"
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
VARIANTS = ("plain", "csp-header", "csp-meta")
_HEAD_RE = re.compile(rb"<head(\s[^>]*)?>", re.IGNORECASE)


def inject_csp_meta(html: bytes) -> bytes:
    """Insert the CSP `<meta>` right after the `<head>` tag (so it is head's first child)."""
    m = _HEAD_RE.search(html)
    if m is None:
        raise ValueError("HTML has no <head> tag to put the CSP <meta> into")
    return html[: m.end()] + CSP_META.encode() + html[m.end() :]


class _Handler(http.server.SimpleHTTPRequestHandler):
    server: "_Server"

    def _split(self) -> tuple[str | None, str]:
        path = urllib.parse.urlsplit(self.path).path
        parts = path.lstrip("/").split("/", 1)
        if parts[0] in VARIANTS:
            return parts[0], "/" + (parts[1] if len(parts) > 1 else "")
        return None, path

    def translate_path(self, path: str) -> str:
        _variant, rest = self._split()
        rest = posixpath.normpath(urllib.parse.unquote(rest))
        out = self.server.root
        for word in rest.split("/"):
            if not word or word in (os.curdir, os.pardir):
                continue
            out = out / word
        return str(out)

    def send_head(self):  # noqa: ANN201 - stdlib signature
        variant, _rest = self._split()
        if variant is None:
            self.send_error(404, "unknown prefix: use /plain/, /csp-header/ or /csp-meta/")
            return None
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?", 1)[0].endswith("/"):
                self.send_response(301)
                self.send_header("Location", self.path.split("?", 1)[0] + "/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            path = path / "index.html"
        if not path.is_file():
            self.send_error(404, "file not found")
            return None
        # `?delay_ms=N`: answered N ms late (at most 10 s), for a page whose load waits on it.
        delay = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("delay_ms")
        if delay:
            time.sleep(min(int(delay[0]), 10_000) / 1000)
        body = path.read_bytes()
        ctype = self.guess_type(str(path))
        if variant == "csp-meta" and path.suffix in (".html", ".htm"):
            body = inject_csp_meta(body)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if variant == "csp-header":
            self.send_header("Content-Security-Policy", CSP)
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        with self.server.log_lock:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write("%s %s\n" % (self.log_date_time_string(), format % args))


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, log_path: Path) -> None:
        self.root = root
        self.log_path = log_path
        self.log_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)


class StaticServer:
    """Serve `root` on 127.0.0.1 (a free port) until `stop()`."""

    def __init__(self, root: Path, log_path: Path) -> None:
        self._server = _Server(root, log_path)
        self.port: int = self._server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="static-server", daemon=True)
        self._thread.start()

    def url(self, variant: str, path: str) -> str:
        assert variant in VARIANTS, variant
        return f"{self.origin}/{variant}/{path.lstrip('/')}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
