"""A column's kind from four noisy cells before its profile (discover/kind.py, issue 27's small tables), and the
null cell of a categorical column's partition selections (values.select_categories, nulls.fuse_nulls)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpsynth.cli import app
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.column import PROFILE_SHARE
from dpsynth.data.discover.kind import KIND_SHARE
from dpsynth.data.discover.values import PROBE_SHARE
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger
from tests.helpers import Replay


def _table(n: int = 3000, seed: int = 0, null_share: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2]).astype(object)
    colour[rng.random(n) < null_share] = None
    return pd.DataFrame({"colour": colour, "age": rng.integers(18, 90, size=n)})


def _discover(table, seed=0, kind_first=True):
    spec = replace(parse_discover({"epsilon": 2.0, "delta": 1e-6}), kind_first=kind_first)
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


@pytest.mark.parametrize("seed", range(3))
def test_a_text_column_skips_its_profile_and_its_stage_has_the_rest(seed):
    """The text column spends KIND_SHARE of its allotment on four cells and no profile; the number column spends
    the four cells, its profile (PROFILE_SHARE of its allotment) and its stage, which gets the four cells' cost
    back from the text column's savings (kind.refund): the text column's probe has PROBE_SHARE of 1 − 2·KIND_SHARE
    of its allotment.  The profile's type, range and bins as before; the total within the budget.  Mutant: the
    four cells charged without taking them from the rest."""
    found, ledger = _discover(_table(seed=seed), seed)
    allot = 2.0 / 2
    text = [c for c in ledger.charges if c.measured.startswith("colour:")]
    assert text[0].measured.startswith("colour: rows per kind (null, text, dates, numbers: 4 cells)")
    assert text[0].epsilon == pytest.approx(KIND_SHARE * allot)
    assert not any("logarithmic bucket" in c.measured for c in text)
    assert text[1].epsilon == pytest.approx(PROBE_SHARE * (1 - 2 * KIND_SHARE) * allot)
    assert found.schema["columns"]["colour"]["categories"] == ["red", "green", "blue"]
    assert any("4 cells; no profile" in x for x in found.columns["colour"]["learned"])
    number = [c for c in ledger.charges if c.measured.startswith("age:")]
    assert number[0].epsilon == pytest.approx(KIND_SHARE * allot)
    assert "logarithmic bucket" in number[1].measured and number[1].epsilon == pytest.approx(PROFILE_SHARE * allot)
    assert found.schema["columns"]["age"]["type"] == "numeric"
    assert math.fsum(c.epsilon for c in number[2:]) == pytest.approx((1 - PROFILE_SHARE) * allot)
    assert math.fsum(c.epsilon for c in ledger.charges) <= 2.0 * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_selections_null_cell_decides_a_text_columns_nulls(seed):
    """A tenth of the colours null: the four cells' null (sd about 55 rows here) and the selection's public null
    cell, averaged, keep a null category; none null: a fill.  The null cell is released with the values' counts
    (one histogram: each row in one cell) and is never a category."""
    with_nulls, _ = _discover(_table(seed=seed, null_share=0.1), seed)
    col = with_nulls.schema["columns"]["colour"]
    assert col["missing"] == "category" and sorted(col["categories"]) == ["blue", "green", "red"]
    none, ledger = _discover(_table(seed=seed), seed)
    assert none.schema["columns"]["colour"]["missing"] == "fill"
    assert any("and the null rows (a public cell)" in c.measured for c in ledger.charges)


def test_the_kind_and_the_nulls_are_read_off_noisy_counts_only(monkeypatch):
    """The schema of a table whose colours hold no null; then, with every mechanism output replayed, the same
    schema on a table whose colours are a fifth null: a kind or null decision on the true counts would give the
    colour a null category.  Mutants: the four cells' true counts, the selection's true null count."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found, ledger = _discover(_table(), 0)
    assert found.schema["columns"]["colour"]["missing"] == "fill"
    replay.mode = "replay"
    again, ledger2 = _discover(_table(null_share=0.2), 0)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


def test_without_kind_first_every_column_runs_its_profile():
    """A discovery that is not starved (an explicit config, or a zero-config share under its cap): the profile
    first, with PROFILE_SHARE of the allotment, and no null cell in the selections."""
    _, ledger = _discover(_table(), 0, kind_first=False)
    text = [c for c in ledger.charges if c.measured.startswith("colour:")]
    assert "logarithmic bucket" in text[0].measured and text[0].epsilon == pytest.approx(PROFILE_SHARE * 1.0)
    assert not any("rows per kind (null" in c.measured or "null rows (a public cell)" in c.measured for c in ledger.charges)


def test_a_zero_config_release_of_a_small_table_reads_its_text_columns_kind_first(runner, tmp_path):
    """3,000 rows: share_for is at MAX_SHARE (a category of TARGET_SHARE is out of reach), so the release's
    discovery reads kinds first; at 30,000 rows x 2 columns the share is under the cap and the profile runs."""
    for n, first in ((3000, True), (30_000, False)):
        src, out = tmp_path / f"in{n}.csv", tmp_path / f"out{n}.csv"
        _table(n).to_csv(src, index=False)
        res = runner.invoke(app, ["release", "-i", str(src), "-o", str(out), "--epsilon", "1", "--seed", "1",
                                  "--force", "-q"])
        assert res.exit_code == 0, res.stderr
        report = json.loads(out.with_name(out.name + ".report.json").read_text())
        learned = report["privacy"]["discovery"]["columns"]["colour"]["learned"]
        assert any("4 cells; no profile" in x for x in learned) == first, learned


def test_the_refund_reaches_only_as_far_as_the_text_columns_savings():
    """One text column and three number columns: the text column saved PROFILE_SHARE − KIND_SHARE of its
    allotment, shared by the three (each owed KIND_SHARE): its stage is 1 − PROFILE_SHARE of its allotment, as
    with a profile, and the charges stay within the total."""
    table = _table().assign(b=lambda t: t["age"] * 2, c=lambda t: t["age"] % 7)
    found, ledger = _discover(table, 1)
    allot = 2.0 / 4
    text = [c for c in ledger.charges if c.measured.startswith("colour:")]
    assert text[1].epsilon == pytest.approx(PROBE_SHARE * (1 - PROFILE_SHARE) * allot)
    assert found.schema["columns"]["colour"]["type"] == "categorical"
    assert math.fsum(c.epsilon for c in ledger.charges) <= 2.0 * (1 + 1e-9)
