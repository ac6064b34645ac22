"""``a2a_serverless_dev.testing``: a conversation with an agent in process, the helper an agent
project's own test uses (``a2a-serverless init`` writes it). One app on one runtime for all its
turns, so a multi-turn agent is tested turn by turn; the real protocol path (the HTTP+JSON binding,
the operations, the worker running the executor on the in-memory runtime)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from a2a_serverless.execution.demo import DemoAgentExecutor
from a2a_serverless_dev.testing import agent_conversation

DEMO = "a2a_serverless.execution.demo:DemoAgentExecutor"


def test_an_answer_to_the_agents_question_continues_its_task() -> None:
    with agent_conversation(DEMO) as conversation:
        # Given: the agent asked a question (the demo's two-turn exchange)
        asked = conversation.send("ask me")
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert asked["status"]["message"]["parts"] == [{"text": "What is your name?"}]

        # When: the next message is sent
        answered = conversation.send("Ada")

        # Then: it went to the same task, which the agent completed with what it was told
        assert answered["id"] == asked["id"]
        assert answered["contextId"] == asked["contextId"]
        assert answered["status"]["state"] == "TASK_STATE_COMPLETED"
        assert answered["artifacts"][0]["parts"] == [{"text": "Nice to meet you, Ada!"}]
        assert [m["parts"][0]["text"] for m in answered["history"] if m["role"] == "ROLE_USER"] == ["ask me", "Ada"]


def test_after_a_final_state_the_next_message_is_a_new_task_in_the_same_context() -> None:
    with agent_conversation(DEMO) as conversation:
        first = conversation.send("one")
        second = conversation.send("two")
    assert first["status"]["state"] == second["status"]["state"] == "TASK_STATE_COMPLETED"
    assert second["id"] != first["id"]
    assert second["contextId"] == first["contextId"]
    assert second["artifacts"][0]["parts"] == [{"text": "Echo: two"}]


def test_conversations_are_apart() -> None:
    with agent_conversation(DEMO) as one, agent_conversation(DEMO) as other:
        asked = one.send("ask me")
        elsewhere = other.send("Ada")
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert elsewhere["contextId"] != asked["contextId"]
    assert elsewhere["artifacts"][0]["parts"] == [{"text": "Echo: Ada"}]


def test_the_agent_may_be_named_by_its_class_and_its_card_given_as_a_file(tmp_path: Path) -> None:
    card = tmp_path / "agent.json"
    card.write_text(json.dumps({"name": "Card from a file", "version": "2.0.0", "skills": []}))
    with agent_conversation(DemoAgentExecutor, card_file=card) as conversation:
        assert conversation.card()["name"] == "Card from a file"
        assert conversation.card()["version"] == "2.0.0"
        assert conversation.send("hi")["artifacts"][0]["parts"] == [{"text": "Echo: hi"}]


def test_an_answer_that_is_not_a_task_fails_with_the_answer() -> None:
    with agent_conversation(DEMO) as conversation:
        done = conversation.send("one")
        # A message to a task that is already final is refused: the test fails, saying why
        with pytest.raises(AssertionError, match=r"^SendMessage answered 4\d\d, not a task: .*\"error\""):
            conversation.send("late", taskId=done["id"])
        # ... and the conversation goes on
        assert conversation.send("two")["status"]["state"] == "TASK_STATE_COMPLETED"
