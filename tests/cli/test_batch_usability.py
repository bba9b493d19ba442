"""Issue 15: batch jobs without surprises (YAML as people write it, warnings under -q, small things)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dpsynth.cli import app

ADULT_CFG = "configs/adult.yaml"
NLTCS_CFG = "configs/nltcs.yaml"


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


def _small_nltcs(tmp_path: Path, rows: int = 300) -> Path:
    import pandas as pd

    p = tmp_path / "small.csv"
    pd.read_csv("sample_data/nltcs.csv", nrows=rows).to_csv(p, index=False)
    return p


def _nltcs_config(tmp_path: Path, text_changes: dict[str, str] | None = None, **changes) -> Path:
    raw = yaml.safe_load(Path(NLTCS_CFG).read_text())
    raw.update(changes)
    text = yaml.safe_dump(raw, sort_keys=False)
    for old, new in (text_changes or {}).items():
        assert old in text
        text = text.replace(old, new)
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return p


# ---------------------------------------------------------------- item 2: YAML
def test_exponent_numbers_in_a_config_release(runner, tmp_path):
    """`delta: 1e-5` and `epsilon: 1e0` were 'expected a number, got '1e-5''; now they are numbers."""
    cfg = _nltcs_config(tmp_path, text_changes={"epsilon: 1.0": "epsilon: 1e0\n  delta: 1e-5"})
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(_small_nltcs(tmp_path)),
                              "-o", str(tmp_path / "o.csv"), "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert report["privacy"]["delta_requested"] == 1e-5 and report["privacy"]["epsilon_requested"] == 1.0


def test_duplicate_key_cli(runner, tmp_path):
    cfg = tmp_path / "dup.yaml"
    cfg.write_text(Path(ADULT_CFG).read_text() + "seed: 1\nseed: 2\n")
    res = runner.invoke(app, ["plan", "-c", str(cfg)])
    line = len(Path(ADULT_CFG).read_text().splitlines()) + 2
    assert res.exit_code == 64
    assert res.stderr == (f"dpsynth: error: {cfg}: duplicate key 'seed' at line {line} (first at line {line - 1}); "
                          "keep one of them\n")


def test_yaml_syntax_error_says_what_was_expected(runner, tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("a: 1\nb: {x: [1, 2}\n")
    res = runner.invoke(app, ["plan", "-c", str(cfg)])
    assert res.exit_code == 64
    assert res.stderr == (f"dpsynth: error: {cfg}: invalid YAML at line 2, column 13: expected ',' or ']', "
                          "but got '}' (while parsing a flow sequence)\n")


# ---------------------------------------------------------------- item 6: MWEM default rounds
def test_mwem_default_iterations_adapt_cli(runner, tmp_path):
    """6 columns, k: 2: 15 candidate queries; the default 20 rounds used to exit 64."""
    import pandas as pd

    cols = [f"a{i}" for i in range(6)]
    src = tmp_path / "six.csv"
    pd.read_csv("sample_data/nltcs.csv", nrows=300, usecols=cols).to_csv(src, index=False)
    raw = yaml.safe_load(Path(NLTCS_CFG).read_text())
    raw["schema"]["columns"] = {c: raw["schema"]["columns"][c] for c in cols}
    raw["algorithm"] = {"name": "mwem"}
    raw["workload"] = {"marginals": {"k": 2}}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "o.csv"),
                              "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    details = json.loads((tmp_path / "o.csv.report.json").read_text())["algorithm"]["details"]
    assert details["iterations"] == 15
    assert details["iterations_note"] == ("iterations not set: 15 rounds, one per candidate query "
                                          "(fewer than the default 20)")
    raw["algorithm"] = {"name": "mwem", "params": {"iterations": 20}}
    cfg.write_text(yaml.safe_dump(raw))
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "p.csv"),
                              "--seed", "1", "--silent"])
    assert res.exit_code == 64
    assert res.stderr == ("dpsynth: error: algorithm.params.iterations: 20 rounds but only 15 candidate queries "
                          "(lower iterations, leave it unset, or set reselect: true)\n")


# ---------------------------------------------------------------- item 3: -q keeps warnings
SEEDED_WARNING = ("warning: this release was produced with a fixed seed: its noise can be reproduced by anyone "
                  "who knows the seed; seeded runs are for testing only, never publish them\n")


def test_quiet_keeps_warnings_and_notices_silent_drops_them(runner, tmp_path):
    import pandas as pd

    src = tmp_path / "extra.csv"
    df = pd.read_csv("sample_data/nltcs.csv", nrows=300)
    df["note"] = "x"
    df.to_csv(src, index=False)
    args = ["release", "-c", NLTCS_CFG, "-i", str(src), "--seed", "1", "--force"]
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "q.csv"), "-q"])
    assert res.exit_code == 0
    assert res.stderr == "notice: ignoring 1 input column(s) not in the schema: note\n" + SEEDED_WARNING
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "s.csv"), "--silent"])
    assert res.exit_code == 0 and res.stderr == ""
