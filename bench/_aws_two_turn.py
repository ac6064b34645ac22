"""``aws_calls.py --shapes two_turn_wait``: a task of two turns with a modelled one-hour wait.

The local stack in queue mode and then in durable mode, each in this process: per task, a blocking
SendMessage that ends INPUT_REQUIRED, then a blocking SendMessage answering it; the wait between
them is modelled (:data:`WAIT_SECONDS_MODELLED`), not waited for. In durable mode the API's app is
the local stack's durable one and each task's durable operations are read from the local runner and
priced as Lambda durable operations.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from collections import Counter
from typing import Any

from _aws_analysis import analyse, template_facts
from _aws_driver import COMPLETED, SHAPES, Driver, _message
from _aws_recorder import _DURABLE_MODE, Activity, LabelMiddleware, Recorder, wrap_handlers
from _aws_units import LAMBDA_DURABLE_OPERATION, PRICE_SOURCES, ROOT

WAIT_SHAPES = ("two_turn_wait",)
WAIT_SECONDS_MODELLED = 3600
"""The wait between the two turns that the shape stands for (it is modelled, not waited for)."""
WAIT_WINDOW = "two_turn_wait"
SHAPES["two_turn_wait"] = (
    "a blocking SendMessage 'ask me' (the demo agent asks for a name: INPUT_REQUIRED), then, after a wait "
    "modelled as one hour, a blocking SendMessage with the answer on the task (COMPLETED)"
)


def run_two_turn_wait_stack(mode: str, samples: int) -> dict[str, Any]:
    """The local stack in ``mode`` (queue or durable) in this process; one warm-up task, then
    ``samples`` two-turn tasks in the measured window. In durable mode the API's app is the local
    stack's durable one (executions on the local runner, invocations of the durable worker metered)
    and each task's durable operations are read from the runner."""
    sys.path.insert(0, str(ROOT))
    import boto3
    from _stack import measure_on_local_stack

    os.environ.update({"A2A_AUTH_MODE": "api-key", "A2A_API_KEYS": json.dumps({"bench-key": "bench"})})
    os.environ["A2A_EXECUTION_MODE"] = mode
    os.environ.pop("A2A_DURABLE_FUNCTION", None)  # the stack names its local durable worker
    boto3.setup_default_session()
    recorder = Recorder()
    recorder.install(boto3.DEFAULT_SESSION)
    activity = Activity()
    workers: list[Any] = []

    def app_factory() -> Any:
        if mode == "durable":
            from a2a_serverless_dev.durable import durable_gateway_app, durable_limits
            from a2a_serverless_dev.resources import load_template

            app, worker = durable_gateway_app(
                limits=durable_limits(load_template()),
                function_name="DurableWorkerFunction",
                around_invocation=lambda: activity.running("lambda", "DurableWorkerFunction"),
            )
            workers.append(worker)
            return LabelMiddleware(app, activity)
        from a2a_serverless.transport.app import create_app

        return LabelMiddleware(create_app(), activity)

    def two_turns(d: Driver, tenant: str) -> dict[str, Any]:
        asked = d.send(tenant, "ask me", label="SendMessage (blocking, asks)")
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
        body = {"message": {**_message("Ann"), "taskId": asked["id"]}, "configuration": {"returnImmediately": False}}
        done = d.call("SendMessage (blocking, answer)", "POST", f"{tenant}/message:send", json=body)["task"]
        assert done["status"]["state"] == COMPLETED, done
        return asked

    def measure_mode(base: str) -> dict[str, Any]:
        driver = Driver(base, recorder, activity, None)
        operations: list[dict[str, Any]] = []
        try:
            with driver.window("warmup"):
                two_turns(driver, "/w")
            first, first_invocation = len(recorder.snapshot()), len(activity.invocations)
            for n in range(samples):
                with driver.window(WAIT_WINDOW):
                    task = two_turns(driver, f"/t{n}")
                if workers:
                    operations.append(_durable_operations(workers[0], task["id"]))
        finally:
            driver.close()
        with activity.cond:
            invocations = list(activity.invocations[first_invocation:])
        return {
            "calls": recorder.snapshot()[first:],
            "invocations": invocations,
            "notes": {"window_seconds": dict(driver.seconds)},
            "durable_operations": operations,
        }

    _DURABLE_MODE[:] = [True] if mode == "durable" else []
    with contextlib.redirect_stdout(sys.stderr):
        outcome = measure_on_local_stack(
            measure_mode, workers=2, app_factory=app_factory, resolve_handler=wrap_handlers(activity)
        )
    _DURABLE_MODE.clear()
    for worker in workers:
        worker.close()
    if "error" in outcome:
        raise RuntimeError(f"{mode} mode: {outcome['error']}")
    return outcome


def _durable_operations(worker: Any, task_id: str) -> dict[str, Any]:
    """A finished task's durable execution, from the local runner: its checkpointed operations (steps,
    callbacks, waits) by type, and the bytes of its input and of the results they recorded."""
    arn = worker.runs.execution_arn(task_id)
    result = worker.runs.runner.wait_for_result(arn, timeout=30)
    by_type = Counter(op.operation_type.value for op in result.operations)
    written = sum(len(str(getattr(op, "result", None) or "")) for op in result.operations)
    return {"operations": sum(by_type.values()), "by_type": dict(by_type), "result_bytes": written}


def two_turn_wait_result(samples: int) -> dict[str, Any]:
    facts = template_facts()
    modes: dict[str, Any] = {}
    for mode in ("queue", "durable"):
        from moto.moto_api._internal.models import moto_api_backend

        from a2a_serverless.lambda_.push import reset_push_services
        from a2a_serverless.wiring import reset_runtime

        moto_api_backend.reset()  # the in-process moto of the previous stack: a fresh account
        reset_runtime()  # and the functions' runtimes (this process's) built against it
        reset_push_services()
        raw = run_two_turn_wait_stack(mode, samples)
        raw["window_samples"] = {WAIT_WINDOW: samples}
        analysed = analyse(raw, samples, facts, WAIT_SHAPES)
        shape = analysed["shapes"][WAIT_WINDOW]
        ops = raw["durable_operations"]
        if ops:
            per_task = statistics.mean(o["operations"] for o in ops)
            shape["units_per_task"]["durable_operations"] = round(per_task, 3)
            shape["units_per_task"]["durable_operations_by_type"] = ops[-1]["by_type"]
            shape["units_per_task"]["durable_result_bytes"] = round(statistics.mean(o["result_bytes"] for o in ops))
            shape["per_million_tasks_usd"]["lambda_durable_operations"] = round(
                per_task * LAMBDA_DURABLE_OPERATION * 1e6, 2
            )
            shape["total_per_million_tasks_usd"] = round(
                shape["total_per_million_tasks_usd"] + shape["per_million_tasks_usd"]["lambda_durable_operations"], 2
            )
        modes[mode] = {
            "shape": shape,
            "windows": analysed["windows"].get(WAIT_WINDOW, {}),
            "measure_errors": analysed["measure_errors"],
            "window_seconds": raw["notes"]["window_seconds"].get(WAIT_WINDOW, []),
        }
    return {
        "meta": {
            "samples": samples,
            "date": time.strftime("%Y-%m-%d"),
            "wait_seconds_modelled": WAIT_SECONDS_MODELLED,
            "prices": {
                "Lambda durable operation": f"${LAMBDA_DURABLE_OPERATION * 1e6:.2f} per million "
                f"({PRICE_SOURCES['Lambda durable functions']})",
                "Lambda durable data written / retained": "price not found: not counted",
                "the rest": "as the other shapes (PRICE_SOURCES)",
            },
        },
        "modes": modes,
    }


def render_two_turn_wait(result: dict[str, Any]) -> str:
    queue, durable = result["modes"]["queue"]["shape"], result["modes"]["durable"]["shape"]
    hours = result["meta"]["wait_seconds_modelled"] / 3600
    lines = [
        f"### Two turns and a wait of {hours:g} h: queue and durable mode ({result['meta']['date']})",
        "",
        SHAPES["two_turn_wait"] + f"; {result['meta']['samples']} task(s) per mode after a warm-up task.",
        "",
        "| per task | queue | durable |",
        "|---|---:|---:|",
    ]
    rows = [
        ("API requests", "api_requests"),
        ("Lambda requests", "lambda_requests"),
        ("Lambda GB-seconds", "lambda_gb_seconds"),
        ("DynamoDB RRU", "rru"),
        ("DynamoDB WRU", "wru"),
        ("SQS requests (ours, FIFO)", "sqs_requests_ours_fifo"),
        ("SQS requests (event source, estimate)", "sqs_requests_event_source_estimate"),
        ("durable operations", "durable_operations"),
        ("durable results written, bytes", "durable_result_bytes"),
    ]
    for label, key in rows:
        lines.append(f"| {label} | {queue['units_per_task'].get(key, 0)} | {durable['units_per_task'].get(key, 0)} |")
    invocations = {
        mode: {
            name: c["invocations"]
            for name, c in result["modes"][mode]["windows"].items()
            if c.get("invocations") and not name.startswith("api:")
        }
        for mode in ("queue", "durable")
    }
    lines.append(f"| invocations by function | {invocations['queue']} | {invocations['durable']} |")
    lines += ["", "| $ per million tasks | queue | durable |", "|---|---:|---:|"]
    keys = [k for k in durable["per_million_tasks_usd"] if k not in ("lambda_requests_only", "lambda_duration_only")]
    for key in dict.fromkeys([*queue["per_million_tasks_usd"], *keys]):
        if key in ("lambda_requests_only", "lambda_duration_only"):
            continue
        q, d = queue["per_million_tasks_usd"].get(key, 0), durable["per_million_tasks_usd"].get(key, 0)
        lines.append(f"| {key} | {q:.2f} | {d:.2f} |")
    lines.append(
        f"| **total** | **{queue['total_per_million_tasks_usd']:.2f}** "
        f"| **{durable['total_per_million_tasks_usd']:.2f}** |"
    )
    lines += [
        "",
        f"The {hours:g} h wait is modelled, not waited for. Queue mode: nothing runs and nothing is called while "
        "the task waits (INPUT_REQUIRED is a row in the table; the answer is a new work item). Durable mode: the "
        "execution waits on a callback and holds no invocation (measured: none ran between the turns); the wait "
        "is one of the execution's durable operations, counted above. In both modes the task stays in the table "
        "for the wait (the same DynamoDB storage either way: not counted). Durable executions are also billed "
        "per GB of data written and per GB-month retained (DurableRetentionDays): "
        + result["meta"]["prices"]["Lambda durable data written / retained"]
        + " (the bytes written are in the table). Prices: "
        + "; ".join(f"{k}: {v}" for k, v in result["meta"]["prices"].items())
        + ". Locally the runner stands in for Lambda's checkpoint API: its calls (Invoke, "
        "CheckpointDurableExecution, SendDurableExecutionCallbackSuccess) are not billed requests here.",
    ]
    return "\n".join(lines)
