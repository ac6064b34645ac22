"""Strands Agents behind A2A: a real ``strands.Agent`` (its event loop, tools, hooks, interrupts and
snapshots) on a scripted model, served by the app, the worker and the store (``serve``): how Strands
maps to A2A and what only Strands does. The stories every adapter tells (a streamed answer, a tool
call, a context's memory, cancel, a failure, structured output): ``test_stories``. Through the local
stack and in durable mode: ``test_frameworks_e2e``, ``test_durable_frameworks``."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from strands import Agent, ToolContext, tool
from strands.hooks import BeforeToolCallEvent
from strands.types.content import Messages

from a2a_serverless.frameworks.strands import strands_executor

from .conftest import answer_text, assert_stored_as_object
from .strands_scripted import Call, ScriptedModel, Text, drawing


def agent_on(model: ScriptedModel, **options: Any) -> Any:
    """What a user's module writes: a function making the agent, for every run."""
    return lambda: Agent(model=model, callback_handler=None, **options)


def test_a_text_message_reaches_the_model_as_one_text_block(serve: Any) -> None:
    model = ScriptedModel(Text("Hello, world"))

    task = serve(strands_executor(agent_on(model))).send("greet the world")

    assert answer_text(task) == "Hello, world"
    assert model.seen[0][-1]["content"] == [{"text": "greet the world"}]


def test_an_agent_with_strands_default_callback_handler_does_not_print_the_answer(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel(Text("a private ", "answer"))

    task = serve(strands_executor(lambda: Agent(model=model))).send("tell me")  # Strands' default: print it all

    assert answer_text(task) == "a private answer"
    assert "private" not in capsys.readouterr().out


class Bookings:
    """A tool that books rooms, behind a hook asking a person before each booking."""

    def __init__(self) -> None:
        self.booked: list[int] = []

    def tools(self) -> list[Any]:
        @tool
        def book_room(room: int) -> str:
            """Book a room."""
            self.booked.append(room)
            return f"room {room} booked"

        return [book_room]

    @staticmethod
    def approve(event: BeforeToolCallEvent) -> None:
        room = event.tool_use["input"]["room"]
        if event.interrupt("approve_booking", reason=f"May I book room {room}?") != "yes":
            event.cancel_tool = "the person said no"


def last_tool_result(messages: Messages) -> str:
    results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
    return f"{results[-1]['status']}: {results[-1]['content'][0]['text']}"


def test_an_interrupt_asks_the_person_and_the_reply_resumes_the_same_run_where_it_paused(serve: Any) -> None:
    bookings = Bookings()
    model = ScriptedModel(
        Call("book_room", {"room": 7}), lambda seen: Text(f"Done ({last_tool_result(seen)})."), said_so_far
    )
    agent = serve(strands_executor(agent_on(model, tools=bookings.tools(), hooks=[bookings.approve])))

    asked = agent.send("book room 7")

    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked["status"]["message"]["parts"] == [
        {"text": "May I book room 7?"},
        {"data": {"interrupts": [{"name": "approve_booking", "tool": "book_room", "toolCallId": "call-1"}]}},
    ]
    assert bookings.booked == []
    done = agent.send("yes", task_id=asked["id"], context_id=asked["contextId"])

    assert done["id"] == asked["id"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert bookings.booked == [7]
    assert answer_text(done) == "Done (success: room 7 booked)."
    # The same run went on: the model was not asked again for the tool, nor given "yes" as a prompt.
    assert len(model.seen) == 2
    assert not any(b.get("text") == "yes" for m in model.seen[1] for b in m["content"])
    # And the resumed run's conversation is the context's memory from then on.
    later = agent.send("which room?", context_id=asked["contextId"])
    assert answer_text(later) == "book room 7 | which room?"


def test_with_tool_details_the_question_shows_the_tool_arguments_and_the_resumed_run_its_result(serve: Any) -> None:
    bookings = Bookings()
    model = ScriptedModel(Call("book_room", {"room": 7}), Text("Done."))
    executor = strands_executor(agent_on(model, tools=bookings.tools(), hooks=[bookings.approve]), tool_details=True)
    agent = serve(executor)

    asked = agent.send("book room 7")
    done = agent.send("yes", task_id=asked["id"], context_id=asked["contextId"])

    shown = asked["status"]["message"]["parts"][1]["data"]["interrupts"]
    assert shown == [
        {
            "name": "approve_booking",
            "tool": "book_room",
            "toolCallId": "call-1",
            "reason": "May I book room 7?",
            "arguments": {"room": 7},
        }
    ]
    results = [
        p.data
        for e in agent.events(done["id"])
        if e.status_update and e.status_update.status.message
        for p in e.status_update.status.message.parts
        if p.data is not None and "result" in p.data
    ]
    assert results == [{"tool": "book_room", "result": {"status": "success", "content": [{"text": "room 7 booked"}]}}]


def test_a_reply_that_is_not_an_approval_reaches_the_hook_which_cancels_the_tool(serve: Any) -> None:
    bookings = Bookings()
    model = ScriptedModel(Call("book_room", {"room": 7}), lambda seen: Text(f"Not done ({last_tool_result(seen)})."))
    agent = serve(strands_executor(agent_on(model, tools=bookings.tools(), hooks=[bookings.approve])))

    asked = agent.send("book room 7")
    done = agent.send("no, not that one", task_id=asked["id"], context_id=asked["contextId"])

    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert bookings.booked == []
    assert answer_text(done) == "Not done (error: the person said no)."


@tool(context=True)
def ask_date(tool_context: ToolContext) -> str:
    """Ask the person which date."""
    answer: str = tool_context.interrupt("date", reason={"question": "Which date?"})
    return f"on {answer}"


def test_a_tool_that_asks_a_question_gets_the_reply_as_its_answer(serve: Any) -> None:
    model = ScriptedModel(Call("ask_date"), lambda seen: Text(f"Booked {last_tool_result(seen)}."))
    agent = serve(strands_executor(agent_on(model, tools=[ask_date])))

    asked = agent.send("book me a table")
    done = agent.send("Friday", task_id=asked["id"], context_id=asked["contextId"])

    assert asked["status"]["message"]["parts"][0] == {"text": "Which date?"}
    assert answer_text(done) == "Booked success: on Friday."


@tool(context=True)
def whoami(tool_context: ToolContext) -> str:
    """Who is asking."""
    return f"you are {tool_context.invocation_state['caller']}"


def test_the_invocation_state_made_from_the_request_reaches_the_tools(serve: Any) -> None:
    model = ScriptedModel(*[Call("whoami"), lambda seen: Text(last_tool_result(seen))] * 2)
    # Keys that Strands' own events use ("data" is a text delta's) do not pass for them.
    state = lambda c: {"caller": c.caller, "data": "NOT TEXT", "message": "not a message", "result": "none"}  # noqa: E731
    executor = strands_executor(agent_on(model, tools=[whoami]), invocation_state=state)
    agent = serve(executor)

    alices = agent.send("who am I?")
    bobs = agent.send("who am I?", as_="bob")

    assert answer_text(alices) == "success: you are alice"
    assert answer_text(bobs) == "success: you are bob"


def said_so_far(messages: Messages) -> Text:
    """A model that answers with everything the user said in the conversation it is given."""
    said = [b["text"] for m in messages if m["role"] == "user" for b in m["content"] if "text" in b]
    return Text(" | ".join(said))


def test_files_and_data_of_the_message_reach_the_model_as_content_blocks(serve: Any) -> None:
    model = ScriptedModel(Text("A red square."))
    agent = serve(strands_executor(agent_on(model)))
    png = b"\x89PNG\r\n\x1a\n fake image"
    parts = [
        {"text": "what is this?"},
        {"raw": base64.b64encode(png).decode(), "mediaType": "image/png", "filename": "square.png"},
        {"raw": base64.b64encode(b"a,b\n1,2\n").decode(), "mediaType": "text/csv", "filename": "table.csv"},
        {"data": {"hint": "a shape"}},
    ]
    message = {"messageId": "m-files", "role": "ROLE_USER", "parts": parts}

    task = agent._post("/message:send", {"message": message}, "alice")["task"]  # send() takes text only

    assert answer_text(task) == "A red square."
    assert model.seen[0][-1]["content"] == [
        {"text": "what is this?"},
        {"image": {"format": "png", "source": {"bytes": png}}},
        {"document": {"format": "csv", "name": "table", "source": {"bytes": b"a,b\n1,2\n"}}},
        {"text": '{"hint": "a shape"}'},
    ]


def test_an_agent_instead_of_a_function_making_it_is_refused() -> None:
    with pytest.raises(TypeError, match="function that makes the agent"):
        strands_executor(Agent(model=ScriptedModel(), callback_handler=None))  # type: ignore[arg-type]


def test_a_turn_that_ends_while_a_task_waits_is_kept_when_the_task_resumes(serve: Any) -> None:
    bookings = Bookings()
    model = ScriptedModel(Call("book_room", {"room": 7}), said_so_far, Text("Booked."), said_so_far)
    agent = serve(strands_executor(agent_on(model, tools=bookings.tools(), hooks=[bookings.approve])))

    asked = agent.send("book room 7", context_id="ctx-wait")
    meanwhile = agent.send("meanwhile, hello", context_id="ctx-wait")  # ends while the booking waits
    done = agent.reply(asked, "yes")
    later = agent.send("what now?", context_id="ctx-wait")

    assert answer_text(meanwhile) == "meanwhile, hello"  # the paused turn is not in the memory yet
    assert answer_text(done) == "Booked."
    # Both turns are in the context's memory: the one that ended first, then the resumed task's.
    assert answer_text(later) == "meanwhile, hello | book room 7 | what now?"
    assert last_tool_result(model.seen[-1]) == "success: room 7 booked"


def test_images_and_documents_of_the_final_message_are_an_artifact_of_file_parts(serve: Any) -> None:
    png = b"\x89PNG\r\n\x1a\n a chart"
    draw, hand_over = drawing(png)
    model = ScriptedModel(Call("draw", {"subject": "sales"}))
    agent = serve(strands_executor(agent_on(model, tools=[draw], hooks=[hand_over])))

    task = agent.send("chart the sales")

    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(task) == "Here is your 2-file chart."  # the hook's text, not streamed by the model
    outputs = [a["parts"] for a in task["artifacts"] if a["name"] == "output"]
    assert outputs == [
        [
            {"raw": base64.b64encode(png).decode(), "mediaType": "image/png"},
            {
                "raw": base64.b64encode(b"%PDF-1.7 report").decode(),
                "mediaType": "application/pdf",
                "filename": "report.pdf",
            },
        ]
    ]
    assert len(model.seen) == 1  # the model was not asked again


def test_a_file_above_the_blob_threshold_is_stored_as_an_object_and_the_client_gets_its_bytes(serve: Any) -> None:
    large = b"\x89PNG" + bytes(range(256)) * 160  # 40 KiB, above blob_threshold_bytes (32 KiB)
    draw, hand_over = drawing(large)
    agent = serve(
        strands_executor(agent_on(ScriptedModel(Call("draw", {"subject": "all"})), tools=[draw], hooks=[hand_over]))
    )

    task = agent.send("chart it all")

    assert_stored_as_object(agent, task["id"], large, "image/png")


def test_a_file_in_above_the_blob_threshold_reaches_the_model_whole(serve: Any) -> None:
    large = b"\x89PNG" + bytes(range(256)) * 160  # 40 KiB: the task stores it as an object
    model = ScriptedModel(Text("A large image."))
    agent = serve(strands_executor(agent_on(model)))
    parts = [{"text": "what is this?"}, {"raw": base64.b64encode(large).decode(), "mediaType": "image/png"}]

    task = agent.send("", parts=parts)

    assert answer_text(task) == "A large image."
    assert model.seen[0][-1]["content"][1] == {"image": {"format": "png", "source": {"bytes": large}}}
    assert agent.stored_object(task["id"], large) == large
