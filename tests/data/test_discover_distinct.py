"""Columns of mostly distinct values (identifiers, free text) are left out of a discovered schema after one noisy
count of their distinct values (column.screen, DISTINCT_SHARE); columns of many rare but repeated values keep
their placeholder.  Fixed seeds; the statistical test states its tolerance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import column as column_module
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.privacy.accountant import Ledger, ZCDPComposition


def _discover(table: pd.DataFrame, seed: int = 0):
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


def _table(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"P{i:07d}" for i in rng.permutation(n)],  # one row each
        "order": [f"O{i:06d}" for i in rng.integers(0, n // 2, size=n)],  # about 2 rows each
        "country": [f"C{i:03d}" for i in rng.integers(0, 300, size=n)],  # 300 values of about 20 rows
        "g": rng.choice(["a", "b", "c"], size=n),
    })


def test_identifiers_are_left_out_and_repeated_rare_values_keep_their_placeholder():
    found, ledger = _discover(_table())
    cols = found.schema["columns"]
    assert "id" not in cols and "order" not in cols
    for name in ("id", "order"):
        assert found.columns[name]["dropped"].startswith("mostly distinct values"), found.columns[name]
        assert any(c.measured == f"{name}: distinct values (identifiers, free text)" for c in ledger.charges)
    assert cols["country"]["categories"] == ["__none__"]  # 300 values of ~20 rows: not found, not dropped
    assert "dropped" not in found.columns["country"]
    assert sorted(cols["g"]["categories"]) == ["a", "b", "c"]
    assert ledger.spent()[0] <= 1.0 + 1e-12


def test_a_common_value_beside_unique_text_is_kept():
    """Half the rows hold one value, the rest are unique: many distinct values, but the probe's value holds half
    the rows, so the column stays (that value and ``__other__``)."""
    n = 6000
    rng = np.random.default_rng(1)
    text = np.array([f"note {i}" for i in range(n)], dtype=object)
    text[rng.permutation(n)[: n // 2]] = "none"
    found, _ = _discover(pd.DataFrame({"remark": text, "g": rng.choice(["a", "b"], size=n)}))
    assert "none" in found.schema["columns"]["remark"]["categories"]
    assert "dropped" not in found.columns["remark"]


@pytest.mark.parametrize("reported, dropped", [(0.0, False), (1e6, True)])
def test_the_decision_reads_the_noisy_count(monkeypatch, reported, dropped):
    """The screen decides on the mechanism's output, never on the true number of distinct values: reported as
    none, an identifier column stays; reported as a million, a column of 300 repeated values is left out.
    Mutant: the decision reads the true count."""
    real = ColumnBudget.count

    def fake(self, value, measured):
        real(self, value, measured)  # charged as usual
        return reported if "distinct values" in measured else real(self, value, measured)

    monkeypatch.setattr(ColumnBudget, "count", fake)
    name = "country" if dropped else "id"
    found, _ = _discover(_table()[[name, "g"]])
    assert (name not in found.schema["columns"]) is dropped


@pytest.mark.parametrize("zcdp", [True, False])
@pytest.mark.parametrize("l1", [1, 2])
def test_a_single_counts_noise_has_the_scale_of_its_sensitivity(zcdp, l1):
    """A single count's sensitivity is ``l1`` in L1 and in L2 (a replaced row can move it by 2; a histogram's L2
    sensitivity is sqrt(2)).  400 draws: the sample sd is within 15% of ``count_sd`` (its relative sd is about
    1/sqrt(800) = 3.5% for the Gaussian, 6% for the Laplace: more than 2.5 sds, false-failure rate under 1%), and
    an sd sqrt(2) or 2 times smaller (the mutants) is outside.  Mutants: L2 sensitivity sqrt(l1); L1 1."""
    amount = 0.02 if zcdp else 0.2
    ledger = Ledger(1e6, 0.5, ZCDPComposition()) if zcdp else Ledger(1e6, 0.5)
    budget = ColumnBudget(amount, zcdp, l1, ledger, np.random.default_rng(7), "x")
    draws = np.array([budget.count(1000, "one count") for _ in range(400)])
    want = (l1 / math.sqrt(2 * amount)) if zcdp else math.sqrt(2) * l1 / amount
    assert budget.count_sd == pytest.approx(want)
    assert abs(draws.std() / want - 1.0) < 0.15, (draws.std(), want)
    assert abs(draws.mean() - 1000) < 4 * want / math.sqrt(400)


def test_the_share_constants_are_the_documented_ones():
    assert column_module.DISTINCT_SHARE == pytest.approx(1 / 3)
    assert column_module.SCREEN_SHARE == 0.05


def test_many_repeated_values_keep_what_their_selection_found():
    """Three values of 150 rows (7.5% of the rows together) beside 300 values of about 18 rows: the kept values hold
    under 10% of the rows, but the column is not mostly distinct (its noisy count of distinct values is about 300),
    so it keeps them and ``__other__`` (until session 12 it was left out as free text: ucla_courses' subjects).
    Mutant: the 10% rule applied to a screened column."""
    rng = np.random.default_rng(4)
    common = np.repeat(["big1", "big2", "big3"], 150)
    rare = np.array([f"s{i:03d}" for i in rng.integers(0, 300, size=6000 - common.size)], dtype=object)
    subject = rng.permutation(np.concatenate([common, rare]))
    found, _ = _discover(pd.DataFrame({"subject": subject, "g": rng.choice(["a", "b"], size=subject.size)}))
    assert "dropped" not in found.columns["subject"], found.columns["subject"]
    assert {"big1", "big2", "big3"} <= set(found.schema["columns"]["subject"]["categories"])
