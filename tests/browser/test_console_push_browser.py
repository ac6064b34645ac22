"""The console's push views in a real browser (headless Chromium): a task's timeline tells what its
webhook really got, the Push tab lists the dead letters, redrives them, and follows each moved
delivery until it is delivered or failed again. The queues are moto's (in process); the delivery
function's part is played by the test with the real delivery code, POSTing to a real webhook."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from a2a_serverless.adapters.sqs import SqsDeliveryQueue
from a2a_serverless.config import Settings
from a2a_serverless.ports import Scope
from a2a_serverless.push.attempts import AttemptLog
from a2a_serverless.push.delivery import DeliveryItem, deliver
from a2a_serverless.push.sender import WebhookSender
from a2a_serverless.runtime import Runtime
from a2a_serverless.transport.app import create_app
from a2a_serverless.wiring import build_runtime
from a2a_serverless_dev.console import CONSOLE_PATH, with_console
from browser.test_console_browser import CHROMEDRIVER, CHROMIUM, _text_of, _until
from browser.test_console_browser import browser as browser  # the fixture, shared with the console's story
from testkit.aws import moto_clients
from testkit.served import served

if TYPE_CHECKING:
    from conftest import WebhookReceiver  # tests/conftest.py (the fixture's type)

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="no chromium/chromedriver: `make browser` installs them"
)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

ANONYMOUS = Scope("", "anonymous")
DASH = "\N{EN DASH}"  # how the console writes a range of events
ROWS = "#push-table tbody tr"
MOVED = "#push-redriven-table tr.redriven"


@dataclass
class PushStack:
    base: str
    runtime: Runtime
    sqs: Any
    queue: SqsDeliveryQueue
    queue_url: str
    log: AttemptLog

    @property
    def url(self) -> str:
        """The console's page."""
        return f"{self.base}{CONSOLE_PATH}/"


@pytest.fixture
def push_stack(tmp_path: Path) -> Iterator[PushStack]:
    """The console over a memory runtime whose push deliveries have moto's FIFO queues and an
    attempt log, as the local stack wires them."""
    with moto_clients() as (_, sqs):
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        queue_url = sqs.create_queue(QueueName="push.fifo", Attributes=fifo)["QueueUrl"]
        dead_url = sqs.create_queue(QueueName="push-dlq.fifo", Attributes=fifo)["QueueUrl"]
        settings = Settings(
            store="memory",
            push_queue_url=queue_url,
            push_dead_letter_queue_url=dead_url,
            push_attempt_log=str(tmp_path / "push-attempts.jsonl"),
            allow_private_webhooks=True,
        )
        runtime = build_runtime(settings)
        try:
            with served(with_console(create_app(runtime), lambda: runtime)) as base:
                yield PushStack(
                    base,
                    runtime,
                    sqs,
                    SqsDeliveryQueue(queue_url, dead_url, client=sqs),
                    queue_url,
                    AttemptLog(settings.push_attempt_log),
                )
        finally:
            runtime.queue.shutdown()  # type: ignore[attr-defined]


def a_task_with_a_webhook(stack: PushStack, hook: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hello"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook}},
        },
    }
    answer = httpx.post(f"{stack.base}/", json=body, headers={"A2A-Version": "1.0"}, timeout=30).json()
    task_id: str = answer["result"]["task"]["id"]
    return task_id


def deliver_as_the_function_does(stack: PushStack, sender: WebhookSender, item: DeliveryItem) -> None:
    """One delivery of ``item`` (the real delivery code), its dead letters parked as the function parks them."""
    result = deliver(
        item,
        store=stack.runtime.store,
        sender=sender,
        signer=None,
        attempt=1,
        max_attempts=3,
        timeout_seconds=2.0,
        attempt_log=stack.log,
    )
    for letter in result.dead_letters:
        stack.queue.dead_letter(letter)


def test_the_push_tab_redrives_and_follows_each_delivery(
    push_stack: PushStack, browser: WebDriver, webhook_receiver: WebhookReceiver
) -> None:
    # Given a task whose webhook refused all four of its events (each dead-lettered)
    task_id = a_task_with_a_webhook(push_stack, f"{webhook_receiver.url}/hook")
    (config,), _ = push_stack.runtime.store.list_push_configs(ANONYMOUS, task_id)
    webhook_receiver.set_down(404)
    with WebhookSender(timeout=2.0, allow_private=True) as sender:
        deliver_as_the_function_does(push_stack, sender, DeliveryItem("", "anonymous", task_id, config.id, 4))

        # When I open its timeline, it says nothing was delivered (not "delivered up to event 4")
        browser.get(push_stack.url)
        browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="tasks"]').click()
        row = f'#tasks-table tr[data-task-id="{task_id}"] .open-timeline'
        _until(browser, "the timeline opened", lambda d: d.find_element(By.CSS_SELECTOR, row).click() or True)
        _until(browser, "nothing delivered", lambda d: _delivered(d) == f"nothing delivered yet; {_dead(1, 4)}")

        # When I open the Push tab, the four dead letters are listed, counted exactly
        browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="push"]').click()
        _until(browser, "four dead letters", lambda d: len(d.find_elements(By.CSS_SELECTOR, ROWS)) == 4)
        _until(browser, "the count", lambda d: d.find_element(By.ID, "push-status").text == "4 dead letter(s).")

        # And I redrive them: the four moved deliveries are shown, pending
        browser.find_element(By.ID, "push-redrive").click()
        _until(browser, "four moved, pending", lambda d: _outcomes(d) == ["pending"] * 4)

        # When the delivery function takes them: the webhook refuses two more, then takes everything
        webhook_receiver.set_up()
        webhook_receiver.fail_next(2, status=404)
        queued = push_stack.sqs.receive_message(QueueUrl=push_stack.queue_url, MaxNumberOfMessages=10)["Messages"]
        for message in queued:
            deliver_as_the_function_does(push_stack, sender, DeliveryItem.from_json(message["Body"]))
            push_stack.sqs.delete_message(QueueUrl=push_stack.queue_url, ReceiptHandle=message["ReceiptHandle"])

    # Then the page follows them to their outcome: two failed again, two delivered
    both = ["failed again", "failed again", "delivered", "delivered"]
    _until(browser, f"the outcomes {both}", lambda d: _outcomes(d) == both)
    summary = "Moved 4 dead letter(s): 2 delivered, 2 failed again"
    _until(browser, "the summary", lambda d: d.find_element(By.ID, "push-redriven-status").text.startswith(summary))
    # And the dead letters listed are the two that failed again, marked so
    _until(
        browser,
        "the two back, marked",
        lambda d: (
            [e.get_attribute("data-redrive") != "" for e in d.find_elements(By.CSS_SELECTOR, ROWS)] == [True] * 2
            and _text_of(d, ROWS).count("failed again after a redrive") == 2
        ),
    )

    # And the timeline tells what the webhook got at last (the list refreshes live: click when it holds still)
    browser.find_element(By.CSS_SELECTOR, 'nav .tab[data-tab="tasks"]').click()
    _until(browser, "the timeline opened", lambda d: d.find_element(By.CSS_SELECTOR, row).click() or True)
    _until(browser, "the new summary", lambda d: _delivered(d) == f"delivered events 3{DASH}4; {_dead(1, 2)}")


def _delivered(driver: WebDriver) -> str:
    """What the timeline says the task's one webhook got (after its id and URL)."""
    return _text_of(driver, "#timeline-push .push-delivered").split(": ", 1)[-1]


def _dead(first: int, last: int) -> str:
    return f"dead-lettered events {first}{DASH}{last}"


def _outcomes(driver: WebDriver) -> list[str]:
    return [str(row.get_attribute("data-outcome")) for row in driver.find_elements(By.CSS_SELECTOR, MOVED)]
