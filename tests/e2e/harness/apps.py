"""TiddlyWiki and MailDev as the tests run them: installed under the cache by scripts/test-env.sh, started
on free 127.0.0.1 ports with their output in a log file, ready when their HTTP API answers, stopped when
the test ends. Their HTTP APIs are the oracles the tests check tool results against.
"""

from __future__ import annotations

import json
import os
import signal
import smtplib
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from .waiting import wait_for_sync


def http_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


class App:
    """A server process in its own process group, so stopping it stops its children too."""

    def __init__(self, args: list[str], log_path: Path, cwd: Path) -> None:
        self.log_file = open(log_path, "ab")
        self.process = subprocess.Popen(
            args, stdout=self.log_file, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True
        )

    def check_alive(self) -> None:
        code = self.process.poll()
        assert code is None, f"{self.process.args[0]} exited with {code} (see its log)"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log_file.close()


class TiddlyWiki(App):
    def __init__(self, binary: Path, wiki_dir: Path, port: int, log_path: Path) -> None:
        subprocess.run([str(binary), str(wiki_dir), "--init", "server"], check=True, capture_output=True, timeout=60)
        super().__init__(
            [str(binary), str(wiki_dir), "--listen", "host=127.0.0.1", f"port={port}"], log_path, wiki_dir.parent
        )
        self.base = f"http://127.0.0.1:{port}"

    def wait_ready(self, timeout: float = 20) -> None:
        def ready() -> bool:
            self.check_alive()
            return isinstance(self.tiddlers(), list)

        wait_for_sync(ready, timeout=timeout, what="TiddlyWiki to answer /recipes/default/tiddlers.json",
                      ignore=(OSError,))

    def tiddlers(self) -> list[dict[str, Any]]:
        return http_json(f"{self.base}/recipes/default/tiddlers.json")

    def put_tiddler(self, title: str, **fields: str) -> None:
        """Create or replace a tiddler through TiddlyWiki's HTTP API, as another client of the wiki would."""
        request = urllib.request.Request(
            f"{self.base}/recipes/default/tiddlers/{urllib.parse.quote(title, safe='')}",
            data=json.dumps({"title": title, **fields}).encode(),
            method="PUT",
            headers={"Content-Type": "application/json", "X-Requested-With": "TiddlyWiki"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status in (200, 204), response.status

    def tiddler(self, title: str) -> dict[str, Any] | None:
        try:
            return http_json(f"{self.base}/recipes/default/tiddlers/{urllib.parse.quote(title, safe='')}")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise


class MailDev(App):
    def __init__(self, binary: Path, smtp_port: int, web_port: int, mail_dir: Path, log_path: Path) -> None:
        mail_dir.mkdir()
        super().__init__(
            [str(binary), "--ip", "127.0.0.1", "--smtp", str(smtp_port), "--web", str(web_port),
             "--mail-directory", str(mail_dir)],
            log_path,
            mail_dir.parent,
        )
        self.smtp_port = smtp_port
        self.base = f"http://127.0.0.1:{web_port}"

    def wait_ready(self, timeout: float = 20) -> None:
        def ready() -> bool:
            self.check_alive()
            return isinstance(self.emails(), list)

        wait_for_sync(ready, timeout=timeout, what="MailDev to answer GET /email", ignore=(OSError,))

    def emails(self) -> list[dict[str, Any]]:
        return http_json(f"{self.base}/email")

    def email(self, email_id: str) -> dict[str, Any]:
        return http_json(f"{self.base}/email/{email_id}")

    def send(self, sender: str, subject: str, body: str, to: str = "bob@example.com") -> None:
        message = EmailMessage()
        message["From"] = sender
        message["To"] = to
        message["Subject"] = subject
        message.set_content(body)
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=10) as smtp:
            smtp.send_message(message)


def _http_status(url: str) -> int:
    """The status `url` answers with, redirects not followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


class Trac(App):
    """Trac 1.6 (an issue tracker) from its venv under the cache: a fresh environment in `env_dir` where
    anonymous may create and change tickets, served at `/` (tracd -s). Oracle: its sqlite database."""

    def __init__(self, venv: Path, env_dir: Path, port: int, log_path: Path) -> None:
        admin = str(venv / "bin" / "trac-admin")
        subprocess.run([admin, str(env_dir), "initenv", "Tabwire", "sqlite:db/trac.db"], check=True,
                       capture_output=True, timeout=120)
        subprocess.run([admin, str(env_dir), "permission", "add", "anonymous", "TICKET_CREATE", "TICKET_MODIFY"],
                       check=True, capture_output=True, timeout=120)
        super().__init__([str(venv / "bin" / "tracd"), "-s", "-b", "127.0.0.1", "-p", str(port), str(env_dir)],
                         log_path, env_dir.parent)
        self.base = f"http://127.0.0.1:{port}"
        self.db = env_dir / "db" / "trac.db"

    def wait_ready(self, timeout: float = 30) -> None:
        def ready() -> bool:
            self.check_alive()
            return _http_status(self.base + "/") == 200

        wait_for_sync(ready, timeout=timeout, what="tracd to answer GET /", ignore=(OSError,))

    def tickets(self) -> list[tuple[int, str, str]]:
        """(id, summary, description) of every ticket, from Trac's own database."""
        import sqlite3

        with sqlite3.connect(self.db) as db:
            return db.execute("select id, summary, description from ticket order by id").fetchall()

    def comments(self, ticket: int) -> list[str]:
        import sqlite3

        with sqlite3.connect(self.db) as db:
            rows = db.execute("select newvalue from ticket_change where ticket = ? and field = 'comment' order by time",
                              (ticket,)).fetchall()
        return [r[0] for r in rows]


class Moin(App):
    """MoinMoin 2.0.0b5 (a wiki) from its venv under the cache: a fresh instance in `wiki_dir` where anyone
    may read, write and create, without edit locks. Oracle: `/+get/<page>`, the page's raw text."""

    def __init__(self, venv: Path, wiki_dir: Path, port: int, log_path: Path) -> None:
        moin = str(venv / "bin" / "moin")
        subprocess.run([moin, "create-instance", "--path", str(wiki_dir)], check=True, capture_output=True,
                       timeout=120)
        config = wiki_dir / "wikiconfig.py"
        text = config.read_text()
        for old, new in (
            ('default="YOUR-TRUSTED-EDITORS-GROUP:read,write,create All:read"', 'default="All:read,write,create"'),
            ('    edit_locking_policy = "lock"', "    edit_locking_policy = None"),
        ):
            assert old in text, f"{config} no longer has {old!r}"
            text = text.replace(old, new)
        config.write_text(text)
        subprocess.run([moin, "index-create"], check=True, capture_output=True, timeout=120, cwd=wiki_dir)
        super().__init__([moin, "run", "--host", "127.0.0.1", "--port", str(port)], log_path, wiki_dir)
        self.base = f"http://127.0.0.1:{port}"

    def wait_ready(self, timeout: float = 30) -> None:
        def ready() -> bool:
            self.check_alive()
            return _http_status(self.base + "/") == 302

        wait_for_sync(ready, timeout=timeout, what="moin to answer GET / (302 to its home page)", ignore=(OSError,))

    def raw(self, page: str) -> str | None:
        """The page's current text as saved, through the wiki's own export URL (`None`: no such page)."""
        try:
            with urllib.request.urlopen(f"{self.base}/+get/{urllib.parse.quote(page)}", timeout=5) as response:
                return response.read().decode()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise
