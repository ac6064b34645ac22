"""Adapters from Lambda events to the core: API Gateway (buffered, via mangum: :mod:`.http`), the REST
authorizer (:mod:`.authorizer`, and :mod:`.oidc` for its ``jwt`` mode), SQS (:mod:`.sqs`), the
scheduled sweeper (:mod:`.schedule`), push delivery (:mod:`.push`), and every function's cold start
(:mod:`.preload`): the start-up checks of what its settings turn on (:mod:`.startup`, which the
local stack and an ``init`` project's tests run too) and the workers' executor.

Nothing is imported here: each function imports the one adapter it runs, so the authorizer's cold
start does not load the app, the models and the store that :mod:`.http` needs, nor the sweeper's the
batch processing that :mod:`.sqs` needs."""

__all__: list[str] = []
