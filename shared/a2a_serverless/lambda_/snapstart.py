"""Lambda SnapStart's runtime hooks: what a function's snapshot must not keep, and what each restored
execution environment must make again.

With the template's ``SnapStart`` on, Lambda runs a function's init once, when a version is
published, snapshots the initialised process, and starts each new execution environment from that
snapshot (https://docs.aws.amazon.com/lambda/latest/dg/snapstart-uniqueness.html). What the init
made is then shared by every environment restored from it, and used minutes or days later:

* before the snapshot (:func:`before_snapshot`): the process's runtime (the stores, queues and
  signers the init built, with any boto3 client or HTTP connection they opened), the push and
  authorizer services, and boto3's default session (with the credentials it resolved) are
  dropped, so the snapshot holds no connection and no credentials; each is built again, from the
  restored environment's own credentials, at the first invocation that needs it. What building
  them imports (boto3, a client's machinery) is imported now, and the service data their clients
  read (models, endpoint rules) is read now and kept without a session, so the snapshot keeps both
  and a restore pays neither again;
* after each restore (:func:`after_restore`): the same is dropped again (anything made between),
  and Python's ``random`` is seeded anew from the operating system, so environments restored from
  one snapshot do not draw the same numbers (the kit's jitters and the demo agent use it;
  ``uuid4`` and ``secrets`` read the operating system's randomness at each call, and need nothing).

The kit takes nothing unique per environment at init (no id, no temporary file): ids are made per
request. The hooks are registered by :func:`register`, which each Lambda entry point's cold start
(:func:`a2a_serverless.lambda_.preload.cold_start`) calls at import; ``snapshot_restore_py``
exists only in Lambda's Python runtime, so elsewhere (tests, the local stack, ``sam local``) nothing
is registered, and a function without SnapStart never calls them.

Two things the hooks cannot reach. The executor the runtime made is dropped with it (it is made
again at the first work item), but what an agent's module makes at its import (a client in a module
global) stays in the snapshot: an agent registers its own hooks with ``snapshot_restore_py``. And the
streaming gateway's app runs under the Lambda Web Adapter, not Lambda's Python runtime, which is what
calls the hooks: there none run. Its snapshot holds only what its init made, which is the imports,
the checked settings and ``random``'s state (the app builds its runtime, clients and credentials at
the first request), and, since no hook does it, what :func:`before_snapshot` loads (boto3 and the
clients' service data, no session: :func:`a2a_serverless.lambda_.preload.cold_start` loads them in a
SnapStart version's init), so restored gateways share only the seed of their retry jitter."""

from __future__ import annotations

import random
import sys

from ._observability import logger

__all__ = ["after_restore", "before_snapshot", "register"]


def before_snapshot() -> None:
    """Drop what holds connections or credentials, before Lambda snapshots the initialised process;
    and import and read what the first AWS clients of a restored environment would (boto3, a
    client's machinery, the service data: :func:`a2a_serverless.aws.load_client_code`), so the
    snapshot keeps it."""
    _forget_connections()
    from ..aws import load_client_code

    load_client_code()


def after_restore() -> None:
    """Seed ``random`` from the operating system, and drop what may hold a connection made before."""
    random.seed()
    _forget_connections()
    logger.debug("restored from a SnapStart snapshot")


def _forget_connections() -> None:
    """Each only if its module was imported (else it holds nothing, and importing it would cost the
    restore): the runtime, the push and authorizer services, boto3's default session (which caches
    the credentials it resolved; ``boto3.client`` uses it)."""
    wiring = sys.modules.get("a2a_serverless.wiring")
    if wiring is not None:
        wiring.reset_runtime()
    push = sys.modules.get("a2a_serverless.lambda_.push")
    if push is not None:
        push.reset_push_services()
    authorizer = sys.modules.get("a2a_serverless.lambda_.authorizer")
    if authorizer is not None:
        authorizer.reset_authorizer_services()
    if "boto3" in sys.modules:
        import boto3

        boto3.DEFAULT_SESSION = None


def register() -> bool:
    """Register the hooks with Lambda's runtime (``snapshot_restore_py``); False where it is absent."""
    try:
        from snapshot_restore_py import (  # type: ignore[import-not-found] # Lambda's runtime only
            register_after_restore,
            register_before_snapshot,
        )
    except ImportError:
        return False
    register_before_snapshot(before_snapshot)
    register_after_restore(after_restore)
    return True
