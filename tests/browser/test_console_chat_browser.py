"""The console's chat and card in a real browser (headless Chromium), for what a user of another agent
sees: an answer streamed in chunks of one artifact reads as one growing text; the input suggests the
demo's commands only to the demo; reading the card leaves no error in the browser's console."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import ClassVar

import pytest

from a2a_serverless.config import Settings
from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.json_types import JsonValue
from a2a_serverless.models import Part
from browser.test_console_browser import CHROMEDRIVER, CHROMIUM, _say, _state, _text_of, _until, serve_console
from browser.test_console_browser import browser as browser  # the fixture, shared with the console's story
from browser.test_console_browser import console_url as console_url  # the demo agent's console

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="no chromium/chromedriver: `make browser` installs them"
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

CHUNKS = ["Once ", "upon ", "a time, ", "an agent ", "streamed ", "its answer."]
DEMO_PLACEHOLDER = "Say something (the demo agent knows: hello, ask me, sleep 20)"


class StreamingAgent(AgentExecutor):
    """Answers in chunks of one artifact, as a model streams its tokens: the first chunk names the
    artifact, each next one is appended to it, the last says so."""

    card: ClassVar[Mapping[str, JsonValue]] = {
        "name": "Streaming agent",
        "description": "Tells a story, a few words at a time.",
        "version": "1.0.0",
        "skills": [
            {
                "id": "story",
                "name": "Story",
                "description": "Streams a short story.",
                "tags": ["test"],
                "examples": ["tell me a story"],
            }
        ],
    }

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        for n, chunk in enumerate(CHUNKS):
            await asyncio.sleep(0.05)  # each chunk an event of its own, as tokens come
            last = n == len(CHUNKS) - 1
            await updater.add_artifact(
                [Part(text=chunk)], artifact_id="answer", name="answer", append=n > 0, last_chunk=last
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


@pytest.fixture
def streaming_console_url() -> Iterator[str]:
    with serve_console(Settings(store="memory", executor=f"{__name__}:StreamingAgent")) as url:
        yield url


def _placeholder(driver: WebDriver) -> str:
    return str(driver.find_element(By.ID, "chat-input").get_attribute("placeholder"))


def test_an_answer_streamed_in_chunks_reads_as_one_text(streaming_console_url: str, browser: WebDriver) -> None:
    # Given the console, open on an agent that is not the demo
    browser.get(streaming_console_url)
    _until(browser, "the card read", lambda d: "Streaming agent" in d.find_element(By.ID, "agent-status").text)
    # Then the input suggests what its card gives, not the demo's commands
    assert _placeholder(browser) == "Say something (examples from its card: tell me a story)"

    # When it streams its answer in chunks of one artifact
    _say(browser, "tell me a story")
    _until(browser, "the task completed", lambda d: _state(d) == "TASK_STATE_COMPLETED")

    # Then the chat shows one artifact holding one text: the chunks joined
    (answer,) = browser.find_elements(By.CSS_SELECTOR, '#chat-log .artifact[data-name="answer"]')
    (text,) = answer.find_elements(By.CSS_SELECTOR, ".part")
    assert text.text == "".join(CHUNKS)
    assert "text" in str(text.get_attribute("class")).split()


def test_the_demo_gets_its_commands_and_reading_its_card_logs_no_error(console_url: str, browser: WebDriver) -> None:
    # Given the console, open on the demo agent: its commands are suggested
    browser.get(console_url)
    _until(browser, "the card read", lambda d: "A2A 1.0" in d.find_element(By.ID, "agent-status").text)
    assert _placeholder(browser) == DEMO_PLACEHOLDER

    # When I open the card, its interfaces probed
    browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="card"]').click()
    _until(browser, "the interfaces probed", lambda d: "probing" not in _text_of(d, "#card-interfaces li"))

    # Then each is reported, no problem is found, and the browser's console holds no error
    faces = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#card-interfaces li")]
    assert [face.split(": ", 1)[1] for face in faces] == [
        "answers",
        "answers",
        "answers",
        "not probed (A2A 0.3 REST has no read that needs no task)",
    ]
    assert _text_of(browser, "#card-problems li") == "none found"
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
