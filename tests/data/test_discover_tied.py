"""An integral column whose first fine histogram has its support in a few cells too wide for one cell per integer
(tied.tied_or_spread, session 17): a spread of days (aids_australia's ``diag`` and ``death``) is zoomed, tied
values (zip codes) and sparse ids keep the partition selection; the decision reads a noisy count only."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover import discover_schema, parse_discover, tied
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.privacy.accountant import Ledger


def _days(n: int = 2843, seed: int = 5) -> pd.DataFrame:
    """Days since 1960 as aids_australia's: ``diag`` spread over 8,302-11,503 (about 1,700 distinct in 2,843
    rows, more in the later years), ``death`` the same spread later with 37.5 % at the end of observation."""
    rng = np.random.default_rng(seed)
    diag = np.round(11503 - 3200 * rng.beta(1.2, 2.2, size=n)).astype(int)
    death = np.minimum(diag + rng.integers(0, 400, size=n), 11504)
    death[rng.random(n) < 0.375] = 11504
    return pd.DataFrame({"diag": diag, "death": death, "k": rng.choice(["x", "y"], size=n)})


def _discover(table: pd.DataFrame, seed: int = 0):
    spec = parse_discover({"epsilon": 0.5, "delta": 1e-6})  # (about a zero-config column's share)
    return discover_schema(table, spec, ledger=Ledger(spec.epsilon, spec.delta), rng=np.random.default_rng(seed))


def test_spread_days_in_three_wide_cells_are_zoomed_and_the_heap_is_a_point():
    """Until session 17 the selection over the days kept none (``diag``) or the heap alone (``death``) and the
    first histogram's three cells of 1,000 days were the bins: 8,302-8,999 clamped, 1-way TV 0.21 against 0.11 by
    hand.  Now the noisy distinct count says no selection can hold most rows: heaped days, then a zoom."""
    table = _days()
    found = _discover(table)
    for name in ("diag", "death"):
        notes = found.columns[name]["learned"]
        assert any("a spread, not tied values" in x for x in notes), notes
        edges = found.schema["columns"][name]["edges"]
        assert len(edges) >= 7, edges  # (not the three cells of 1,000)
        assert edges[0] <= float(np.quantile(table[name], 0.1)), edges
        spent, allotted = found.columns[name]["epsilon_spent"], found.columns[name]["epsilon"]
        assert spent <= allotted * (1 + 1e-9), (spent, allotted)  # (the count, the heaps and the zoom: one split)
    assert 11504 in [round(e + 0.5) for e in found.schema["columns"]["death"]["edges"]]  # (the heap: a bin)


def test_the_spread_is_decided_by_the_noisy_distinct_count_only(monkeypatch):
    """The same table with the noisy distinct count replaced by a small one (as tied values would give): the
    selection runs as before and the bins come from it or from the first histogram; the true count (about 1,700)
    is never read (mutant: the decision reads it)."""
    real = ColumnBudget.count

    def few(self, value, measured):
        out = real(self, value, measured)
        return 40.0 if measured.startswith("distinct integers") else out

    monkeypatch.setattr(ColumnBudget, "count", few)
    found = _discover(_days())
    for name in ("diag", "death"):
        assert not any("a spread" in x for x in found.columns[name]["learned"]), found.columns[name]["learned"]


def test_hopeless_needs_more_distinct_integers_than_a_selection_could_leave_out():
    """A selection whose floor is 30 rows keeps at most n/30 integers: 2,843 rows over 1,580 distinct days cannot
    be held at 90 % (about 379 may be left out); 116 zip codes in 52,000 rows can."""
    assert tied.hopeless(1580.0, 10.0, 2843.0, 30.0)
    assert not tied.hopeless(116.0, 10.0, 52000.0, 30.0)
    assert not tied.hopeless(300.0, 10.0, 2843.0, 30.0)  # (a few hundred days: maybe tied)


def test_tied_codes_in_a_narrow_support_pay_for_no_count():
    """Zip codes (seattle_pets: 116 codes, 52,000 rows, a support of 2,000 integers): even every integer of the
    support distinct could be held by the selection, so no distinct count is charged and the selection spends the
    whole rest, as before session 17 (mutant: the count is always made)."""
    rng = np.random.default_rng(2)
    n = 20000
    codes = np.arange(98101, 98200, 2)
    weights = rng.dirichlet(np.full(codes.size, 2.0))
    table = pd.DataFrame({"zip": rng.choice(codes, size=n, p=weights), "k": rng.choice(["x", "y"], size=n)})
    spec = parse_discover({"epsilon": 0.5, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    found = discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(0))
    notes = found.columns["zip"]["learned"]
    assert any("integer values by partition selection" in x for x in notes), notes
    assert not any("distinct integers" in (c.measured or "") for c in ledger.charges)


def test_sparse_ids_keep_the_selection_and_their_coarse_bins():
    """Year-prefixed respondent ids (anes_therms' ``uid``: 19780001-20126864, 34,000 rows over a support of 10⁶
    integers) are sparse: the selection runs as before, keeps nothing, and the first histogram's cells are the
    bins (zoomed into 11 bins in session 15 they cost the model: x1.46).  Mutant: DENSE_ROWS 0."""
    rng = np.random.default_rng(3)
    years = rng.choice(np.arange(1978, 2013, 2), size=12000)
    ids = years * 10000 + rng.integers(1, 2500, size=years.size)
    table = pd.DataFrame({"uid": ids, "k": rng.choice(["x", "y"], size=ids.size)})
    spec = parse_discover({"epsilon": 0.5, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    found = discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(0))
    notes = found.columns["uid"]["learned"]
    assert any("rows per observed integer" in (c.measured or "") for c in ledger.charges), notes
    assert not any("distinct integers" in (c.measured or "") for c in ledger.charges), notes
    assert len(found.schema["columns"]["uid"]["edges"]) <= 5, found.schema["columns"]["uid"]


def test_kept_integers_are_weighed_against_the_first_histograms_rows_too():
    """acs_2012's ``income`` (1,623 incomes, 45 % zeros) on draws whose profile saw about the zeros alone (noisy
    non-null rows 726): the selection kept 0, which "held" 90 % of those rows, and the column became two bins
    {0}, {1} (the table's 2-way L1 0.36-0.42 on 3 release seeds of 8, 0.23-0.31 after).  The first fine
    histogram's cells, all of them, count the spread too: held only against the larger of the two, with no
    slack for noise (a wrong "held" clamps every other row; credit's ``Debt``, 83 % zeros, likewise)."""
    from types import SimpleNamespace

    def col(first):
        return SimpleNamespace(non_null=726.0, non_null_sd=40.0, evidence=SimpleNamespace(first=first),
                               hint=SimpleNamespace(bins=None), spec=SimpleNamespace(bins=10), learned=[])
    kept = (np.array([0]), np.array([730.0]))
    assert tied.held_most(col(None), kept, 12.0)  # (the profile's rows alone: held, as before)
    cells = np.concatenate([[760.0], np.full(9, 95.0)])  # (1,615 rows over the coarse range)
    assert not tied.held_most(col((cells, 12.0)), kept, 12.0)


def _zips(n: int = 21_613, seed: int = 3) -> pd.DataFrame:
    """King County's ZIP codes as session 19's check met them: 70 codes in 98001-98199 of 0.3-3 % of the rows each,
    beside enough other columns (20) that each column's share is thin, as in a zero-config release."""
    rng = np.random.default_rng(seed)
    codes = np.sort(rng.choice(np.arange(98001, 98200), size=70, replace=False))
    weights = rng.gamma(2.0, 1.0, size=70)
    cols = {"zipcode": rng.choice(codes, size=n, p=weights / weights.sum())}
    for i in range(20):
        cols[f"x{i}"] = rng.integers(0, 1000, size=n)
    return pd.DataFrame(cols)


def test_codes_in_one_wide_cell_keep_their_kept_integers_as_bins_and_values():
    """The first fine histogram holds every ZIP code in the cell [98000, 100000): it cannot place an edge, and a
    selection keeping codes that hold about half the rows made it one bin decoded uniformly over the cell (codes
    up to 100,000 that do not exist).  With ``tied.one_cell_held`` the kept codes give bins and bounds inside the
    data's range on every seed.  (A thinner budget leaves the bin too, the selection keeping under half the rows or
    not asked: a zoom into the one cell is not built.)"""
    table = _zips()
    hits = 0
    for seed in range(3):
        spec = parse_discover({"epsilon": 5.0, "delta": 1e-6})  # (the selection keeps codes of ~75 % of the rows)
        found = discover_schema(table, spec, ledger=Ledger(spec.epsilon, spec.delta), rng=np.random.default_rng(seed))
        col = found.schema["columns"]["zipcode"]
        edges = col.get("edges") or [col.get("lower"), col.get("upper")]
        assert 98000 <= edges[0] and edges[-1] <= 98200, (seed, col)
        assert len(edges) >= 4, (seed, col)
        hits += any("in one cell" in line for line in found.columns["zipcode"]["learned"])
    assert hits == 3  # (on main: "not tied", the one bin [98000, 100000] on every seed)


def test_one_cell_held_needs_two_kept_integers_holding_half_the_rows():
    from types import SimpleNamespace

    def col(non_null):
        return SimpleNamespace(non_null=non_null, evidence=SimpleNamespace(first=None), learned=[])
    two = (np.array([98004, 98103]), np.array([300.0, 260.0]))
    assert tied.one_cell_held(col(1_000.0), two)
    assert not tied.one_cell_held(col(1_200.0), two)  # 47 % of the rows: the histogram's bin stays
    assert not tied.one_cell_held(col(300.0), (np.array([98004]), np.array([300.0])))  # one integer: no bins
