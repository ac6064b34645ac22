"""What the specification says, written down once for the tests to check the product against
(deliberately not read from the product's own method table)."""

from __future__ import annotations

__all__ = ["V1_METHODS"]

V1_METHODS = (
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
)
"""The A2A v1.0 methods (A2A specification, section 3.1 Core Operations), in the specification's order."""
