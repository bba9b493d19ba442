"""The console script's exit (dpsynth.cli._common.main): the command's status, passed to ``os._exit`` after stdout
and stderr are flushed, so interpreter teardown (with Arrow's worker threads alive, "terminate called without an
active exception", exit 134) cannot replace it."""

from __future__ import annotations

import sys

import pytest

from dpsynth.cli import _common


class _Left(Exception):
    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@pytest.mark.parametrize(("argv", "code"), [(["--help"], 0), (["no-such-command"], 2),
                                            (["plan", "-c", "/nonexistent/x.yaml"], 66)])
def test_main_leaves_with_the_commands_status(monkeypatch, capsys, argv, code):
    def leave(status: int):
        raise _Left(status)

    monkeypatch.setattr(_common.os, "_exit", leave)
    monkeypatch.setattr(sys, "argv", ["dpsynth", *argv])
    with pytest.raises(_Left) as left:
        _common.main()
    assert left.value.code == code
