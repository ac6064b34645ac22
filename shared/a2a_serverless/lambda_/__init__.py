"""Adapters from Lambda events to the core: API Gateway (buffered, via mangum: :mod:`.http`), the REST
authorizer (:mod:`.authorizer`, and :mod:`.oidc` for its ``jwt`` mode), SQS (:mod:`.sqs`), the
scheduled sweeper (:mod:`.schedule`), push delivery (:mod:`.push`), and the workers' executor
preload (:mod:`.preload`).

Nothing is imported here: each function imports the one adapter it runs, so the authorizer's cold
start does not load the app, the models and the store that :mod:`.http` needs, nor the sweeper's the
batch processing that :mod:`.sqs` needs."""

__all__: list[str] = []
