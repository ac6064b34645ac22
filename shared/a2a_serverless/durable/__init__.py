"""Durable execution mode (``A2A_EXECUTION_MODE=durable``, ``docs/durable-tasks.md``): each task runs
as one durable execution, named after the task, and nothing runs while it waits (for input, for a
step's sleep, for a remote agent it delegated to).

The mode, here:

* :mod:`.queue`: ``DurableQueue``, the ``WorkQueue`` SendMessage hands work to: it starts a task's
  execution, or resumes the one that waits for the task's next message.
* :mod:`.turns`: ``run_task``, the execution (turns of the worker's ordinary run, callback waits for
  input between them), and ``ResumedTurn``, the worker's run mode for an executor with
  ``durable_steps``.
* :mod:`.steps`: ``DurableSteps``, ``context.steps`` as checkpointed steps and durable waits.
* :mod:`.delegation`: ``delegate`` in durable mode, which waits for a remote agent with no function
  running; :mod:`.delegation_wait`, its rules, as pure functions of a frozen wait state.

Around it, each beside its kind: the ``DurableRuns`` port (:mod:`a2a_serverless.ports.durable`), its
backend on Lambda (:mod:`a2a_serverless.adapters.lambda_durable`), the durable worker's entry point
(:mod:`a2a_serverless.functions.durable_worker`), the push receiver that wakes a delegation
(:mod:`a2a_serverless.delegation.hook`), and, in the developer kit, the local runner
(``a2a_serverless_dev.local_durable``).

Its modules import the SDK (``aws_durable_execution_sdk_python``) inside the functions that use it:
the API's functions import :mod:`.queue` alone.
"""
