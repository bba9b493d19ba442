"""Progress reporting: the callback type every long-running layer accepts (no I/O here).

Library code reports progress through an injected callback, never by printing; the CLI turns the calls
into a bar on a terminal or log lines otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "no_progress"]

Progress = Callable[[str, int, int], None]
"""progress(stage, done, total): called by long loops; the CLI draws a bar from it."""


def no_progress(stage: str, done: int, total: int) -> None:
    """Default progress callback: does nothing."""
