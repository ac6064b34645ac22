"""The text of the files ``a2a-serverless init`` writes (:mod:`.project` fills them in). Each is a
``str.format`` template: a literal brace is doubled."""

from __future__ import annotations

__all__ = [
    "AGENT",
    "CONFTEST",
    "GITIGNORE",
    "KIT_REQUIREMENTS",
    "PYPROJECT",
    "README",
    "SAMCONFIG",
    "TEST",
    "WHEEL_SOURCE",
]

KIT_REQUIREMENTS = """\
# The a2a-serverless kit, installed into the core layer by `sam build` with its dependencies.
{source}{requirement}
"""

WHEEL_SOURCE = """\
# Until the kit is on PyPI it is the wheel beside this file (commit it). pip reads a --find-links path
# in a requirements file relative to the file, so this works wherever the project is checked out.
# `a2a-serverless init --upgrade-kit .` replaces the wheel and the versions here and in pyproject.toml.
--find-links .
"""

AGENT = '''\
"""{name}: your agent. Edit ``Agent.execute``; ``a2a-serverless dev`` serves it locally."""

from __future__ import annotations

from a2a_serverless.execution import AgentExecutor, EventQueue, RequestContext, TaskUpdater
from a2a_serverless.models import Part

NAME = {name_literal}


class Agent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input().strip()
        await updater.add_artifact([Part(text=f"{{NAME}} heard: {{text}}")], name="reply")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()
'''

CONFTEST = '''\
"""Before any test runs, the agent's executor loads, as ``a2a-serverless dev`` checks before it
starts: if it cannot (its framework is not installed, say), pytest stops with the one line that
``a2a-serverless dev`` says, naming what to install."""

from __future__ import annotations

import pytest

from a2a_serverless.lambda_.startup import executor_problem

EXECUTOR = "{executor}"


def pytest_configure(config: pytest.Config) -> None:
    problem = executor_problem(EXECUTOR)
    if problem is not None:
        raise pytest.UsageError(problem)
'''

TEST = '''\
"""The agent on the in-memory runtime: the whole protocol path (HTTP+JSON binding, the operations,
the worker running your executor), no AWS, no local stack. One conversation is one app: each
``send`` continues the task of the answer before while it is open (INPUT_REQUIRED, say), else
starts a new task in the same context, as a chat client does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from a2a_serverless_dev.testing import AgentConversation, agent_conversation

CARD = Path(__file__).parents[1] / "src" / "agent.json"


@pytest.fixture
def conversation() -> Iterator[AgentConversation]:
    with agent_conversation("{executor}", card_file=CARD) as conversation:
        yield conversation


def test_the_card_is_the_agents(conversation: AgentConversation) -> None:
    card = conversation.card()
    assert card["name"] == {name!r}
    assert [skill["id"] for skill in card["skills"]] == ["reply"]


def test_the_agent_answers(conversation: AgentConversation) -> None:
    task = conversation.send("hello")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == {name!r} + " heard: hello"


def test_a_second_turn_stays_in_the_conversation(conversation: AgentConversation) -> None:
    first = conversation.send("hello")
    second = conversation.send("and again")
    # The first task completed, so the second message is a new task in the same context. (Had the
    # agent asked a question, TASK_STATE_INPUT_REQUIRED, the second would have answered it: same task.)
    assert second["contextId"] == first["contextId"]
    assert second["id"] != first["id"]
    assert second["artifacts"][0]["parts"][0]["text"] == {name!r} + " heard: and again"
'''

SAMCONFIG = """\
# Defaults for `sam build` and `sam deploy` (run `sam deploy --guided` once to adjust them).
version = 0.1

[default.global.parameters]
stack_name = "{stack}"

[default.build.parameters]
cached = true
parallel = true

[default.validate.parameters]
lint = true

[default.deploy.parameters]
capabilities = "CAPABILITY_IAM"
confirm_changeset = true
resolve_s3 = true
s3_prefix = "{stack}"
# Who may call: AWS_IAM (SigV4-signed requests only; the template's default), Jwt (with JwtIssuer and
# JwtAudience), or Open, which makes the API PUBLIC: anyone on the internet can call the agent (the
# stack's PublicApiWarning output says so). Choose Open only on purpose.
parameter_overrides = "ExecutorPath=\\"{executor}\\" AuthMode=\\"AWS_IAM\\" LogLevel=\\"INFO\\""
"""

PYPROJECT = """\
[project]
name = "{project}"
version = "0.1.0"
requires-python = ">=3.11"
# The kit with its local stack ([dev]), from kit/ (`pip install --find-links kit -e .`); the deployed
# functions get the kit from kit/requirements.txt.
dependencies = ["{requirement}", "pytest>=8"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""

GITIGNORE = """\
.venv/
.venv-sam/
__pycache__/
*.pyc
.pytest_cache/
.aws-sam/
"""

README = """\
# {name}

An A2A agent on AWS serverless (API Gateway, Lambda, DynamoDB, SQS, S3), built on the a2a-serverless
kit, which `kit/` holds.

```bash
a2a-serverless dev          # run it locally: the whole stack on moto, your agent, your card
python -m pytest            # test it (the agent on the in-memory runtime)
```

In a fresh clone, make the project's virtual environment first (Python 3.11 or later): it installs
the kit from `kit/` with its local stack, and pytest:

```bash
python3 -m venv .venv && .venv/bin/pip install --find-links kit -e .
source .venv/bin/activate
```

* `src/{package}/agent.py`: your agent (`Agent.execute`). Its card: `src/agent.json` (name,
  description, version, skills).
* `tests/test_agent.py`: its test. `agent_conversation` (from `a2a_serverless_dev.testing`)
  runs the agent in process; each `send(text)` returns the task, and the next one continues it
  while it is open (a question asked, `TASK_STATE_INPUT_REQUIRED`), so a multi-turn agent is tested
  turn by turn.
* `template.yaml`: the deployment (the kit's template with your code as the functions' code);
  `kit/requirements.txt` says which kit the core layer installs.

## The kit

{kit}

## Deploy

`sam`, the AWS SAM CLI, goes in a virtual environment of its own, never the project's `.venv` (it
pins exact boto3 and click versions, which would downgrade the kit's boto3, botocore and click):

```bash
python3 -m venv .venv-sam && .venv-sam/bin/pip install aws-sam-cli    # once (.venv-sam/ is git-ignored)
PATH="$PWD/.venv-sam/bin:$PATH" a2a-serverless build                    # sam build, with a real Python 3.13
.venv-sam/bin/sam deploy --guided                                       # stack {stack}
```

(`pipx install aws-sam-cli`, or AWS's installer, puts a `sam` on your `PATH` instead.) `build` is
`sam build` with a Python 3.13 first on `PATH`, the functions' runtime: install one if you have none
(`pyenv install 3.13`). Who may call the agent is `AuthMode`: `AWS_IAM` by default (SigV4-signed
requests only), `Jwt` (your issuer and audience), or `Open`, which makes the agent public to anyone
on the internet.
"""

KIT_WHEEL = """\
The kit is not on PyPI yet: `kit/` holds the kit this project was made with, as a wheel
(`a2a_serverless-<version>-py3-none-any.whl`), and both `kit/requirements.txt` (what `sam build`
installs into the core layer) and `pyproject.toml` (your `.venv`) pin its version. Commit `kit/`,
the wheel with it: a clone builds, tests and deploys with the same kit, wherever it is checked out.
To move to a newer kit, run `a2a-serverless init --upgrade-kit .` here with that kit's
`a2a-serverless` (from its checkout:
`/path/to/a2a-serverless/.venv/bin/a2a-serverless init --upgrade-kit .`): it replaces the wheel and
the two pins. Then run `.venv/bin/pip install --find-links kit -e .` again, and commit."""

KIT_REQUIREMENT = """\
`kit/requirements.txt` names the kit the core layer installs (`{requirement}`); `pyproject.toml`
names the same for your `.venv`."""
