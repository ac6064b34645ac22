"""The local console in a real browser (headless Chromium through its system chromedriver): open it,
send "hello" and see the echo artifact stream in, answer "ask me", cancel a "sleep 20", open the
task's timeline, read the card. A screenshot of each step is kept in the test's tmp_path."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_serverless.config import Settings
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.console import CONSOLE_PATH, with_console
from testkit.served import served

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 30.0
"""Hang guard for each step (seconds); never a measured expectation."""

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="no chromium/chromedriver: `make browser` installs them"
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def console_url() -> Iterator[str]:
    """The gateway app with the console, on 127.0.0.1 (a free port), over a memory runtime."""
    with serve_console(Settings(store="memory")) as url:
        yield url


@contextlib.contextmanager
def serve_console(settings: Settings) -> Iterator[str]:
    """The console's URL, served over a memory runtime of ``settings`` until the block ends."""
    runtime: Runtime = build_runtime(settings)
    try:
        with served(with_console(create_app(runtime), lambda: runtime)) as base:
            yield f"{base}{CONSOLE_PATH}/"
    finally:
        runtime.queue.shutdown()  # type: ignore[attr-defined]


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


@contextlib.contextmanager
def chromium(*flags: str) -> Iterator[WebDriver]:
    """Headless Chromium with a profile of its own, and ``flags`` besides the usual ones."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="console-chromium-")
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
        *flags,
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _until(driver: WebDriver, what: str, check: object) -> object:
    def ready(d: WebDriver) -> object:
        try:
            return check(d)  # type: ignore[operator]
        except StaleElementReferenceException:
            return False

    return WebDriverWait(driver, WAIT).until(ready, message=what)


def _state(driver: WebDriver) -> str:
    return str(driver.find_element(By.ID, "chat-state").get_attribute("data-state"))


def _say(driver: WebDriver, text: str) -> None:
    box = driver.find_element(By.ID, "chat-input")
    box.send_keys(text)
    driver.find_element(By.ID, "send").click()


def _text_of(driver: WebDriver, css: str) -> str:
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, css))


def test_the_console_story(console_url: str, browser: WebDriver, tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()

    def shot(name: str) -> None:
        assert browser.save_screenshot(str(shots / f"{name}.png"))

    # Given the console, open on the local agent
    browser.get(console_url)
    _until(browser, "the card read", lambda d: "A2A 1.0" in d.find_element(By.ID, "agent-status").text)
    shot("01-open")

    # When I say hello, the echo artifact streams in and the task completes
    _say(browser, "hello")
    _until(browser, "the echo artifact", lambda d: "Echo: hello" in _text_of(d, '.artifact[data-name="echo"]'))
    _until(browser, "the task completed", lambda d: _state(d) == "TASK_STATE_COMPLETED")
    shot("02-hello")

    # When I say "ask me", the agent asks my name; my answer completes the same task
    _say(browser, "ask me")
    _until(browser, "the question", lambda d: _state(d) == "TASK_STATE_INPUT_REQUIRED")
    assert "What is your name?" in _text_of(browser, ".status-message")
    asked = browser.find_element(By.ID, "chat-task-id").text
    _say(browser, "Ada")
    _until(
        browser, "the greeting", lambda d: "Nice to meet you, Ada!" in _text_of(d, '.artifact[data-name="greeting"]')
    )
    _until(browser, "the multi-turn task completed", lambda d: _state(d) == "TASK_STATE_COMPLETED")
    assert browser.find_element(By.ID, "chat-task-id").text == asked
    shot("03-ask-me")

    # When I start "sleep 20" and cancel it while it works, it ends CANCELED
    _say(browser, "sleep 20")
    _until(browser, "the sleep working", lambda d: _state(d) == "TASK_STATE_WORKING")
    sleeper = browser.find_element(By.ID, "chat-task-id").text
    cancel = browser.find_element(By.ID, "cancel")
    assert cancel.is_displayed()
    cancel.click()
    _until(browser, "the task canceled", lambda d: _state(d) == "TASK_STATE_CANCELED")
    _until(browser, "the cancel button gone", lambda d: not d.find_element(By.ID, "cancel").is_displayed())
    shot("04-cancel")

    # When I open the task list, my three tasks are there; the canceled one's timeline shows its log
    browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="tasks"]').click()
    _until(browser, "three tasks listed", lambda d: len(d.find_elements(By.CSS_SELECTOR, "#tasks-table tbody tr")) == 3)
    browser.find_element(By.CSS_SELECTOR, f'#tasks-table tr[data-task-id="{sleeper}"] .open-timeline').click()
    _until(browser, "the timeline", lambda d: d.find_element(By.ID, "timeline-task").text == sleeper)
    _until(browser, "the events", lambda d: "TASK_STATE_CANCELED" in _text_of(d, "#timeline-table tbody tr"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#timeline-table tbody tr")
    seqs = [row.find_elements(By.TAG_NAME, "td")[0].text for row in rows]
    assert seqs == [str(n) for n in range(1, len(rows) + 1)]
    assert rows[0].find_elements(By.TAG_NAME, "td")[2].text == "task"
    shot("05-timeline")

    # And the card is rendered, with no problems found
    browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="card"]').click()
    _until(browser, "the interfaces probed", lambda d: "probing" not in _text_of(d, "#card-interfaces li"))
    assert _text_of(browser, "#card-problems li") == "none found"
    assert "a2a-serverless demo agent" in browser.find_element(By.ID, "card-name").text
    shot("06-card")

    # And the page broke no rule of its Content-Security-Policy, and logged no error (its card
    # probes included: each is a read that succeeds)
    log = browser.get_log("browser")
    assert not [entry for entry in log if "Content Security Policy" in entry["message"]]
    assert [e["message"] for e in log if e["level"] == "SEVERE"] == []
