"""moto's server in this process, standing in for DynamoDB, SQS and S3 on a free local port."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from moto.server import ThreadedMotoServer

from ._moto_item_size import install_item_size_fix
from ._moto_query import install_partition_queries
from ._moto_sqs import drain_receives, install_fifo_receive_lock, resume_receives
from ._moto_transactions import install_fast_transactions

__all__ = ["drain_receives", "moto_server"]


@contextmanager
def moto_server(host: str = "127.0.0.1") -> Iterator[str]:
    """Run moto's server on ``host`` and a free port; yield its endpoint URL; stop it on exit."""
    # werkzeug logs every request at INFO, and the pollers long-poll once a second each.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    install_fast_transactions()  # moto's own copies whole tables per transaction item
    install_fifo_receive_lock()  # moto's receive can hand one FIFO group to two pollers at once
    install_item_size_fix()  # moto counts a replaced attribute twice against the item size limit
    _cache_module_list()  # moto lists its package directory on every request, under a global lock
    install_partition_queries()  # moto sorts the whole table on every Query
    resume_receives()
    server = ThreadedMotoServer(ip_address=host, port=0, verbose=False)
    server.start()
    try:
        bound_host, port = server.get_host_and_port()
        yield f"http://{bound_host}:{port}"
    finally:
        drain_receives()
        server.stop()


def _cache_module_list() -> None:
    """moto's server finds each request's backend by listing its own package directory (a
    ``listdir`` and ~200 ``isdir`` calls) inside the lock every request takes: a few milliseconds
    of serialized work per call, which under the local stack's load queued every request behind
    it. The list cannot change while the process runs (idempotent)."""
    import moto.backends

    if getattr(moto.backends.list_of_moto_modules, "_a2a_cached", False):
        return
    modules = tuple(moto.backends.list_of_moto_modules())

    def cached() -> tuple[str, ...]:
        return modules

    cached._a2a_cached = True  # type: ignore[attr-defined]
    moto.backends.list_of_moto_modules = cached
