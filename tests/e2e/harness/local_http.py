"""What the small test apps served on 127.0.0.1 share (harness.files_app, harness.forms_app): a request
handler that logs nothing and answers with no caching, and a threaded server on a free port.
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A handler whose answers are never cached (each test reads the app's state afresh) and that keeps the
    test's output free of request logs."""

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass

    def target(self) -> tuple[urllib.parse.SplitResult, dict[str, list[str]]]:
        """The request's URL, split, and its query's parameters."""
        url = urllib.parse.urlsplit(self.path)
        return url, urllib.parse.parse_qs(url.query)

    def send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
             headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class LocalServer:
    """`handler` served on 127.0.0.1 at a free port, each request in its own thread, until `stop()`."""

    def __init__(self, handler: type[QuietHandler], name: str) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, name=name, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
