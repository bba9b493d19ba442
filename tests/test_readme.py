"""The README's commands and config example run as written (so they cannot drift; issue 15 item 8).

Like sqlite-utils' docs tests: the fenced YAML under "Configuration" and the command block under
"Using the CLI" are extracted from README.md and run, in a scratch directory holding the shipped
configs and a 2,000-row head of sample_data/adult.csv (the same columns, a faster run).
"""

from __future__ import annotations

import gzip
import re
import shlex
from pathlib import Path

import pytest

from dpsynth.cli import app
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def config_example() -> str:
    return re.search(r"```yaml\n(.*?)```", _section("Configuration"), re.DOTALL).group(1)


def cli_examples() -> list[str]:
    """The first indented block of "Using the CLI": one shell command per line (comments stripped)."""
    block = re.search(r"\n\n((?:    .*\n)+)", _section("Using the CLI")).group(1)
    return [line.strip().split("   #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    (tmp_path / "sample_data").mkdir()
    lines = (ROOT / "sample_data" / "adult.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "sample_data" / "adult.csv").write_text("".join(lines[:2001]), encoding="utf-8")
    return tmp_path


def test_config_example_runs_on_sample_data(runner, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    (scratch / "example.yaml").write_text(config_example(), encoding="utf-8")
    res = runner.invoke(app, ["release", "-c", "example.yaml", "-i", "sample_data/adult.csv", "-o", "out.csv",
                              "--silent"])
    assert res.exit_code == 0, res.stderr
    assert (scratch / "out.csv").read_text().splitlines()[0] == "age,fnlwgt,education-num,workclass"


def _run_pipeline(runner, command: str, cwd: Path) -> None:
    """Run one README command line in-process: ``[cat FILE |] dpsynth ... [| gzip] [> OUT]``.

    The shell parts the README uses (cat, gzip, a redirect) are done here, and ``-n`` (rows to sample) is capped
at 2,000 so that each command costs
    no interpreter start-up; any other shell word fails the test (the README must stay this simple).
    """
    command, _, redirect = command.partition(" > ")
    data: bytes | None = None
    for stage in (s.strip() for s in command.split("|")):
        words = shlex.split(stage)
        if words[0] == "cat" and len(words) == 2 and data is None:
            data = (cwd / words[1]).read_bytes()
        elif words[0] == "gzip" and len(words) == 1:
            data = gzip.compress(data or b"")
        elif words[0] == "dpsynth":
            if "-n" in words:  # the README samples 10^8 rows to show it can; the test samples a few
                i = words.index("-n") + 1
                words[i] = str(min(int(words[i]), 2000))
            res = runner.invoke(app, words[1:], input=data)
            assert res.exit_code == 0, (command, res.stderr[-500:])
            data = res.stdout_bytes
        else:
            raise AssertionError(f"README command uses an unsupported shell word: {stage!r}")
    if redirect:
        (cwd / redirect.strip()).write_bytes(data or b"")


def test_cli_examples_run_as_written(runner, scratch, monkeypatch):
    commands = cli_examples()
    assert commands[0].startswith("dpsynth plan") and len(commands) >= 6
    monkeypatch.chdir(scratch)
    for command in commands:
        _run_pipeline(runner, command, scratch)
    assert gzip.decompress((scratch / "synth.csv.gz").read_bytes()).startswith(b"age,")
    assert "\nschema:\n" in (scratch / "draft.yaml").read_text()
