"""The local stack's fixes of moto: where moto's DynamoDB and SQS differ from AWS in ways the
local stack depends on, or cost what AWS does not.

Each fix is one private submodule whose docstring says moto's behaviour, AWS's behaviour (with
the documentation it comes from), a minimal reproduction, and the upstream report ready to file
at getmoto/moto:

* :mod:`._transactions` (``transactions``): TransactWriteItems without deep-copying tables, and
  single-item writes atomic with transactions;
* :mod:`._sqs` (``fifo_receives``): FIFO receives that never hand one message group to two
  consumers, and long polls that wait instead of spinning;
* :mod:`._item_size` (``item_size``): the 400 KB limit applied to the item that results;
* :mod:`._module_list` (``module_list``): the server's module list computed once;
* :mod:`._query` (``partition_queries``): a Query that reads its partition, not the whole table.

They patch moto's private internals, so moto is pinned (``pyproject.toml``) to the series they were
tested with (:data:`TESTED_MOTO_VERSIONS`), and :func:`install_all` first checks that every target
still has the shape its fix expects (:func:`check_shapes`): a changed moto stops the local stack at
start with :class:`MotoShapeError`, naming the fix and the target, instead of half-working.
"""

from __future__ import annotations

from . import _item_size, _module_list, _query, _sqs, _transactions
from ._item_size import item_size_fix
from ._query import partition_queries
from ._shape import TESTED_MOTO_VERSIONS, Fix, MotoShapeError, Target
from ._sqs import drain_receives, end_waiting_receives, resume_receives
from ._transactions import WRITE_LOCK, fast_transactions

__all__ = [
    "FIXES",
    "TESTED_MOTO_VERSIONS",
    "WRITE_LOCK",
    "Fix",
    "MotoShapeError",
    "Target",
    "check_shapes",
    "drain_receives",
    "end_waiting_receives",
    "fast_transactions",
    "install_all",
    "item_size_fix",
    "partition_queries",
    "resume_receives",
]

FIXES: tuple[Fix, ...] = (
    _transactions.FIX,
    _sqs.FIX,
    _item_size.FIX,
    _module_list.FIX,
    _query.FIX,
)
"""Every fix, in the order :func:`install_all` installs them."""


def check_shapes() -> None:
    """Raise :class:`MotoShapeError` (every changed target of every fix) if the installed moto is
    not shaped as the fixes expect; patch nothing."""
    problems = [(fix, target, problem) for fix in FIXES for target, problem in fix.problems()]
    if problems:
        raise MotoShapeError(problems)


def install_all() -> None:
    """Check every fix's targets, then install every fix for the rest of the process
    (idempotent). Nothing is patched if a check fails."""
    check_shapes()
    for fix in FIXES:
        fix.install()
