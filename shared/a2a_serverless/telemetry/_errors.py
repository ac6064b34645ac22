"""The one error of tracing's configuration (its own module: the switch and the exporters' setup
both raise it, and the switch imports the setup)."""

from __future__ import annotations

__all__ = ["TracingConfigError"]


class TracingConfigError(ValueError):
    """``A2A_TRACING`` names an exporter that does not exist, ``file`` lacks its directory, or an
    exporter's settings cannot be used (``A2A_TRACING_SIGV4`` without a region or credentials)."""
