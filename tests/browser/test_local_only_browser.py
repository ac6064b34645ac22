"""A web page cannot drive the developer's local stack, in headless Chromium against the real
``a2a-serverless dev``:

* a page of another origin (a server on another port of 127.0.0.1) sends the requests a browser
  lets it send without asking (a text/plain POST of a message over JSON-RPC and REST, a POST to the
  dev API's redrive and proxy, a CORS GET of the task list): the stack refuses each, 403, and stores
  nothing;
* a page whose name points at 127.0.0.1 (DNS rebinding, played by Chromium's host resolver rules)
  is same-origin with the stack's port: the stack and moto answer its name with a refusal, so its
  own requests read nothing, store nothing and never reach moto.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from browser.test_console_browser import CHROMEDRIVER, CHROMIUM, WAIT, _until, chromium
from testkit.devstack import DevStack
from testkit.served import served

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="no chromium/chromedriver: `make browser` installs them"
)

pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

REBOUND = "evil.example"

ATTACK = """<!doctype html><html><body><script>
const stack = STACK, message = MESSAGE;
const body = (value) =>
  ({ method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: JSON.stringify(value) });
Promise.allSettled([
  fetch(`${stack}/?A2A-Version=1.0`, body({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } })),
  fetch(`${stack}/message:send?A2A-Version=1.0`, body({ message })),
  fetch(`${stack}/_console/api/dead-letters:redrive`, { method: "POST", mode: "no-cors" }),
  fetch(`${stack}/_console/api/proxy`, body({})),
  fetch(`${stack}/tasks?A2A-Version=1.0`, { mode: "cors" }),
]).then(() => { document.title = "done"; });
</script></body></html>"""


def attacker_site(page: str) -> Starlette:
    """A site on another origin (another port of 127.0.0.1, once served) with one page."""
    return Starlette(routes=[Route("/attack.html", lambda _: HTMLResponse(page))])


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevStack]:
    with DevStack.running(tmp_path_factory.mktemp("local-only-browser")) as running:
        yield running


def _message(context_id: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "contextId": context_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}


def _stored(stack: DevStack, context_id: str) -> int:
    answer = httpx.get(f"{stack.base}/tasks", params={"contextId": context_id}, headers={"A2A-Version": "1.0"})
    assert answer.status_code == 200, answer.text
    return len(answer.json()["tasks"])


def _answered(stack: DevStack, request: str) -> list[str]:
    """The statuses the stack's access log gives ``request`` (``"POST /path"``; the log quotes ``:``)."""
    line = re.compile(rf'"{re.escape(request)} HTTP/1\.1" (\d+)')
    return [m.group(1) for text in list(stack.lines) if (m := line.search(unquote(text)))]


def test_a_page_of_another_origin_cannot_drive_the_local_stack(stack: DevStack, tmp_path: Path) -> None:
    # Given a page on another origin, open in the developer's browser
    context = str(uuid.uuid4())
    page = ATTACK.replace("STACK", json.dumps(stack.base)).replace("MESSAGE", json.dumps(_message(context)))
    requests = [
        "POST /?A2A-Version=1.0",
        "POST /message:send?A2A-Version=1.0",
        "POST /_console/api/dead-letters:redrive",
        "POST /_console/api/proxy",
        "GET /tasks?A2A-Version=1.0",
    ]
    with served(attacker_site(page)) as site, chromium() as browser:
        # When it sends its requests to the local stack
        browser.get(f"{site}/attack.html")
        _until(browser, "the page's requests settled", lambda d: d.title == "done")
        assert browser.save_screenshot(str(tmp_path / "attack.png"))
        # Then the stack saw each (the page's Origin on it) and refused it
        _until(browser, "the stack's access log", lambda d: all(_answered(stack, r) for r in requests))
    assert {request: _answered(stack, request) for request in requests} == {request: ["403"] for request in requests}
    # And nothing was stored
    assert _stored(stack, context) == 0


def test_a_rebound_name_reads_and_stores_nothing(stack: DevStack, tmp_path: Path) -> None:
    port, moto_port = stack.port, stack.moto_port
    context = str(uuid.uuid4())
    # Given a page on a name the attacker pointed at 127.0.0.1, on the stack's port
    with chromium(f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1") as browser:
        browser.get(f"http://{REBOUND}:{port}/_console/")
        refusal = browser.find_element(By.TAG_NAME, "body").text
        assert "DNS rebinding" in refusal
        assert browser.find_elements(By.ID, "chat-input") == []  # not the console
        assert browser.save_screenshot(str(tmp_path / "rebound.png"))
        # When its script calls the stack as its own origin (so it could read the answers)
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": _message(context)}}
        calls = [
            ["GET", "/tasks?A2A-Version=1.0", {}, None],
            ["POST", "/", {"Content-Type": "application/json", "A2A-Version": "1.0"}, json.dumps(send)],
            ["GET", "/_console/api/dead-letters", {"X-A2A-Console": "1"}, None],
            ["POST", "/_console/api/dead-letters:redrive", {"X-A2A-Console": "1"}, None],
            [
                "GET",
                "/_console/api/proxy",
                {"X-A2A-Console": "1", "X-A2A-Target": f"http://127.0.0.1:{moto_port}/moto-api/data.json"},
                None,
            ],
        ]
        browser.set_script_timeout(WAIT)
        statuses = browser.execute_async_script(
            """const [calls, done] = arguments;
            Promise.all(calls.map(([method, path, headers, body]) =>
              fetch(path, { method, headers, body: body ?? undefined }).then((r) => r.status, (e) => String(e))
            )).then(done);""",
            calls,
        )
        # And it opens moto's state dump on its name, at moto's port
        browser.get(f"http://{REBOUND}:{moto_port}/moto-api/data.json")
        dump = browser.find_element(By.TAG_NAME, "body").text
    # Then every answer is a refusal, moto's included, and nothing was stored
    assert statuses == [403] * len(calls)
    assert "DNS rebinding" in dump
    assert "a2a-local" not in dump
    assert _stored(stack, context) == 0
