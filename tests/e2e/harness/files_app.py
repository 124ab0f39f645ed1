"""A small app that takes files, for the upload tests: what it received is the oracle.

Pages:
- `/upload`          a multipart form (`#single`: one file, `#many`: several, labelled "Attachments";
                     `#hidden`: a hidden input behind a "Choose a photo" label) sent with `#send`, and a
                     drop zone `#zone` whose page reads each dropped `File` (its bytes, hashed in the page),
                     lists them in `#dropped`, POSTs them to `/dropped`, then sets `data-dropped`;
- `POST /upload`     stores every file part and answers `303` to `/upload?sent=N`;
- `POST /dropped`    stores the files the drop zone read;
- `/received.json`   every file received: field, file name, size, sha256 (the page's own hash for drops).
- `/download/<name>` a binary file sent as an attachment (for download tests);
- `/downloads`       a page linking each of them (`#get-0`, `#get-1`… in `downloads` order).
"""

from __future__ import annotations

import hashlib
import html
import json
import threading
import urllib.parse

from .local_http import LocalServer, QuietHandler

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Files</title>
<style>#zone {{ width: 300px; height: 120px; border: 2px dashed #888; }}</style></head>
<body><h1>Send files</h1><p id="status">{status}</p>
<form id="form" method="post" action="/upload" enctype="multipart/form-data">
<p><input type="file" id="single" name="single" aria-label="One file"></p>
<p><label for="many">Attachments</label> <input type="file" id="many" name="many" multiple></p>
<p><label for="hidden">Choose a photo</label><input type="file" id="hidden" name="hidden" hidden></p>
<p id="chosen"></p>
<button id="send">Send</button></form>
<div id="zone" role="region" aria-label="Drop files here">Drop files here</div>
<ul id="dropped"></ul>
<script>
const chosen = document.getElementById("chosen");
for (const input of document.querySelectorAll("input[type=file]")) {{
  input.addEventListener("change", () => {{
    chosen.textContent = input.id + ": " + [...input.files].map((f) => f.name + " " + f.type).join(", ");
  }});
}}
const zone = document.getElementById("zone");
zone.addEventListener("dragover", (e) => e.preventDefault());
zone.addEventListener("drop", async (e) => {{
  e.preventDefault();
  const form = new FormData();
  const list = document.getElementById("dropped");
  for (const file of e.dataTransfer.files) {{
    const bytes = new Uint8Array(await file.arrayBuffer());
    const digest = await crypto.subtle.digest("SHA-256", bytes);
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    form.append("dropped", file, file.name);
    form.append("sha256", hex);
    const li = document.createElement("li");
    li.textContent = file.name + " " + bytes.length + " " + hex;
    list.append(li);
  }}
  await fetch("/dropped", {{ method: "POST", body: form }});
  document.getElementById("status").textContent = "dropped " + e.dataTransfer.files.length;
  zone.dataset.dropped = String(e.dataTransfer.files.length);
}});
</script></body></html>"""


def _parts(content_type: str, body: bytes) -> list[tuple[str, str | None, bytes]]:
    """The parts of a multipart/form-data body: (field, file name or None, bytes)."""
    boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    out = []
    for chunk in body.split(b"--" + boundary)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, data = chunk.lstrip(b"\r\n").partition(b"\r\n\r\n")
        disposition = next(
            (line.decode() for line in head.split(b"\r\n") if line.lower().startswith(b"content-disposition")), ""
        )
        params = {}
        for item in disposition.split(";")[1:]:
            key, _, value = item.strip().partition("=")
            params[key] = urllib.parse.unquote(value.strip('"'))
        out.append((params.get("name", ""), params.get("filename"), data[:-2] if data.endswith(b"\r\n") else data))
    return out


class FilesApp:
    """Serve the app on 127.0.0.1 (a free port) until `stop()`. `downloads` maps a name under
    `/download/` to the bytes it sends."""

    def __init__(self, downloads: dict[str, bytes] | None = None) -> None:
        self.received: list[dict] = []
        self.downloads: dict[str, bytes] = dict(downloads or {})
        self.lock = threading.Lock()
        app = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                url, query = self.target()
                if url.path == "/upload":
                    sent = query.get("sent", [""])[0]
                    status = f"received {sent} file(s)" if sent else "ready"
                    self.send(200, PAGE.format(status=status).encode())
                elif url.path == "/received.json":
                    with app.lock:
                        body = json.dumps(app.received).encode()
                    self.send(200, body, "application/json")
                elif url.path == "/downloads":
                    links = "".join(
                        f'<li><a id="get-{i}" href="/download/{urllib.parse.quote(name)}">{html.escape(name)}</a></li>'
                        for i, name in enumerate(app.downloads)
                    )
                    page = f'<!doctype html><html><head><meta charset="utf-8"><title>Downloads</title></head><body><ul>{links}</ul></body></html>'
                    self.send(200, page.encode())
                elif url.path.startswith("/download/"):
                    name = urllib.parse.unquote(url.path.removeprefix("/download/"))
                    data = app.downloads.get(name)
                    if data is None:
                        self.send(404, b"no such file")
                    else:
                        quoted = urllib.parse.quote(name)
                        self.send(200, data, "application/octet-stream",
                                  {"Content-Disposition": f"attachment; filename*=UTF-8''{quoted}"})
                else:
                    self.send(404, b"not found")

            def do_POST(self) -> None:  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                parts = _parts(self.headers.get("Content-Type", ""), body)
                files = [(field, name, data) for field, name, data in parts if name is not None]
                hashes = [data.decode() for field, _, data in parts if field == "sha256"]
                with app.lock:
                    for i, (field, name, data) in enumerate(files):
                        if not name and not data:
                            continue  # an input left empty sends an empty part
                        app.received.append({
                            "field": field,
                            "name": name,
                            "size": len(data),
                            "sha256": hashlib.sha256(data).hexdigest(),
                            "page_sha256": hashes[i] if i < len(hashes) else None,
                        })
                    count = sum(1 for _, name, data in files if name or data)
                if url.path == "/upload":
                    self.send(303, b"", headers={"Location": f"/upload?sent={count}"})
                elif url.path == "/dropped":
                    self.send(200, b"{}", "application/json")
                else:
                    self.send(404, b"not found")

        self.server = LocalServer(Handler, "files-app")
        self.port, self.origin = self.server.port, self.server.origin

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"

    def stop(self) -> None:
        self.server.stop()
