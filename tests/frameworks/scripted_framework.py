"""A framework whose run is a script (``Scripted``): the events it yields are what a real adapter
yields, for the bridge's suite and as the sixth framework of the shared stories."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from a2a_serverless.frameworks import FrameworkEvent, FrameworkExecutor, Turn

Script = Callable[[Turn], AsyncGenerator[FrameworkEvent, None]]


class Scripted(FrameworkExecutor):
    """A framework whose run is a script: the events it yields are what a real adapter yields."""

    framework = "scripted"

    def __init__(self, script: Script, **options: Any) -> None:
        super().__init__(**options)
        self.script = script

    def run(self, turn: Turn) -> AsyncGenerator[FrameworkEvent, None]:
        return self.script(turn)
