"""Integer identifiers (ident.py): a wide integral column whose rows spread evenly over many distinct integers is
left out of a discovered schema after one noisy count of its distinct integers; flat columns of few values, and
skewed wide measures, are kept.  Fixed seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import discover_schema, ident, parse_discover
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.privacy.accountant import Ledger

COUNTED = "distinct integers (an identifier's)"


def _discover(table: pd.DataFrame, seed: int = 0):
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


def _table(n: int = 20000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "student": rng.integers(1, 2001, size=n),  # 2,000 ids of about 10 rows each
        "day": rng.integers(1, 367, size=n),  # flat, but 366 values
        "price": np.round(np.exp(rng.normal(7.0, 1.0, size=n))).astype(int),  # wide and skewed
        "g": rng.choice(["a", "b", "c"], size=n),
    })


def test_an_integer_identifier_is_left_out_and_measures_are_kept():
    found, ledger = _discover(_table())
    cols = found.schema["columns"]
    assert "student" not in cols
    assert found.columns["student"]["dropped"].startswith("an integer identifier"), found.columns["student"]
    assert any(c.measured == f"student: {COUNTED}" for c in ledger.charges)
    assert {"day", "price", "g"} <= set(cols)
    assert not any(c.measured == f"price: {COUNTED}" for c in ledger.charges)  # not flat: never counted
    for name, book in found.columns.items():  # the count stays within each column's allotment
        assert book["epsilon_spent"] <= book["epsilon"] * (1 + 1e-9), (name, book)
    assert ledger.spent()[0] <= 1.0 + 1e-12


@pytest.mark.parametrize("reported, dropped", [(0.0, False), (1e6, True)])
def test_the_decision_reads_the_noisy_count(monkeypatch, reported, dropped):
    """The rule decides on the mechanism's output, never on the true number of distinct integers: reported as
    none, the identifier stays; reported as a million, a flat column of 429 distinct values over [0, 3000] is
    left out.  Mutant: the decision reads the true count."""
    real = ColumnBudget.count

    def fake(self, value, measured):
        real(self, value, measured)  # charged as usual
        return reported

    monkeypatch.setattr(ColumnBudget, "count", fake)
    rng = np.random.default_rng(3)
    n = 20000
    table = pd.DataFrame({"student": rng.integers(1, 2001, size=n),
                          "code": rng.choice(np.arange(0, 3000, 7), size=n),  # 429 evenly spread values
                          "g": rng.choice(["a", "b"], size=n)})
    name = "code" if dropped else "student"
    found, _ = _discover(table[[name, "g"]])
    assert (name not in found.schema["columns"]) is dropped, found.columns[name]


def test_flatness_reads_inner_blocks_less_the_noise():
    cells = np.arange(0.0, 3300.0, 100.0)  # 32 cells
    even = np.full(32, 500.0)
    assert ident.flat(cells, even, 30.0, 0.0, 3200.0) == 0.0
    even[0], even[-1] = 100.0, 50.0  # bounds inside the end cells: not counted
    assert ident.flat(cells, even, 30.0, 0.0, 3200.0) == 0.0
    skewed = 5000.0 * np.exp(-np.arange(32) / 6.0)
    assert ident.flat(cells, skewed, 30.0, 0.0, 3200.0) > 1.0
    assert ident.flat(cells[:5], even[:4], 30.0, 0.0, 400.0) is None  # too few blocks to tell


def test_flatness_needs_enough_blocks():
    """A flat histogram of 8 cells within the bounds (a small table's fine grid: forbes_companies' ``rank``,
    8 cells of 250 over 1-2,000) is not judged: its 6 inner blocks cannot tell a broad hump from flat; 10 are."""
    cells = np.arange(0.0, 2250.0, 250.0)  # 8 cells
    assert ident.flat(cells, np.full(8, 250.0), 10.0, 0.0, 2000.0) is None
    cells = np.arange(0.0, 2200.0, 200.0)  # 10 cells
    assert ident.flat(cells, np.full(10, 200.0), 10.0, 0.0, 2000.0) == 0.0


def test_the_constants_are_the_documented_ones():
    assert (ident.ID_VALUES, ident.ID_SHARE, ident.ID_FLAT, ident.ID_DENSE, ident.ID_SD) == (500, 0.05, 0.2, 0.25, 2.0)
    assert (ident.ID_BLOCKS, ident.ID_NOISE, ident.ID_START, ident.ID_MIN_BLOCKS) == (16, 0.1, 0.25, 10)
