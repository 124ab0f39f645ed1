"""A small server-rendered app whose forms POST and redirect, slowly on purpose: the answer to a form comes
300-800 ms after the request (then `303 See Other`), so a call that answers before its page has landed, or
a call that arrives while the tab still loads, shows every time. Its JSON list (`/items.json`) is the oracle.

Pages (every page has the search form `#search` with `#q`):
- `/new`            the create form (`#title`, `#create`), plus buttons whose forms go elsewhere:
                    `#hang` (a POST never answered), `#away` (another origin), `#plain` (a page no adapter
                    serves), and `#js-go` (a script that fetches, then sets `location`);
- `POST /create`    stores the item and answers `303` to `/item/<id>`; an empty title answers `200` with the
                    form again and `.error` saying why;
- `/item/<id>`      the item (`#title`, `#id`);
- `/search?q=`      the items whose title contains q (`#results li`);
- `/kept`           a page the browser may keep in its back/forward cache (no `Cache-Control: no-store`).
"""

from __future__ import annotations

import html
import json
import random
import threading
import time
import urllib.parse
import urllib.request

from .local_http import LocalServer, QuietHandler


def _page(title: str, body: str) -> bytes:
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body><form id="search" action="/search"><input id="q" name="q"><button>Search</button></form>
{body}</body></html>""".encode()


class FormsApp:
    """Serve the app on 127.0.0.1 (a free port) until `stop()`; `#away` posts to `other_origin` (set it to
    another instance's `origin`)."""

    def __init__(self, slow_ms: tuple[int, int] = (300, 800)) -> None:
        self.items: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.slow_ms = slow_ms
        self.posts = 0
        app = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                url, query = self.target()
                if url.path == "/new":
                    self.send(200, app.new_page(""))
                elif url.path.startswith("/item/"):
                    item = app.item(url.path.rsplit("/", 1)[1])
                    if item is None:
                        self.send(404, _page("Not found", "<h1>No such item</h1>"))
                    else:
                        self.send(200, _page(item["title"], f'<h1 id="title">{html.escape(item["title"])}</h1>'
                                             f'<span id="id">{item["id"]}</span>'))
                elif url.path == "/search":
                    q = query.get("q", [""])[0]
                    with app.lock:
                        hits = [i for i in app.items if q in i["title"]]
                    rows = "".join(f'<li><a href="/item/{i["id"]}">{html.escape(i["title"])}</a></li>' for i in hits)
                    self.send(200, _page(f"Search {q}", f'<ul id="results">{rows}</ul>'))
                elif url.path == "/items.json":
                    with app.lock:
                        self.send(200, json.dumps(app.items).encode(), "application/json")
                elif url.path == "/kept":
                    body = _page("Kept", "<h1>Kept</h1>")
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif url.path == "/ping":
                    self.send(200, b"{}", "application/json")
                else:
                    self.send(404, _page("Not found", "<h1>Not found</h1>"))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                path = urllib.parse.urlsplit(self.path).path
                with app.lock:
                    app.posts += 1
                if path == "/hang":
                    app.stopping.wait()  # never answered while the test runs
                    return
                time.sleep(random.uniform(*app.slow_ms) / 1000)
                title = form.get("title", [""])[0].strip()
                if path != "/create":
                    self.send(404, _page("Not found", "<h1>Not found</h1>"))
                elif not title:
                    self.send(200, app.new_page("A title is required."))
                else:
                    with app.lock:
                        item = {"id": len(app.items) + 1, "title": title}
                        app.items.append(item)
                    self.send(303, b"", headers={"Location": f"/item/{item['id']}"})

        self._server = LocalServer(Handler, "forms-app")
        self.origin = self._server.origin
        self.other_origin = self.origin

    def new_page(self, error: str) -> bytes:
        other = self.other_origin
        warning = f'<p class="error">{html.escape(error)}</p>' if error else ""
        return _page("New item", f"""{warning}
<form id="new" method="post" action="/create"><input id="title" name="title">
  <button id="create">Create</button></form>
<form method="post" action="/hang"><input type="hidden" name="title" value="x"><button id="hang">Hang</button></form>
<form method="post" action="{other}/create"><input type="hidden" name="title" value="away">
  <button id="away">Away</button></form>
<form method="get" action="/plain/"><button id="plain">Plain</button></form>
<button id="js-go" onclick="fetch('/ping').then(() => {{ location.href = '/search?q=' }})">Go</button>""")

    def item(self, item_id: str) -> dict | None:
        with self.lock:
            return next((i for i in self.items if str(i["id"]) == item_id), None)

    def url(self, path: str) -> str:
        return self.origin + path

    def listed(self) -> list[dict]:
        """The items as the app's own API lists them (`/items.json`): the tests' oracle."""
        with urllib.request.urlopen(self.url("/items.json"), timeout=5) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        self.stopping.set()
        self._server.stop()
