"""Heaped values off the round grid (issue 27: pizza_sales' prices on quarters, anes_therms' thermometer anchors,
planes' seat counts): with a δ, the point-mass budget runs partition selection over the column's observed numbers
(dpsynth/data/discover/heaps.py) and a released value holding half a bin's share of the rows gets a point bin.

Each statistical test runs one fixed seed; the stated rate is the share of seeds 0-29 of the same table on which
its assertion failed when the tolerance was set (so the fixed seed is a typical draw, not a lucky one)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.config import zero_config
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover import zoom as zoom_module
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger
from tests.data.test_discover import _Coupling

HEAPS = "(heaped values)"

# menu prices on quarters: five heaps off every public round grid, the rest spread over 60 other quarters
_HEAPS = {20.75: 0.18, 12.0: 0.12, 16.75: 0.09, 16.5: 0.08, 12.25: 0.07}


def _prices(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = np.array(list(_HEAPS))
    heap = rng.choice(values.size + 1, size=n, p=[*_HEAPS.values(), 1.0 - sum(_HEAPS.values())])
    spread = np.round(rng.uniform(9.0, 25.0, size=n) * 4) / 4  # quarters, about 1.5% of the rows each
    spread = np.where(np.isin(spread, values), spread + 0.5, spread)  # (the heaps hold exactly their share)
    price = np.where(heap < values.size, values[np.minimum(heap, values.size - 1)], spread)
    return pd.DataFrame({"price": price, "size": rng.choice(["S", "M", "L"], size=n)})


def _discover(table, raw=None, seed=0):
    spec = parse_discover(raw or {"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


def test_heaps_off_the_round_grid_get_point_bins_by_partition_selection():
    """The five heaps (7-18% of the rows; 20.75, 16.75 and 12.25 are no public round value) each get a point bin,
    no other value does (each holds about 1.5%, under half a bin's share), and the charge is one partition
    selection with its δ.  Failed on 0 of seeds 0-29."""
    found, ledger = _discover(_prices(20_000, 1))
    edges = found.schema["columns"]["price"]["edges"]
    points = sorted({e for e in edges if edges.count(e) == 2})
    assert points == sorted(_HEAPS), edges
    charges = [c for c in ledger.charges if HEAPS in c.measured]
    assert [c.measured.split(":")[0] for c in charges] == ["price"]
    assert charges[0].mechanism == "partition-selection" and charges[0].delta > 0
    ev = found.evidence["price"].points
    assert ev.values.tolist() == sorted(_HEAPS)
    share = np.array([_HEAPS[v] for v in ev.values]) * 20_000
    measured = ev.sds > 0
    assert measured.all()  # far above the selection threshold: reused as measurements
    assert np.all(np.abs(ev.counts - share) <= 6 * ev.sds + 6 * np.sqrt(share))  # noisy counts of the true ones
    assert any("partition selection" in x for x in found.columns["price"]["learned"])
    col = found.columns["price"]
    assert col["epsilon_spent"] <= col["epsilon"] + col.get("epsilon_pooled", 0.0) + 1e-12
    assert ledger.spent()[0] <= 1.0 + 1e-12


def test_without_delta_only_public_round_values_are_asked(monkeypatch):
    """δ = 0 (every column's type given, nothing to select): the point histogram asks about public round values
    only, and a heap at 20.75 (on no public grid) gets no bin; 12 (a round value) does.  Failed on 0 of seeds
    0-29.  (The zoom keeps the first histogram's cell count here: with zoom.ZOOM_FILL's finer cells on these
    20,000 rows, 20.75 is an edge of the public zoom grid, a round value like 12.)"""
    monkeypatch.setattr(zoom_module, "ZOOM_FILL", 1e12)
    raw = {"epsilon": 1.0, "delta": 0.0, "columns": {"price": {"type": "numeric"},
                                                     "size": {"type": "categorical", "categories": ["S", "M", "L"]}}}
    found, ledger = _discover(_prices(20_000, 2), raw)
    edges = found.schema["columns"]["price"]["edges"]
    assert edges.count(20.75) < 2 and edges.count(12) == 2, edges
    assert not any(HEAPS in c.measured for c in ledger.charges)
    assert all(c.delta == 0 for c in ledger.charges)


def test_a_zero_config_release_keeps_the_heaps_exact():
    """End to end: the released prices hold each heap's share exactly at its value (before: smeared over a bin
    of width 1 to 3, the largest heap came out about 0.05 of the rows).  Tolerance 0.03 (the release's noise on
    a 1-way count of 20,000 rows at ε = 1 is far smaller; the rest is the model's fit).  Failed on 0 of seeds
    0-9 (table and release seed alike)."""
    table = _prices(20_000, 3)
    result = dpsynth.release(table, zero_config(1.0, 1e-6), rng=5)
    price = result.synthetic["price"].astype(float)
    for v, share in _HEAPS.items():
        assert (price == v).mean() == pytest.approx(share, abs=0.03), v
    assert any(HEAPS in c["measured"] for c in result.report["ledger"])


def test_heaps_depend_on_the_data_only_through_the_mechanism(monkeypatch):
    """Discovery on D records every mechanism output; replayed on D′ (500 rows moved from 20.75 to 12: other
    counts, the same observed values) it gives the same schema, ledger and released point counts, so the heaps
    are read off noisy counts only.  The neighbour that moves one row between heaps changes the selection's true
    counts by at most its sensitivity (L1 2 under replace-one: one row leaves one count, joins another)."""
    d = _prices(6000, 4)
    d2 = d.copy()
    at = np.flatnonzero(d["price"].to_numpy() == 20.75)
    d2.loc[at[:500], "price"] = 12.0
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 2.0, "delta": 1e-6}
    found, ledger = _discover(d, raw, seed=3)
    assert found.evidence["price"].points is not None and 20.75 in found.evidence["price"].points.values
    coupling.mode = "replay"
    found2, ledger2 = _discover(d2, raw, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
    assert found2.evidence["price"].points.counts.tolist() == found.evidence["price"].points.counts.tolist()
    d3 = d.copy()
    d3.loc[at[0], "price"] = 12.0
    coupling.mode, coupling.i, coupling.distances = "replay", 0, []
    _discover(d3, raw, seed=3)
    heaps = [dist for (mech, dist, _), (key, _, _) in zip(coupling.distances, coupling.calls)
             if any(HEAPS in str(v) for v in dict(key[1]).values())]
    assert heaps and max(heaps) <= 2



def _replacement_rates(seed: int) -> pd.Series:
    """jobless_benefits' ``rr`` in shape: 4,877 rates in [0.04, 0.69], 620 of them exactly 0.5."""
    rng = np.random.default_rng(seed)
    rr = np.round(rng.beta(5, 4, size=4877) * 0.65 + 0.04, 6)
    rr = np.where(rr == 0.5, 0.500001, rr)
    rr[:620] = 0.5
    return pd.Series(rr)


def test_a_heap_at_a_public_round_value_is_a_public_key_of_the_selection(monkeypatch):
    """jobless_benefits' ``rr`` (issue of session 11's closing check): 620 rows at exactly 0.5, a public round
    value, against a selection threshold about 600 at the column's point-mass budget (σ ≈ 106): the heap was
    missed on both seeds.  The round values inside the heavy cells are public keys of the same selection
    (ask_points): released whatever their noisy count, kept by the round values' rule (past the cut, 1/bins of
    the rows), unbiased (reused as measurements).  Each row is in one count (the rows at 0.5 are not among the
    observed numbers) and the charge is one selection.  Failed on 3 of seeds 0-29 (table and noise; before: 10)."""
    from dpsynth.data.discover.heaps import ask_points
    from dpsynth.data.discover.noise import ColumnBudget
    from dpsynth.data.profile import ColumnProfile
    from dpsynth.privacy.accountant import ZCDPComposition

    seen = []
    partition = ColumnBudget.partition

    def spy(self, counts, delta, what="", public=0):
        seen.append((np.asarray(counts).copy(), public))
        return partition(self, counts, delta, what, public=public)

    monkeypatch.setattr(ColumnBudget, "partition", spy)
    column = ColumnProfile(_replacement_rates(0))
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    budget = ColumnBudget(1 / (2 * 106.0**2), True, 1.0, ledger, np.random.default_rng(7), "rr")
    cells = np.linspace(0.0, 0.7, 29)
    got = ask_points(budget, (np.array([0.5]), np.array([0.525])), 1e-7, column, cells, lo=0.0, hi=0.7,
                     integral=False, non_null=4877.0, bins=10)
    assert got.values.tolist() == [0.5] and got.sds.tolist() == [budget.sd]
    ((counts, public),) = seen
    assert public >= 1 and counts[:public].sum() == 620 and counts.sum() == 4877  # each row once
    assert len(ledger.charges) == 1 and "public round values" in ledger.charges[0].measured


# shelf prices stored in single precision (held-out-13's cracker_choice, ``price.sunshine``, in shape: 3,300 rows;
# scaled by ten): heaps a first fine cell apart, so that each first cell of the run holds one and none stands out of
# its neighbours (cracker_choice's 97, 98, 99 in one cell of 10 beside 105 and 109 in the next), the rest spread
# over [600, 1200)
_SHELF = {775.00002: 0.15, 824.99998: 0.15, 875.0: 0.15, 925.00001: 0.15, 974.99999: 0.15, 1025.00003: 0.15}


def _shelf(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = np.array(list(_SHELF))
    heap = rng.choice(values.size + 1, size=n, p=[*_SHELF.values(), 1.0 - sum(_SHELF.values())])
    spread = rng.integers(60, 120, size=n) * 10.0 + 2.5  # (off every heap and every round value)
    price = np.where(heap < values.size, values[np.minimum(heap, values.size - 1)], spread)
    flags = {f"flag{i}": rng.integers(0, 2, size=n) for i in range(2)}  # (the other columns share the budget)
    return pd.DataFrame({"price": price, **flags})


def test_adjacent_heaps_in_a_real_column_get_point_bins_from_the_reserve():
    """Six heaps of 15% of the rows each, one per first fine cell of a run: no first cell is heavy, so a real
    column sets a reserve aside (heaps.asked); the zoomed cells show heavy ones and the reserve runs the heaps
    selection (heaps.settle): each heap gets a point bin, and the column spends no more than its allotment and
    what it drew from the pool the flags left (heaps.waits), the discovery no more than its total.  Before
    (session 13): no point bin (seeds 0-9).  Failed on 0 of seeds 0-29."""
    found, ledger = _discover(_shelf(3300, 1), seed=1)
    edges = found.schema["columns"]["price"]["edges"]
    points = sorted({e for e in edges if edges.count(e) == 2})
    assert points == sorted(_SHELF), edges
    assert any("heavy cells in the last fine histogram" in x for x in found.columns["price"]["learned"])
    charges = [c for c in ledger.charges if c.measured.startswith("price:")]
    assert sum(HEAPS in c.measured for c in charges) == 2  # (and again, with the pool the flags left: heaps.waits)
    assert not any("heaps reserve" in c.measured for c in charges)
    col = found.columns["price"]
    assert col["epsilon_spent"] <= col["epsilon"] + col.get("epsilon_pooled", 0.0) + 1e-12
    assert ledger.spent()[0] <= 1.0 + 1e-12


def _smooth(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": np.round(rng.normal(50.0, 10.0, size=n), 4) + 1e-6, "store": rng.choice(["a", "b"], size=n)})


def test_a_smooth_real_column_gets_its_reserve_back_in_its_cells():
    """A smooth real column (no heap): the reserve is spent once, on its last fine cells measured again (averaged
    into the evidence and the edges), never on a heaps selection as well: the column spends its allotment, no
    more.  Failed on 0 of seeds 0-29."""
    found, ledger = _discover(_smooth(20_000, 5))
    charges = [c for c in ledger.charges if c.measured.startswith("x:")]
    assert sum("heaps reserve" in c.measured for c in charges) == 1
    assert not any(HEAPS in c.measured for c in charges)
    spent, allotted = found.columns["x"]["epsilon_spent"], found.columns["x"]["epsilon"]
    assert spent <= allotted + 1e-12 and spent >= 0.99 * allotted
    assert any("measured its cells again" in x for x in found.columns["x"]["learned"])


@pytest.mark.parametrize("heaps", [True, False])
def test_the_reserve_decides_on_noisy_counts_only(heaps, monkeypatch):
    """Discovery on D records every mechanism output; replayed on D′ (shelf prices: 300 rows moved from 875 to 925
    and 200 from 775 to a spread value; a smooth column: 2,000 rows under 45 moved above 60) it gives the same
    schema, ledger and evidence, so where the reserve goes (heaps.settle) and the edges it gives (the selection's,
    or the cells measured again and averaged) are read off noisy counts only."""
    if heaps:
        col, d = "price", _shelf(3300, 4)
        d2 = d.copy()
        p = d["price"].to_numpy()
        d2.loc[np.flatnonzero(p == 875.0)[:300], "price"] = 925.00001
        d2.loc[np.flatnonzero(p == 775.00002)[:200], "price"] = 1012.5
    else:
        col, d = "x", _smooth(20_000, 6)
        d2 = d.copy()
        d2.loc[np.flatnonzero(d["x"].to_numpy() < 45)[:2000], "x"] = 61.2345
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, ledger = _discover(d, seed=3)
    told = "heavy cells in the last fine histogram" if heaps else "measured its cells again"
    assert any(told in x for x in found.columns[col]["learned"])
    coupling.mode = "replay"
    found2, ledger2 = _discover(d2, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
    assert found2.evidence[col].cell_counts.tolist() == found.evidence[col].cell_counts.tolist()


@pytest.mark.parametrize("first_lo", [0.0, 10.0])
def test_an_end_cell_holding_the_rows_past_a_zooms_bounds_is_not_a_heap(first_lo):
    """The last fine cells' end cells are open (``cell_counts``): past a zoom's bounds they hold the tail beyond
    them, and one standing above its single neighbour is not a heap (phone_churn's charges, seeds 2-5: 9 of 32
    zoomed columns spent the reserve on a selection that found nothing).  When the end cell is the first fine
    histogram's own end too, it stays a candidate (heaps.settle; post-processing of public grids)."""
    from types import SimpleNamespace

    from dpsynth.data.discover.evidence import Evidence
    from dpsynth.data.discover.heaps import settle
    from dpsynth.data.discover.noise import ColumnBudget

    cells = np.linspace(10.0, 40.0, 31)
    counts = np.full(30, 300.0)
    counts[0] = 1500.0  # (the rows under 10, clamped into the zoom's first cell)
    ledger = Ledger(1.0, 1e-6)
    budget = ColumnBudget(1.0 / (2 * 50.0**2), True, 1, ledger, np.random.default_rng(0), "x")
    ev = Evidence()
    ev.cells, ev.cell_counts, ev.cell_sd = cells, counts, 50.0
    profile = SimpleNamespace(cell_counts=lambda edges: counts.astype(np.int64))
    disc = SimpleNamespace(_spikes=(budget, (np.zeros(0), np.zeros(0)), 1e-6), evidence=ev, integral=False,
                           non_null=10_000.0, zeros=None, first_grid=np.linspace(first_lo, 100.0, 41), learned=[],
                           profile=profile)
    disc._cells = lambda grid, noisy, sd: None
    settle(disc, (cells, np.clip(counts, 0, None)), 10)
    if first_lo < 10.0:
        assert disc._spikes is None and any("measured its cells again" in x for x in disc.learned)
    else:
        assert disc._spikes is not None and any("heavy cells" in x for x in disc.learned)



def _settled(counts):
    """heaps.settle on zoomed cells [10, 40) with noisy counts ``counts``, inside a first fine histogram over
    [0, 100)."""
    from types import SimpleNamespace

    from dpsynth.data.discover.evidence import Evidence
    from dpsynth.data.discover.heaps import settle
    from dpsynth.data.discover.noise import ColumnBudget

    cells = np.linspace(10.0, 40.0, 31)
    ledger = Ledger(1.0, 1e-6)
    budget = ColumnBudget(1.0 / (2 * 50.0**2), True, 1, ledger, np.random.default_rng(0), "x")
    ev = Evidence()
    ev.cells, ev.cell_counts, ev.cell_sd = cells, counts, 50.0
    disc = SimpleNamespace(_spikes=(budget, (np.zeros(0), np.zeros(0)), 1e-6), evidence=ev, integral=False,
                           non_null=10_000.0, zeros=None, first_grid=np.linspace(0.0, 100.0, 41), learned=[],
                           profile=SimpleNamespace(cell_counts=lambda edges: counts.astype(np.int64)))
    disc._cells = lambda grid, noisy, sd: None
    settle(disc, (cells, np.clip(counts, 0, None)), 10)
    return disc


@pytest.mark.parametrize("below", [30.0, 400.0])
def test_a_heap_at_the_datas_bound_is_asked_about_when_no_rows_lie_past_it(below):
    """A heap at the data's bound (a share's rows at exactly 1, a top-coded amount) sits in the outermost heavy
    cell beside a dense inner neighbour, so it does not stand above both (black_legislators' ``urbanpercent``:
    870 rows exactly 1 in [1, 1.02), 630 in [0.98, 1), noisy 865 and 768).  When the cells past it hold no rows
    (noisy: 30 at sd 50) and it holds more than its inner neighbour, it is a heap candidate and the reserve runs
    the heaps selection (heaps._ends); with rows past it (400), it is the inside of a smooth run: the cells are
    measured again.  Before (session 13): measured again both ways."""
    counts = np.full(30, 100.0)
    counts[:3] = [below, 1500.0, 1200.0]
    disc = _settled(counts)
    if below < 100.0:
        assert disc._spikes is not None and any("heavy cells" in x for x in disc.learned)
    else:
        assert disc._spikes is None and any("measured its cells again" in x for x in disc.learned)
