"""A finer histogram over the dense cells of a long-tailed column (dpsynth/data/discover/dense.py; issue 27,
car_exports' ``value``: price indices near 1 for 86 % of its rows beside trade values up to 10⁸)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discover.dense import ZERO_RUN, dense_run
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition
from tests.data.test_discover import _Coupling
from tests.data.test_discover_allot import _zcdp


def _indices(seed: int, n: int = 20_000) -> pd.DataFrame:
    """car_exports' shape: six indices clustered at 0.5-1.03 (sd 0.03) for 86 % of the rows, trade values
    10²-10⁸ for the rest."""
    rng = np.random.default_rng(seed)
    centre = rng.choice([0.5, 0.67, 0.87, 0.91, 1.0, 1.03], n)
    index = np.round(rng.normal(centre, 0.03), 4)
    trade = np.round(10 ** rng.uniform(2, 8, n))
    value = np.where(rng.random(n) < 0.86, index, trade)
    return pd.DataFrame({"value": value, "kind": rng.choice(["a", "b", "c"], n)})


def _moved(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The same distinct values (so every partition selection has the same candidates) with the indices under
    0.8 moved to indices in [1, 1.1): all but each value's first row."""
    v = table["value"].to_numpy().copy()
    first = np.zeros(v.size, dtype=bool)
    first[np.unique(v, return_index=True)[1]] = True
    pool = np.unique(v[(v >= 1.0) & (v < 1.1)])
    low = ~first & (v < 0.8)
    v[low] = np.random.default_rng(seed).choice(pool, int(low.sum()))
    return table.assign(value=v)


def test_indices_beside_a_long_tail_get_finer_cells_and_bins():
    """Seeds 0-2: the logarithmic cells (E12, 18 % wide near 1) put the indices' 10 bins' edges on 0.82, 1 and
    1.2 only (two edges in (0.8, 1.1) on each seed before dense.py); the finer cells (0.01) over the dense run
    give at least four there (six measured on each seed), the evidence (the decoder's within-bin weights) has
    cells of 0.01 around 1, and the tail keeps its bounds (up to 10⁸)."""
    for seed in range(3):
        found, _, _ = _zcdp(_indices(seed), seed=seed)
        learned = found.columns["value"]["learned"]
        assert any("over the dense run" in note for note in learned), learned
        edges = np.asarray(found.schema["columns"]["value"]["edges"], dtype=float)
        assert np.count_nonzero((edges > 0.8) & (edges < 1.1)) >= 4, edges
        assert edges[-1] >= 1e7, edges  # the tail is still inside the bounds
        cells = found.evidence["value"].cells
        near = np.diff(cells)[(cells[:-1] >= 0.9) & (cells[1:] <= 1.1)]
        assert near.size >= 10 and near.max() <= 0.02, cells


def _budget(scale: float) -> ColumnBudget:
    return ColumnBudget.with_scale(scale, ColumnBudget(1.0, True, 1.0, Ledger(1.0, 1e-6, ZCDPComposition()),
                                                       np.random.default_rng(0), "x"))


def test_the_dense_run_is_the_fewest_cells_holding_most_rows_inside_the_log_cells():
    """Post-processing of a noisy histogram: 40 log cells from 0.1, 9,000 rows in cells 10-13 of 10,000: the run
    is cells 10-13 with cells of 0.01 over it; not when the run starts below the logarithmic cells (a column's
    zeros), when it spans more than a quarter of the cells, or when equal cells over it are not FINER times
    narrower than its cells (integers: cells of 1 no finer than [1, 2))."""
    grid = np.concatenate([[0.0], 0.1 * 10 ** (np.arange(40) / 12)])  # [0, 0.1) then E12-like cells from 0.1
    noisy = np.full(40, 25.0)
    noisy[10:14] = 2250.0
    run = dense_run(noisy, grid, _budget(10.0), False, 0.1)
    assert run is not None and run[:2] == (10, 13), run
    assert run[2][0] == grid[10] and run[2][-1] == grid[14] and np.diff(run[2]).max() <= 0.01 + 1e-9
    assert dense_run(noisy, grid, _budget(10.0), False, grid[11]) is None  # the run starts below the log cells
    spread = np.full(40, 250.0)
    assert dense_run(spread, grid, _budget(10.0), False, 0.1) is None  # no run of a quarter of the cells
    whole = np.concatenate([[0.0], 10 ** (np.arange(40) / 12)])  # cells from 1: [1, 1.2), …
    ints = np.full(40, 25.0)
    ints[:4] = 2250.0
    assert dense_run(ints, np.round(whole), _budget(10.0), True, 1.0) is None  # integers: nothing finer than 1


def test_the_dense_run_reads_only_noisy_counts(monkeypatch):
    """With the outputs of a discovery of the indices replayed, a table whose indices under 0.8 moved to [1, 1.1)
    (another dense run by its true counts, the same distinct values) gets the same schema and the same measurements: the run is chosen from the
    first fine histogram's noisy counts, and the finer cells' counts come from their mechanism.  Mutants: the run
    chosen from the true counts, the finer histogram read without noise."""
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, _, _ = _zcdp(_indices(0), seed=0)
    assert any("over the dense run" in note for note in found.columns["value"]["learned"])
    coupling.mode = "replay"
    found2, _, _ = _zcdp(_moved(_indices(0), 0), seed=0)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert np.array_equal(found2.evidence["value"].cell_counts, found.evidence["value"].cell_counts)


def test_the_finer_histogram_spends_the_rest_of_the_numeric_budget_once():
    """The dense path charges one histogram more than the first (the finer one, instead of the first's cells
    again), and the column stays within its allotment (half the ρ: two columns, allot.py).  Mutant: the finer
    histogram charged to the whole stage (1.42 allotments)."""
    _, ledger, rho = _zcdp(_indices(1), seed=1)
    charges = [c for c in ledger.charges if c.measured.startswith("value:")]
    measured = [c.measured for c in charges]
    # (the heaps reserve of a real column may go back to the last cells, heaps.settle: not the first's again)
    assert sum("dense run" in m for m in measured) == 1 and not any("again" in m and "heaps reserve" not in m
                                                                    for m in measured), measured
    assert sum(c.rho for c in charges) <= rho / 2 * (1 + 1e-9)
    assert sum(c.rho for c in ledger.charges) <= rho * (1 + 1e-9)


def _assets(seed: int, n: int = 10_000) -> pd.DataFrame:
    """retirement_401k's ``nettfa`` shape (issue 27): net assets, signed, 6 % zeros, 24 % debts and 70 % assets,
    both lognormal (deciles about -3.5, -0.7, 0, 0.6, 1.6, 3.2, 6.3, 12.8, 30), clipped to [-500, 1500]."""
    rng = np.random.default_rng(seed)
    pos = np.round(np.exp(rng.normal(1.5, 1.8, n)), 2)
    neg = -np.round(np.exp(rng.normal(1.0, 1.5, n)), 2)
    u = rng.random(n)
    value = np.clip(np.where(u < 0.06, 0.0, np.where(u < 0.3, neg, pos)), -500, 1500)
    return pd.DataFrame({"value": value, "kind": rng.choice(["a", "b", "c"], n)})


def test_a_signed_long_tailed_column_gets_finer_cells_on_linear_cells():
    """Seeds 0 and 2: a signed column is not skewed (over 10 % negative), so its first fine cells are linear (5
    and 10 wide over [-70, 300) and [-100, 700)) and its quantile edges fell on them: [-70, -5, 0, 0, 5, 10, 15,
    30, 300] and [-50, -10, 0, 0, 10, 20, 30, 500], two edges in (-1, 4) where half the rows lie, before the
    dense run took linear cells too.  With it (cells of 0.25 and 0.5 over [-10, 20) and [-20, 20)), six."""
    for seed in (0, 2):
        found, _, _ = _zcdp(_assets(seed), seed=seed)
        learned = found.columns["value"]["learned"]
        assert any("over the dense run" in note for note in learned), learned
        edges = np.asarray(found.schema["columns"]["value"]["edges"], dtype=float)
        assert np.count_nonzero((edges > -1) & (edges < 4)) >= 4 and edges.size >= 11, edges


def test_a_linear_dense_run_is_not_a_zero_spike():
    """Linear cells (no ``log_from``): the run [-1, 1) holds 9,000 of 10,000 rows; it is measured finer unless the
    profile's noisy zeros hold :data:`ZERO_RUN` of them (a point mass: points.py), unless it lies apart from 0; an
    integral column's run on linear cells is not (cells of 100: the same run of integers is measured again)."""
    grid = np.arange(-10.0, 31.0)
    noisy = np.full(40, 1000 / 38)
    noisy[9:11] = 4500.0
    run = dense_run(noisy, grid, _budget(10.0), False, None, zeros=(1000.0, 1.0))
    assert run is not None and run[:2] == (9, 10) and np.diff(run[2]).max() <= 0.25, run
    assert dense_run(noisy, grid, _budget(10.0), False, None, zeros=(ZERO_RUN * 9000.0, 1.0)) is None
    assert dense_run(noisy, grid + 5.0, _budget(10.0), False, None, zeros=(9000.0, 1.0)) is not None  # (0 not in it)
    assert dense_run(noisy * 100, grid * 100, _budget(10.0), True, None) is None  # integral: measured again


def _zeros(seed: int, n: int = 10_000) -> pd.DataFrame:
    """55 % exact zeros, 25 % in [-3, 3], the rest in [-300, 1000] (tenths): linear cells."""
    rng = np.random.default_rng(seed)
    near, tail = np.round(rng.uniform(-3, 3, n), 1), np.round(rng.uniform(-300, 1000, n), 1)
    u = rng.random(n)
    return pd.DataFrame({"value": np.where(u < 0.55, 0.0, np.where(u < 0.8, near, tail)),
                         "kind": rng.choice(["a", "b", "c"], n)})


def test_the_zero_spike_of_a_linear_dense_run_is_read_off_the_profile(monkeypatch):
    """Seed 2: the first fine histogram's dense run is the cells around 0, mostly the column's zeros (no finer
    cells); with that discovery's outputs replayed, a table whose zeros moved to values in (0, 3) (each value
    still held; by its true counts a run of assets, finer cells: it is on its own) gets the same schema.
    Mutant: the zeros read off the true counts."""
    table = _zeros(2)
    zeros = table["value"].to_numpy() == 0
    first = np.zeros(zeros.size, dtype=bool)
    first[np.unique(table["value"].to_numpy(), return_index=True)[1]] = True
    v = table["value"].to_numpy().copy()
    pool = np.unique(v[(v > 0) & (v < 3)])
    v[zeros & ~first] = np.random.default_rng(2).choice(pool, int((zeros & ~first).sum()))
    moved = table.assign(value=v)
    found_moved, _, _ = _zcdp(moved, seed=2)
    assert any("over the dense run" in note for note in found_moved.columns["value"]["learned"])
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, _, _ = _zcdp(table, seed=2)
    assert not any("over the dense run" in note for note in found.columns["value"]["learned"])
    coupling.mode = "replay"
    found2, _, _ = _zcdp(moved, seed=2)
    assert found2.schema == found.schema and found2.columns == found.columns


def _pressure(seed: int, n: int = 10_000) -> pd.DataFrame:
    """weather's ``pressure`` shape: 97 % near 1,015 (sd 7), 3 % spread down to 700 (tenths)."""
    rng = np.random.default_rng(seed)
    value = np.where(rng.random(n) < 0.97, rng.normal(1015, 7, n), rng.uniform(700, 1000, n))
    return pd.DataFrame({"value": np.round(value, 1), "kind": rng.choice(["a", "b", "c"], n)})


def test_a_dense_run_narrower_than_the_zoom_is_measured_finer():
    """Seeds 0-2: the support [575-775, 1050] would be zoomed onto cells of 5 or 2.5 (edges [675, 1005, 1010, 1015,
    1020, 1025, 1050] on seed 0: 6 bins for deciles 3.5 apart); its dense run [1000, 1025), under 1/WITHIN (dense.py)
    of the support's cells, gets cells of 0.2 instead: 10 bins, each inner edge within 1 of a decile."""
    for seed in range(3):
        table = _pressure(seed)
        found, ledger, rho = _zcdp(table, seed=seed)
        assert any("over the dense run" in note for note in found.columns["value"]["learned"])
        assert sum(c.rho for c in ledger.charges if c.measured.startswith("value:")) <= rho / 2 * (1 + 1e-9)
        edges = np.asarray(found.schema["columns"]["value"]["edges"], dtype=float)
        deciles = np.quantile(table["value"], np.linspace(0.1, 0.9, 9))
        assert edges.size == 11 and np.abs(edges[1:-1] - deciles).max() <= 1.0, (edges, deciles)


def test_the_dense_run_within_a_zoom_reads_only_noisy_counts(monkeypatch):
    """With a discovery of the pressure column replayed, a table whose rows in [1000, 1025) moved into the tail
    (values it holds: by its true counts no dense run, a zoom) gets the same schema.  Mutant: the run inside the
    zoom's support chosen on the true counts."""
    table = _pressure(0)
    v = table["value"].to_numpy().copy()
    first = np.zeros(v.size, dtype=bool)
    first[np.unique(v, return_index=True)[1]] = True
    pool = np.unique(v[v < 1000])
    move = ~first & (v >= 1000) & (v < 1025) & (np.random.default_rng(0).random(v.size) < 0.5)
    v[move] = np.random.default_rng(1).choice(pool, int(move.sum()))
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, _, _ = _zcdp(table, seed=0)
    assert any("over the dense run" in note for note in found.columns["value"]["learned"])
    coupling.mode = "replay"
    found2, _, _ = _zcdp(table.assign(value=v), seed=0)
    assert found2.schema == found.schema and found2.columns == found.columns
