"""The developer kit of a2a-serverless: everything that runs on a developer's machine and never on
Lambda. It imports the runtime package, :mod:`a2a_serverless`; no module of the runtime imports it
(``tests/test_architecture.py``), so the core layer ships the runtime package as it is and nothing
of this one (``shared/layer/build.py``). Its loggers are in the runtime's tree (:mod:`._loggers`).

* The command: :mod:`.cli` (the ``a2a-serverless`` console script; ``python -m a2a_serverless_dev``).
* The local stack (``a2a-serverless dev``, ``docs/local-stack.md``): :mod:`.stack` on a moto server
  (:mod:`.moto_fixes`, the fixes of moto's internals it needs), the resources of ``template.yaml``
  (:mod:`.resources`), the functions as local processes fed by pollers (:mod:`.pollers`,
  :mod:`.stream_pollers`, :mod:`.schedule_pollers`), durable executions on the SDK's local runner
  (:mod:`.durable`, :mod:`.local_durable`).
* The console (:mod:`.console`, at ``/_console``) and the trace reader it serves (:mod:`.traces`).
* Agent projects: ``init`` (:mod:`.project`, from the files under ``kit/``: the template, the
  gateway's script, the core layer's build), the test helper (:mod:`.testing`), the check of a
  ``sam build`` tree (:mod:`.build_check`), test events for the functions (:mod:`.events`).
"""
