"""Pydantic models of every A2A v1.0 message (proto ``lf.a2a.v1``) in ProtoJSON wire form."""

from ._base import ProtoModel
from ._types import format_timestamp, utc_now
from .card import *  # noqa: F403
from .card import __all__ as _card_all
from .core import *  # noqa: F403
from .core import __all__ as _core_all
from .requests import *  # noqa: F403
from .requests import __all__ as _requests_all

__all__ = ["ProtoModel", "format_timestamp", "utc_now", *_card_all, *_core_all, *_requests_all]
