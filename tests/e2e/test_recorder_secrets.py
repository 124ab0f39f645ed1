"""The recorder keeps no secret (issue 26), attacked in real headless Chromium with the real extension: a
person records on a page (127.0.0.1) that reveals its password field with its own "Show password" button
before the person types on, draws a PIN as discs with CSS only, marks a one-time code by `autocomplete` and
names a card's security code only by its label. Every one of those values stays in the page: not in the
popup's steps, not in `chrome.storage.session`, not in the saved adapter file, not in the tool's schema that
`tools/list` gives the model; the plain note typed beside them is recorded (so the recorder did record).
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from harness.extension_pages import activate
from test_recorder import Recorder, adapter_file

pytestmark = pytest.mark.anyio

PASSWORD = "hunter2"
SECRETS = {
    "password after it was revealed": PASSWORD + "RevealedQ",
    "CSS-masked PIN": "PinQ7xz",
    "one-time code": "OtpZ9kw",
    "CVC by its label": "CvcW3mv",
}
NOTE = "leave it at the door"


def assert_no_secret(where: str, text: str) -> None:
    leaked = [what for what, value in SECRETS.items() if value in text]
    assert PASSWORD not in text and not leaked, f"{where} holds {leaked or 'the password'}: {text}"


async def test_a_field_that_was_ever_secret_stays_secret_and_no_secret_leaves_the_page(
    unadapted_command, fixture_server, launch_chromium, extension_dir, extension_id
):
    c = unadapted_command
    url = fixture_server.url("plain", "record/secrets.html")
    origin = fixture_server.origin
    run_cli(c, "allow", origin)
    browser = await launch_chromium(extension_dir=extension_dir, url=url)
    rec = await Recorder.beside(browser, extension_id, url)
    cdp, page = rec.cdp, rec.page

    async with c.session() as tabwire:
        await activate(cdp, page)
        await rec.start()
        await rec.real_click("#field1")
        await rec.type(PASSWORD)
        await rec.real_click("#show")  # the page's own button: the field is plain text from now on
        assert await cdp.evaluate(page, "document.querySelector('#field1').type") == "text"
        await rec.real_click("#field1")
        await cdp.evaluate(page, "(f => f.setSelectionRange(f.value.length, f.value.length))(document.querySelector('#field1'))")
        await rec.type("RevealedQ")
        for field, value in (("#digits", SECRETS["CSS-masked PIN"]), ("#sms", SECRETS["one-time code"]),
                             ("#check3", SECRETS["CVC by its label"]), ("#note", NOTE)):
            await rec.real_click(field)
            await rec.type(value)
        values = await cdp.evaluate(page, "[...document.querySelectorAll('input')].map((i) => i.value)")
        assert values == [SECRETS["password after it was revealed"], *list(SECRETS.values())[1:], NOTE], values

        dom = await rec.when(lambda d: any("Note" in line for line in d["lines"]), "the note's step")
        assert any(NOTE in line for line in dom["lines"]), dom
        secret_lines = [line for line in dom["lines"] if "a password (not recorded" in line]
        named = ("Sign-in word", "Your digits", "Sent to your phone", "CVC")
        for name in named:
            assert any(f'name="{name}"' in line for line in secret_lines), (name, dom["lines"])
        assert_no_secret("the popup's steps", json.dumps(dom))

        session = await cdp.evaluate(rec.popup, "chrome.storage.session.get(null).then(JSON.stringify)", await_promise=True)
        assert NOTE in session, session
        assert_no_secret("chrome.storage.session", session)

        dom = await rec.stop_and_save("pay")
        assert dom["saved"], dom
        file = adapter_file(c, origin)
        text = file.read_text()
        assert NOTE in text, text
        assert_no_secret("the adapter file", text)
        tool = f"{file.stem}_pay"
        await tabwire.wait_for_tools(tool)
        listed = (await tabwire.tools())[tool]
        assert_no_secret("the tool in tools/list", listed.model_dump_json())
        assert NOTE in listed.model_dump_json(), listed
