"""Regenerate (or check) the generated part of docs/cli.md from the ``--help`` of every command.

    python tools/cli_docs.py           # rewrite the region between the markers in docs/cli.md
    python tools/cli_docs.py --check   # exit 1, saying so, when docs/cli.md is out of date

Like ``cog --check``: the text between ``<!-- cli-help: begin -->`` and ``<!-- cli-help: end -->`` is the
``--help`` output of ``dpsynth`` and of each of its commands and subcommands, rendered by typer's
``CliRunner`` at a fixed width of 100 columns without colour, so that it does not depend on the terminal.
Everything outside the markers is written by hand.  ``tests/test_cli_docs.py`` runs the check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import typer
import typer.rich_utils
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
BEGIN, END = "<!-- cli-help: begin -->", "<!-- cli-help: end -->"
WIDTH = 100
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def command_paths(app: typer.Typer) -> list[list[str]]:
    """Every visible command path, depth first in the order ``--help`` lists them: ``[], ["release"], ...``."""
    root = typer.main.get_command(app)
    paths: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:  # typer's (vendored) click Command or Group
        paths.append(path)
        if hasattr(cmd, "list_commands"):
            ctx = cmd.context_class(cmd, info_name=" ".join(["dpsynth", *path]))
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name])

    walk(root, [])
    return paths


def help_text(app: typer.Typer, path: list[str]) -> str:
    """``dpsynth PATH --help`` at WIDTH columns, without colour and without trailing spaces."""
    saved = typer.rich_utils.MAX_WIDTH, typer.rich_utils.FORCE_TERMINAL
    typer.rich_utils.MAX_WIDTH, typer.rich_utils.FORCE_TERMINAL = WIDTH, False
    try:
        res = CliRunner().invoke(app, [*path, "--help"], prog_name="dpsynth",
                                 env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"})
    finally:
        typer.rich_utils.MAX_WIDTH, typer.rich_utils.FORCE_TERMINAL = saved
    if res.exit_code != 0:
        raise RuntimeError(f"dpsynth {' '.join(path)} --help exited {res.exit_code}: {res.output[-300:]}")
    lines = [line.rstrip() for line in _ANSI.sub("", res.stdout).splitlines()]
    return "\n".join(lines).strip("\n")


def generated(app: typer.Typer) -> str:
    """The generated region: one section per command with its ``--help`` in a text block."""
    parts = []
    for path in command_paths(app):
        title = " ".join(["dpsynth", *path])
        parts.append(f"### `{title}`\n\n```text\n{help_text(app, path)}\n```\n")
    return "\n".join(parts)


def render(doc: str, app: typer.Typer) -> str:
    """``doc`` with the region between the markers replaced by :func:`generated`."""
    head, sep, rest = doc.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{DOC}: the markers {BEGIN} and {END} are missing")
    return f"{head}{BEGIN}\n\n{generated(app)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    from dpsynth.cli import app

    current = DOC.read_text(encoding="utf-8")
    fresh = render(current, app)
    if "--check" in argv:
        if fresh != current:
            print(f"{DOC.relative_to(ROOT)} is out of date with --help: run python tools/cli_docs.py",
                  file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
        print(f"rewrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
