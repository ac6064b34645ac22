"""Shared checks for push-notification configs (inline on SendMessage and the four operations)."""

from __future__ import annotations

import uuid

from ..errors import FieldViolation, InvalidParamsError, PushNotificationNotSupportedError
from ..models import TaskPushNotificationConfig
from ..ports import Scope
from ..push.urls import WebhookURLError, validate_webhook_url
from ..runtime import Runtime

__all__ = ["prepare_config", "require_push_capability"]


def require_push_capability(runtime: Runtime) -> None:
    if not runtime.settings.push_notifications:
        raise PushNotificationNotSupportedError()


def prepare_config(
    config: TaskPushNotificationConfig, scope: Scope, task_id: str, runtime: Runtime, *, field: str = "url"
) -> TaskPushNotificationConfig:
    """The config as it will be stored: URL validated, ids and tenant filled in."""
    try:
        validate_webhook_url(config.url, allow_private=runtime.settings.allow_private_webhooks)
    except WebhookURLError as exc:
        raise InvalidParamsError(violations=[FieldViolation(field, str(exc))]) from None
    return config.model_copy(update={"id": config.id or str(uuid.uuid4()), "task_id": task_id, "tenant": scope.tenant})
