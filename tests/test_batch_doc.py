"""docs/batch.md runs as written: its ``bash`` blocks, in order, in one bash session; each block's stdout must
match the ``text`` block that follows it under "Output:" (``...`` stands for any text in a line)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

DOC = ROOT / "docs" / "batch.md"
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
_MARK = "@@dpsynth-batch-doc-block-end@@"


def blocks(text: str) -> list[tuple[str, str | None]]:
    """(bash source, expected stdout or None) for each ``bash`` block, in order."""
    found = [(m.group(1), m.group(2), m.start(), m.end()) for m in _BLOCK.finditer(text)]
    out = []
    for i, (lang, body, _, end) in enumerate(found):
        if lang != "bash":
            continue
        expected = None
        if i + 1 < len(found) and found[i + 1][0] == "text":
            between = text[end:found[i + 1][2]]
            if between.strip() == "Output:":
                expected = found[i + 1][1]
        out.append((body, expected))
    return out


def matches(expected: str, actual: str) -> bool:
    """Line by line; ``...`` in an expected line matches any text."""
    exp, act = expected.rstrip("\n").split("\n"), actual.rstrip("\n").split("\n")
    if len(exp) != len(act):
        return False
    return all(re.fullmatch(".*".join(map(re.escape, e.split("..."))), a) for e, a in zip(exp, act))


def test_the_doc_has_blocks_with_outputs():
    found = blocks(DOC.read_text())
    assert len(found) >= 6 and all(expected is not None for _, expected in found)


def test_matches_is_strict_outside_the_ellipsis():
    assert matches("exit ...: a\nb\n", "exit 66: a\nb\n")
    assert not matches("exit 66\n", "exit 65\n")
    assert not matches("a\n", "a\nb\n")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_batch_walkthrough_runs_as_documented(tmp_path):
    bindir = Path(sys.executable).parent
    if shutil.which("dpsynth", path=str(bindir)) is None:
        pytest.skip("no dpsynth entry point beside this interpreter (install the package)")
    found = blocks(DOC.read_text())
    script = "".join(f"{body}\necho '{_MARK}'\n" for body, _ in found)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT),
           "WORK": str(tmp_path), "SAMPLE_DATA": str(ROOT / "sample_data"), "COLUMNS": "100"}
    env.pop("DPSYNTH_DEBUG", None)
    res = subprocess.run(["bash", "-c", script], check=False, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    outputs = res.stdout.split(_MARK + "\n")
    assert len(outputs) == len(found) + 1, (res.stdout, res.stderr)
    for (body, expected), actual in zip(found, outputs):
        assert matches(expected, actual), f"block:\n{body}\nexpected:\n{expected}\ngot:\n{actual}\nstderr:\n{res.stderr}"
