"""Adapters from Lambda events to the core: API Gateway (buffered, via mangum: :mod:`.http`), the REST
authorizer (:mod:`.authorizer`), SQS (:mod:`.sqs`) and push delivery (:mod:`.push`).

Nothing is imported here: each function imports the one adapter it runs, so the authorizer's cold
start does not load the app, the models and the store that :mod:`.http` needs."""

__all__: list[str] = []
