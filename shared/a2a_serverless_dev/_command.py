"""What every ``a2a-serverless`` subcommand shares: the program's name, its one-line errors, its
argument types, and the command line the stack prints for the user to run."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["PROG", "command_line", "fail", "positive"]

PROG = "a2a-serverless"


def fail(message: str, *, code: int, command: str = "dev") -> int:
    """Say what went wrong in one line on standard error; return the exit code."""
    sys.stderr.write(f"{PROG} {command}: error: {message}\n")
    return code


def positive(value: str) -> int:
    number = int(value) if value.isdigit() else 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return number


def command_line(*args: str) -> str:
    """This command with ``args``, as the shell that started this process can run it: by its name
    when that name on ``PATH`` is this installation's (``make dev`` does not put ``.venv/bin`` on
    it), else by its path, else through this interpreter."""
    script = Path(sys.executable).with_name(PROG)
    found = shutil.which(PROG)
    if found is not None and script.exists() and Path(found).resolve() == script.resolve():
        head = [PROG]
    elif script.exists():
        head = [str(script)]
    else:
        head = [sys.executable, "-m", "a2a_serverless_dev"]
    return shlex.join([*head, *args])
