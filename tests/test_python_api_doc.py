"""docs/python-api.md runs as written: its ```python blocks are executed in order, in one namespace.

Like sqlite-utils' documentation tests: the page is the API's tutorial, so it must not drift from the code.
The blocks run in a scratch directory holding links to the repository's configs/ and sample_data/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import ROOT

PAGE = ROOT / "docs" / "python-api.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_the_page_has_code_to_run():
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    assert "dpsynth.release(table, epsilon=1.0, rng=0)" in blocks[0]  # the zero-config call comes first


def test_a_failing_block_fails():
    """The harness below really executes the blocks (a block that raises is not silently skipped)."""
    with pytest.raises(AssertionError):
        _run(["assert 1 == 2"], {})


def _run(blocks: list[str], namespace: dict) -> None:
    for i, block in enumerate(blocks):
        exec(compile(block, f"{PAGE.name}[block {i + 1}]", "exec"), namespace)  # noqa: S102  (our own docs)


def test_python_api_page_runs_as_written(tmp_path: Path, monkeypatch):
    for name in ("configs", "sample_data"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    _run(python_blocks(PAGE.read_text(encoding="utf-8")), namespace)
    assert (tmp_path / "synth.csv").is_file() and (tmp_path / "adult.dpm").is_file()
