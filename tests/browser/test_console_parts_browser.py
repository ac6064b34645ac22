"""What the console does with an agent's file parts, in headless Chromium: an image the agent names
by URL on another host is not fetched until the viewer clicks (no beacon: the page's CSP takes
images from its own origin and data:/blob: only, and the part is shown as a link to open); an
active type (HTML) is never linked for viewing, whether at a URL or as bytes; images whose bytes the
part carries are still shown inline. A server on another port of 127.0.0.1 stands in for the
agent's external host and records every request it gets."""

from __future__ import annotations

import base64
import struct
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from a2a_serverless.config import Settings
from a2a_serverless.execution.api import AgentExecutor, EventQueue, RequestContext
from a2a_serverless.execution.updater import TaskUpdater
from a2a_serverless.models import Part

from .test_console_browser import WAIT, _say, _state, _until, browser, serve_console

__all__ = ["browser"]  # the fixture, shared with the console's story

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402


def _png() -> bytes:
    """A 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


PNG = _png()
PAGE = b"<html><body><script>document.title = 'ran'</script></body></html>"


class ExternalHost(ThreadingHTTPServer):
    """The agent's host: serves an image and a page, never cached, and keeps the paths asked for."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths: list[str] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: ExternalHost

    def do_GET(self) -> None:
        self.server.paths.append(self.path)
        body, media_type = (PNG, "image/png") if self.path.endswith(".png") else (PAGE, "text/html")
        self.send_response(200)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class FilesAgent(AgentExecutor):
    """Answers the base URL it is sent with an artifact of file parts: at that host and inline."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        host = context.get_user_input().strip()
        await updater.start_work()
        parts = [
            Part(url=f"{host}/beacon.png", filename="beacon.png", media_type="image/png"),
            Part(url=f"{host}/page.html", filename="page.html", media_type="text/html"),
            Part(raw=PAGE, filename="inline.html", media_type="text/html"),
            Part(raw=PNG, filename="dot.png", media_type="image/png"),
            Part(url="data:image/png;base64," + base64.b64encode(PNG).decode(), media_type="image/png"),
        ]
        await updater.add_artifact(parts, name="files")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


@pytest.fixture
def external() -> Iterator[ExternalHost]:
    server = ExternalHost()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


@pytest.fixture
def console_url() -> Iterator[str]:
    with serve_console(Settings(store="memory", executor=f"{__name__}:FilesAgent")) as url:
        yield url


def _loaded(driver: WebDriver, css: str) -> bool:
    images = driver.find_elements(By.CSS_SELECTOR, css)
    return len(images) == 1 and bool(
        driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth === 1", images[0])
    )


def test_an_agents_files_are_shown_without_fetching_from_its_host_or_linking_active_types(
    console_url: str, browser: WebDriver, external: ExternalHost
) -> None:
    # Given the console, and an agent that answers with files at its host and inline
    browser.get(console_url)
    _until(browser, "the card read", lambda d: "A2A 1.0" in d.find_element(By.ID, "agent-status").text)

    # When its answer is shown
    _say(browser, external.base)
    _until(browser, "the task completed", lambda d: _state(d) == "TASK_STATE_COMPLETED")
    files = '.artifact[data-name="files"]'
    for scheme in ("blob", "data"):
        _until(browser, f"the {scheme}: image shown", lambda d, s=scheme: _loaded(d, f'{files} img[src^="{s}:"]'))

    # Then the images whose bytes the page holds are inline (a blob: and a data: URL), and no image
    # points at the agent's host: its image is a link to open, and its host was asked for nothing
    sources = [img.get_attribute("src") or "" for img in browser.find_elements(By.CSS_SELECTOR, f"{files} img")]
    assert sorted(src.split(":", 1)[0] for src in sources) == ["blob", "data"], sources
    opener = browser.find_element(By.CSS_SELECTOR, f'{files} a[href="{external.base}/beacon.png"]')
    assert "not loaded until you click" in opener.text
    assert opener.get_attribute("target") == "_blank"
    assert external.paths == []

    # And the agent's page (text/html at its URL) is not linked at all: named, with its URL as text
    assert browser.find_elements(By.CSS_SELECTOR, f'{files} a[href="{external.base}/page.html"]') == []
    assert (
        "page.html (text/html, at a URL the console does not open)" in browser.find_element(By.CSS_SELECTOR, files).text
    )
    # and the page whose bytes it holds is a download only (a blob of the console's origin)
    (inline,) = [a for a in browser.find_elements(By.CSS_SELECTOR, f"{files} a.download") if "inline.html" in a.text]
    assert inline.get_attribute("download") == "inline.html"
    assert str(inline.get_attribute("href")).startswith("blob:")

    # When the viewer clicks the image's link, it opens, from the agent's host, once
    opener.click()
    _until(browser, "the image opened", lambda d: [p for p in external.paths if p != "/favicon.ico"] == ["/beacon.png"])

    # And the page broke no rule of its Content-Security-Policy (nothing was even tried)
    log = browser.get_log("browser")
    assert not [entry for entry in log if "Content Security Policy" in entry["message"]], log


def test_the_pages_policy_refuses_an_image_from_another_host(
    console_url: str, browser: WebDriver, external: ExternalHost
) -> None:
    # Given the console
    browser.get(console_url)
    _until(browser, "the card read", lambda d: "A2A 1.0" in d.find_element(By.ID, "agent-status").text)

    # When anything in the page makes an image of another host's URL
    browser.execute_script(
        "const img = document.createElement('img'); img.id = 'beacon'; img.src = arguments[0];"
        " document.body.append(img);",
        f"{external.base}/beacon.png",
    )
    _until(
        browser, "the image settled", lambda d: d.execute_script("return document.getElementById('beacon').complete")
    )

    # Then the browser refused it (its Content-Security-Policy), and the host was asked for nothing
    assert browser.execute_script("return document.getElementById('beacon').naturalWidth") == 0
    assert external.paths == []
    assert [e for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
