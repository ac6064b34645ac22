"""Fix ``module_list``: moto's server lists its package directory once, not on every request.

**moto's behaviour** (moto 5.2.5, ``moto/backends.py``, ``list_of_moto_modules``, called by
``moto/moto_server/werkzeug_app.py`` ``DomainDispatcherApplication.infer_service_region_host`` for
each request, inside the lock every request takes): a ``listdir`` of moto's package and ~200
``isdir`` calls per request, a few milliseconds of serialized work that queued every request of
the local stack behind it under load.

**AWS's behaviour**: none to match (this is moto's server, not an AWS API); AWS endpoints do not
serialize requests. The fix changes no answer, only the cost of routing a request.

**A minimal reproduction**::

    import timeit
    from moto import backends
    print(timeit.timeit(lambda: list(backends.list_of_moto_modules()), number=100) / 100)
    # a few milliseconds per call, paid by every request the server answers

**The upstream report** (for getmoto/moto)::

    Title: moto server: list_of_moto_modules() scans the package directory on every request

    `DomainDispatcherApplication` calls `backends.list_of_moto_modules()` while resolving the
    backend of each request, under its lock. The function lists moto's package directory and
    stats every entry, which cannot change while the process runs. Caching the result (e.g.
    `functools.cache`) removes a few milliseconds of serialized work per request, noticeable
    when a test drives many concurrent requests through `ThreadedMotoServer`.

    Reproduction: (the snippet above). moto 5.2.5, Python 3.11.

The fix replaces ``moto.backends.list_of_moto_modules`` with a function returning the list
computed once (the server reads it through the module, so the replacement is seen).
"""

from __future__ import annotations

from ._shape import Fix, Target

__all__ = ["FIX"]


def install() -> None:
    """Cache the module list for the rest of the process (idempotent)."""
    import moto.backends

    if getattr(moto.backends.list_of_moto_modules, "_a2a_cached", False):
        return
    modules = tuple(moto.backends.list_of_moto_modules())

    def cached() -> tuple[str, ...]:
        return modules

    cached._a2a_cached = True  # type: ignore[attr-defined]
    moto.backends.list_of_moto_modules = cached


FIX = Fix(
    name="module_list",
    module=__name__,
    install=install,
    targets=(
        Target("moto.backends:list_of_moto_modules", ()),
        # The server must look the function up through the module (``backends.list_of_moto_modules``)
        # for the replacement to be seen.
        Target("moto.moto_server.werkzeug_app:backends", callable=False, attributes=("list_of_moto_modules",)),
    ),
)
