"""A task's trace in the console (headless Chromium): its timeline shows a waterfall per turn, the
call, the run, the agent and the commits nested in tree order with their processes and bars, and a
crashed run's spans marked as errors. The app is served in this process with tracing on (``file``,
as the local stack runs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from a2a_serverless import telemetry
from a2a_serverless.config import Settings
from browser.test_console_browser import CHROMEDRIVER, CHROMIUM, _until, serve_console
from browser.test_console_browser import browser as browser  # the fixture, shared with the console's story

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="no chromium/chromedriver: `make browser` installs them"
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

CONSOLE_SUFFIX = "/_console/"


@pytest.fixture
def traced_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv(telemetry.SWITCH_ENV, "file")
    monkeypatch.setenv(telemetry.DIR_ENV, str(tmp_path / "spans"))
    telemetry.reset()
    try:
        with serve_console(Settings(store="memory")) as url:
            yield url
    finally:
        monkeypatch.delenv(telemetry.SWITCH_ENV)
        telemetry.reset()


def send(console_url: str, text: str) -> str:
    base = console_url.removesuffix(CONSOLE_SUFFIX)
    message = {"messageId": f"m-{text}", "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer = httpx.post(base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=30).json()
    return str(answer["result"]["task"]["id"])


def open_timeline(browser: WebDriver, task_id: str) -> None:
    browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="tasks"]').click()
    row = f'#tasks-table tr[data-task-id="{task_id}"] .open-timeline'
    _until(browser, "the task listed", lambda d: d.find_elements(By.CSS_SELECTOR, row))
    browser.find_element(By.CSS_SELECTOR, row).click()
    _until(browser, "the timeline", lambda d: d.find_element(By.ID, "timeline-task").text == task_id)


def span_rows(browser: WebDriver) -> list[str]:
    return [str(r.get_attribute("data-name")) for r in browser.find_elements(By.CSS_SELECTOR, ".trace-span")]


def test_a_task_s_timeline_shows_its_trace_as_a_waterfall(
    traced_console: str, browser: WebDriver, tmp_path: Path
) -> None:
    # Given a completed task and a crashed one
    hello, failed = send(traced_console, "hello"), send(traced_console, "fail")
    browser.get(traced_console)

    # When I open the completed task's timeline (again, until its run's spans are written)
    agent = "invoke_agent DemoAgentExecutor"

    def traced(task_id: str) -> bool:
        open_timeline(browser, task_id)
        _until(browser, "the trace read", lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-trace > *"))
        return {"SendMessage", "send work", "process work", agent} <= set(span_rows(browser))

    _until(browser, "the task's trace", lambda d: traced(hello))

    # Then one turn is one waterfall, in tree order: the call, the enqueue, the run and under it the agent
    assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline-trace .trace")) == 1
    names = span_rows(browser)
    assert names[:3] == ["SendMessage", "send work", "process work"]
    assert agent in names[3:]
    bars = browser.find_elements(By.CSS_SELECTOR, ".trace-span .span-bar")
    assert len(bars) == len(names)
    assert all(bar.size["width"] > 0 for bar in bars)
    assert browser.save_screenshot(str(tmp_path / "trace.png"))

    # And the crashed run's agent span is shown as an error
    _until(browser, "the crashed task's trace", lambda d: traced(failed))
    status = browser.find_element(By.CSS_SELECTOR, f'.trace-span[data-name="{agent}"]').get_attribute("data-status")
    assert status == "ERROR"

    # And the page broke no rule of its Content-Security-Policy (the bars are placed through CSSOM)
    log = browser.get_log("browser")
    assert not [entry for entry in log if "Content Security Policy" in entry["message"]]
    assert [e["message"] for e in log if e["level"] == "SEVERE"] == []
