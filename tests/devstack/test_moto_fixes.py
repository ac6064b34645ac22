"""The moto fixes check, at start, that moto still has the shape each fix was written for."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from typing import Any

import pytest

from a2a_serverless_dev import moto_fixes
from a2a_serverless_dev._moto import running_moto
from a2a_serverless_dev.moto_fixes import FIXES, Fix, MotoShapeError, check_shapes


@pytest.mark.parametrize("fix", [pytest.param(fix, id=fix.name) for fix in FIXES])
def test_every_fix_finds_the_installed_moto_as_it_expects(fix: Fix) -> None:
    # Given the moto this project pins, When a fix checks its targets, Then none has changed.
    assert fix.problems() == []
    fix.check()


def test_the_checks_still_pass_once_the_fixes_are_installed() -> None:
    # Installing twice (every in-process server start does) reads moto's own signatures through
    # the fixes' wrappers.
    moto_fixes.install_all()
    moto_fixes.install_all()
    check_shapes()


@pytest.mark.parametrize("fix", [pytest.param(fix, id=fix.name) for fix in FIXES])
def test_every_fix_documents_moto_aws_a_reproduction_and_the_upstream_report(fix: Fix) -> None:
    doc = inspect.getdoc(importlib.import_module(fix.module)) or ""
    for part in (
        "**moto's behaviour**",
        "**AWS's behaviour**",
        "**A minimal reproduction**",
        "**The upstream report**",
    ):
        assert part in doc, f"{fix.name}: {part} missing"
    assert "Title:" in doc


def _different_parameters(self: Any, table: str, items: Any) -> None:
    raise AssertionError("never called")


@pytest.mark.parametrize(
    ("fix_name", "change"),
    [
        pytest.param(
            "transactions",
            lambda mp: mp.setattr("moto.dynamodb.models.DynamoDBBackend.transact_write_items", _different_parameters),
            id="transactions-reparametrized",
        ),
        pytest.param(
            "fifo_receives",
            lambda mp: mp.setattr("moto.sqs.models.SQSBackend.receive_message", _different_parameters),
            id="fifo_receives-reparametrized",
        ),
        pytest.param(
            "partition_queries",
            lambda mp: mp.delattr("moto.dynamodb.models.table.Table.all_items"),
            id="partition_queries-method-gone",
        ),
        pytest.param(
            "item_size",
            lambda mp: mp.setattr(
                "moto.dynamodb.models.dynamo_type.LimitedSizeDict.__setitem__", _different_parameters
            ),
            id="item_size-reparametrized",
        ),
        pytest.param(
            "item_size",
            lambda mp: mp.delattr("moto.dynamodb.exceptions.ItemSizeTooLarge"),
            id="item_size-exception-gone",
        ),
        pytest.param(
            "module_list",
            lambda mp: mp.setattr("moto.backends.list_of_moto_modules", "not callable"),
            id="module_list-not-callable",
        ),
        pytest.param(
            "partition_queries",
            lambda mp: mp.setattr("moto.dynamodb.models.table.Table.__init__", _table_without_items),
            id="partition_queries-private-attribute-gone",
        ),
    ],
)
def test_a_changed_target_fails_the_check_naming_its_fix(fix_name: str, change: Any) -> None:
    with pytest.MonkeyPatch.context() as mp:
        # Given a moto whose target of one fix changed
        change(mp)
        # When the fixes are checked (or installed), Then the check fails naming that fix
        with pytest.raises(MotoShapeError) as raised:
            check_shapes()
        assert raised.value.fixes == [fix_name]
        message = str(raised.value)
        assert f"moto fix {fix_name!r}" in message
        assert all(version in message for version in moto_fixes.TESTED_MOTO_VERSIONS)
        with pytest.raises(MotoShapeError):
            moto_fixes.install_all()


def _table_without_items(self: Any, *args: Any, **kwargs: Any) -> None:
    # a moto whose Table keeps its items under another name
    self.hash_key_attr, self.range_key_attr = "pk", "sk"


def test_nothing_is_patched_when_a_check_fails() -> None:
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("moto.sqs.models.SQSBackend.receive_message", _different_parameters)
        before = LimitedSizeDict.__dict__.get("__setitem__")
        with pytest.raises(MotoShapeError):
            moto_fixes.install_all()
        assert LimitedSizeDict.__dict__.get("__setitem__") is before


def test_the_local_stack_refuses_to_start_moto_with_a_changed_target() -> None:
    # The stack runs moto in a process of its own: the parent checks before starting it.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("moto.sqs.models.SQSBackend.receive_message", _different_parameters)
        with pytest.raises(MotoShapeError, match="fifo_receives"), running_moto(process=True):
            raise AssertionError("moto started")


_DEV_WITH_A_CHANGED_MOTO = """
import sys
import moto.sqs.models
from a2a_serverless_dev import cli

def receive_message(self, other):  # a moto whose receive_message takes other parameters
    raise AssertionError("not called")

moto.sqs.models.SQSBackend.receive_message = receive_message
sys.exit(cli.main(["dev", "--port", "0"]))
"""


def test_the_dev_command_says_why_in_one_line_without_a_traceback() -> None:
    # Given a moto the fixes do not fit, when `a2a-serverless dev` starts (in a process of its own:
    # the command sets up logging and the import path for the whole process), then it exits 1 with
    # the reason as its error line, not a traceback.
    done = subprocess.run(
        [sys.executable, "-c", _DEV_WITH_A_CHANGED_MOTO], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "a2a-serverless dev: error: moto " in done.stderr
    assert "moto fix 'fifo_receives'" in done.stderr
    assert "Traceback" not in done.stderr
