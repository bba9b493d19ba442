"""Numeric bounds of discovery on real-table shapes (dpsynth/data/discover/zoom.py): narrow data at a large
magnitude zoomed twice, thin skewed tails the profile saw kept inside the bounds; both from mechanism outputs only."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import column as column_module
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.noise import FINE_CELLS
from dpsynth.data.discover.zoom import ZOOM_CELLS, holds, spread, widen
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp
from dpsynth.privacy.neighbouring import Neighbouring
from tests.data.test_discover import _Coupling
from tests.helpers import Replay


def _discover(table, eps, seed):
    spec = parse_discover({"epsilon": eps, "delta": 1e-6, "columns": {c: {"type": "numeric"} for c in table}})
    ledger = Ledger(eps, 1e-6)
    found = discover_schema(table, spec, ledger=ledger, neighbouring=Neighbouring.ADD_REMOVE,
                            rng=np.random.default_rng(seed))
    return found, ledger


def _decimal_years(n=8000, seed=0, lo=2016.5, hi=2017.66):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"when": np.round(rng.uniform(lo, hi, n), 4)})


def _amounts(n=20000, seed=0):
    """Dollar amounts as in a health survey: 45% exact zeros, the rest log-normal (median 10, p99 ~ 200)."""
    rng = np.random.default_rng(seed)
    pos = rng.random(n) < 0.55
    return pd.DataFrame({"dollars": np.where(pos, np.round(np.exp(rng.normal(np.log(10), 1.4, n)), 2), 0.0)})


def _minutes(n=20000, seed=0):
    """Whole minutes, 0-1,499, with 4% in a thin tail to 3,000: an integral column whose support spans more than a
    quarter of its fine cells is measured again (not zoomed: a column that is not integral is zoomed up to half
    its cells since session 12), and the fine support reaches the profile's tail buckets only through ``widen``."""
    rng = np.random.default_rng(seed)
    tail = rng.random(n) < 0.04
    return pd.DataFrame({"minutes": np.where(tail, rng.integers(1500, 3000, n), rng.integers(0, 1500, n)).astype(float)})


def test_narrow_fractions_at_a_large_magnitude_are_zoomed_twice():
    """A decimal year in [2016.5, 2017.66] (hotels, issue 27): the coarse range is [1000, 7000), the first fine
    cells are 50 wide and one zoom leaves the data in 2–3 cells (bounds [2000, 2050] before).  Zoomed twice,
    the bounds hold the data within a year and the bins split it.  5 seeds; the noise is ~1% of a cell's rows
    here, so a failure is a broken zoom, not chance (no seed has failed)."""
    table = _decimal_years()
    x = table["when"].to_numpy()
    for seed in range(5):
        found, ledger = _discover(table, 1.0, seed)
        edges = np.asarray(found.schema["columns"]["when"]["edges"], dtype=float)
        assert 2015.5 <= edges[0] <= x.min() and x.max() <= edges[-1] <= 2018.5, edges
        inner = edges[(edges > x.min()) & (edges < x.max())]
        assert inner.size >= 5, edges  # bins inside the data, not one around all of it
        assert any("zoomed in twice" in note for note in found.columns["when"]["learned"])
        assert ledger.spent()[0] <= 1.0 + 1e-12  # the two halves of the zoom's budget, not twice the budget


def test_a_thin_tail_the_profile_sees_stays_inside_the_bounds():
    """Amounts with 45% zeros and a long right tail at a thin per-column budget (randhie's drugdol: upper bound
    40–55 for a 99th percentile of 156): each fine cell of the tail holds fewer rows than its noise, so the fine
    support stops at the 90–97th percentile; the profile's logarithmic buckets saw the tail.  Over ε 0.1 and
    0.05 × 10 fixed seeds, at least 8 of the 20 bounds leave at most 1.6% of the rows above them (9 measured;
    4 before the fix), and none is beyond 20 times the 99th percentile (deterministic: fixed seeds)."""
    table = _amounts()
    x = table["dollars"].to_numpy()
    p99 = float(np.percentile(x, 99))
    above, uppers = [], []
    for eps in (0.1, 0.05):
        for seed in range(10):
            found, _ = _discover(table, eps, seed)
            hi = float(found.schema["columns"]["dollars"]["edges"][-1])
            above.append(float((x > hi).mean()))
            uppers.append(hi)
    assert sum(a <= 0.016 for a in above) >= 8, (uppers, above)
    assert max(uppers) <= 20 * p99, uppers


def test_widen_reaches_a_bucket_only_when_the_fine_cells_confirm_it():
    """Post-processing of the two noisy histograms: the fine support [0, 10) is extended to the profile's last
    bucket [30, 50) when the noisy cells in between hold 2 sd of their summed noise; not when they are empty
    (a false bucket); a narrow support at one magnitude (a decimal year) is not widened inside its bucket."""
    grid = np.arange(0.0, 101.0, 1.0)  # 100 unit cells
    budget = type("B", (), {"sd": 10.0})()
    core = ((0.0, 1e-6), (30.0, 50.0))
    tail = np.zeros(100)
    tail[:10] = 1000.0
    tail[10:50] = 10.0  # 400 rows over 40 cells: 400 >= 2·10·sqrt(40) ≈ 126
    assert widen((0, 9), grid, core, tail, budget) == (0, 49)
    empty = np.where(np.arange(100) < 10, 1000.0, 0.0)
    assert widen((0, 9), grid, core, empty, budget) == (0, 9)
    assert spread(core) and not spread(((2000.0, 3000.0), (2000.0, 3000.0)))
    years = np.arange(2000.0, 2101.0, 1.0)
    counts = np.where((years[:-1] >= 2016) & (years[:-1] < 2018), 1000.0, 5.0)
    # inside its only bucket, a one-magnitude support is trimmed by the fine cells, never widened
    assert widen((16, 17), years, ((2000.0, 3000.0), (2000.0, 3000.0)), counts, budget) == (16, 17)
    assert widen(None, grid, core, tail, budget) is None and widen((0, 9), grid, None, tail, budget) == (0, 9)


@pytest.mark.parametrize("make, eps", [(_decimal_years, 1.0), (_amounts, 0.05), (_minutes, 0.05)],
                         ids=["zoomed-twice", "tail", "measured-again"])
def test_bounds_read_only_mechanism_outputs(monkeypatch, make, eps):
    """With the first run's noisy outputs replayed, a table with other values in the same places (other years
    inside the same cells' reach; other amounts in the tail) gives the same schema: the second zoom, the widened
    support and its confirmation read noisy counts only, and every call of ``widen`` reads the same counts (on
    either path: a zoom's, or a support measured again).  Mutants: the second zoom's or the profile's support
    taken from the true counts; ``widen`` given true fine counts on either path."""
    a = make()
    b = make(seed=1)
    calls = []
    widened: list = []  # what each widen call read (the column's fine counts): mechanism outputs, so alike under replay

    def spy(found, grid, core, noisy, *rest, **kw):
        widened.append((found, np.array(grid, copy=True), np.array(noisy, dtype=float, copy=True)))
        return real_widen(found, grid, core, noisy, *rest, **kw)

    real_widen = column_module.widen
    monkeypatch.setattr(column_module, "widen", spy)
    monkeypatch.setattr(mechanisms, "recorder", lambda mech, true, out, info: calls.append(np.array(out, copy=True)))
    found, _ = _discover(a, eps, 3)
    first, widened[:] = list(widened), []
    replay = iter(calls)
    monkeypatch.setattr(mechanisms, "recorder", lambda mech, true, out, info: np.array(next(replay), copy=True))
    found2, _ = _discover(b, eps, 3)
    assert found2.schema == found.schema and found2.columns == found.columns
    # and a table whose true counts differ a lot (the data moved) would differ without the replay
    c = make(seed=1)
    c.iloc[:, 0] = c.iloc[:, 0] * 0.5 + (1008.0 if make is _decimal_years else 0.0)
    replay = iter(calls)
    widened[:] = []
    found3, _ = _discover(c, eps, 3)
    assert found3.schema == found.schema and found3.columns == found.columns
    assert len(widened) == len(first) >= 1
    for (f1, g1, n1), (f3, g3, n3) in zip(first, widened):
        assert f1 == f3
        np.testing.assert_array_equal(g1, g3)
        np.testing.assert_array_equal(n1, n3)


def _years_table(seed: int, spread: bool = False) -> pd.DataFrame:
    """``years``: stackoverflow's YearsCodedJob shares (0-20, top-coded at 20), or (``spread``) integers 0-69
    alike; 20 binary flags thin the budget as its 21 columns do."""
    rng = np.random.default_rng(seed)
    n = 5600
    p = np.r_[33, 590, 679, 602, 519, 450, 311, 254, 203, 274, 250, 128, 131, 98, 127, 123, 121, 89, 72, 67, 473]
    years = rng.integers(0, 70, size=n) if spread else rng.choice(21, size=n, p=p / p.sum())
    years[:2] = 21, 22  # (each table has every integer of the bounds [0, 22]: the replayed candidates agree)
    table = {"years": years}
    table.update({f"f{j}": (rng.random(n) < 0.3).astype(int) for j in range(20)})
    return pd.DataFrame(table)


def _zero_config_share(table: pd.DataFrame, seed: int):
    spec = parse_discover({"epsilon": 0.5, "delta": 5e-7})  # a zero-config discovery's share (test_discover_zeroheavy)
    return discover_schema(table, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()), rng=np.random.default_rng(seed),
                           rho=0.5 * approx_dp_to_zcdp(1.0, 5e-7))


def test_the_zoom_to_one_cell_per_integer_reads_only_noisy_counts(monkeypatch):
    """With the outputs of a discovery of the top-coded years replayed, a table whose years spread over 0-69
    (its true fine support: every cell) gets the same schema: the zoom decided on its true support would not."""
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found = _zero_config_share(_years_table(1), 1)
    assert any(note.startswith("zoomed in on") for note in found.columns["years"]["learned"])
    coupling.mode = "replay"
    found2 = _zero_config_share(_years_table(1, spread=True), 1)
    assert found2.schema == found.schema and found2.columns == found.columns


def test_a_bounded_count_on_cells_of_two_is_measured_again_per_integer():
    """Issue 27, stackoverflow's ``YearsCodedJob``: years 0-20, top-coded at 20 (8.5% of the rows), 33 rows at 0
    beside 590 at 1, on a 21-column table whose budget gives the first fine histogram cells of 2 over a coarse
    range [0.5, 70).  Its support (11 of 35 cells) was too wide for a zoom, so the two measurements were averaged
    and each end cell decoded its two integers alike: 21 as often as 20, 0 as often as 1 (1-way TV 0.105 against
    0.05 by hand).  The zoom now has one cell per integer: the last fine histogram (the decoder's within-bin
    weights) is per integer and separates 20 from 21.  Failed on 0 of seeds 0-9 (on main: cells of 2 on all)."""
    found = _zero_config_share(_years_table(0), 0)
    ev = found.evidence["years"]
    assert np.all(np.diff(ev.cells) == 1.0), ev.cells  # one cell per integer
    assert ev.cells[0] <= -0.5 and ev.cells[-1] >= 20.5  # the integers 0 and 20 have cells of their own
    assert any(note.startswith("zoomed in on") for note in found.columns["years"]["learned"])


def _birth_years(seed: int, spread: bool = False, every: bool = False) -> pd.DataFrame:
    """``year``: cricketers' birth years (DAAG, 5,960 rows), whole years 1840-1960 rising from about 20 to 60 a
    year, or (``spread``) whole years spread over 1800-1999, the first fine histogram's cells of 50 past the data;
    ``every``: one row of each year 1800-1999 first (both tables then hold the same distinct years); seven binary
    flags thin the budget as the table's other columns do."""
    rng = np.random.default_rng(seed)
    n = 5960
    if spread:
        year = rng.integers(1800, 2000, size=n)
    else:
        weights = np.linspace(20.0, 60.0, 121)
        year = 1840 + rng.choice(121, size=n, p=weights / weights.sum())
    if every:
        year[:200] = np.arange(1800, 2000)
    table = {"year": year}
    table.update({f"f{j}": (rng.random(n) < 0.3).astype(int) for j in range(7)})
    return pd.DataFrame(table)


def test_a_zoomed_columns_bounds_are_trimmed_to_its_rows():
    """Issue 27 (session 15), cricketers' birth years 1840-1960: the zoom over the first fine support [1800, 2000]
    (cells of 50) gave the bounds, 40 years past the data at each end, and 3.9% of the synthetic rows were
    decoded into the empty years.  The zoom's cells past its support, with the outer coarse cells' counts, show
    no rows there.  Seeds 0-4: 130 empty years past the data in all (measured; 400 before, [1800, 2000] on
    every seed), at least one bound trimmed on each, and no bound cuts more than 3% of the rows (at most 1%)."""
    empty = 0
    for seed in range(5):
        table = _birth_years(seed)
        found = _zero_config_share(table, seed)
        edges = found.schema["columns"]["year"]["edges"]
        year = table["year"].to_numpy()
        empty += max(0, year.min() - edges[0]) + max(0, edges[-1] - year.max() - 1)
        assert (year < edges[0]).mean() <= 0.03 and (year > edges[-1]).mean() <= 0.03, edges
        assert any(note.startswith("bounds trimmed") for note in found.columns["year"]["learned"])
    assert empty <= 200, empty


def test_the_trim_reads_only_noisy_counts(monkeypatch):
    """With the outputs of a discovery of the birth years replayed, a table whose years fill the whole first fine
    support [1800, 2000) (true counts that would keep its bounds) gets the same schema.  Mutants: the trim read
    off the zoom's true cell counts, or off the true count of the first histogram's outer cell."""
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found = _zero_config_share(_birth_years(1, every=True), 1)
    assert any(note.startswith("bounds trimmed") for note in found.columns["year"]["learned"])
    coupling.mode = "replay"
    found2 = _zero_config_share(_birth_years(1, spread=True, every=True), 1)
    assert found2.schema == found.schema and found2.columns == found.columns


def _stamps(n, seed=0):
    """Unix seconds of ratings 1996-2016, more in later years (movie_ratings' ``timestamp``, issue 27)."""
    rng = np.random.default_rng(seed)
    weights = np.linspace(1, 3, 21) / np.linspace(1, 3, 21).sum()
    years = rng.choice(np.arange(1996, 2017), n, p=weights)
    return pd.DataFrame({"t": ((years - 1970) * 31_556_952 + rng.integers(0, 31_556_952, n)).astype(float)})


def _zoom_cells(found, ledger) -> int:
    measured = [c.measured for c in ledger.charges if "zoomed fine cell" in (c.measured or "")]
    assert measured, found.columns["t"]["learned"]
    return int(re.search(r"\((\d+) public cells\)", measured[0]).group(1))


def test_a_rich_column_zooms_in_finer_cells():
    """zoom.ZOOM_FILL: on 100,000 rows the zoom has as many cells as a quarter of what the noisy rows fill (340 here,
    in steps of 2·10⁶ s), on 10,000 rows the first histogram's count (136, steps of 5·10⁶ s), never more than
    ZOOM_CELLS.  The cells are public round widths; their number is a function of the noisy row count."""
    small = _zoom_cells(*_discover(_stamps(10_000), 1.0, 0))
    rich = _zoom_cells(*_discover(_stamps(100_000), 1.0, 0))
    assert small <= 1.1 * FINE_CELLS < 2 * small <= rich <= ZOOM_CELLS, (small, rich)


def test_the_zoom_cells_read_only_the_noisy_row_count(monkeypatch):
    """zoom.ZOOM_FILL's cell count is post-processing: discovery on 100,000 timestamps, then on 10,000 others with the
    first run's noisy outputs replayed, gives the same schema and the same measurements (a cell count read off the
    true rows would size the second run's zoom differently).  Mutant: ``discover-zoom-cells-true-rows``."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found, ledger = _discover(_stamps(100_000), 1.0, 4)
    replay.mode = "replay"
    found2, ledger2 = _discover(_stamps(10_000, seed=1), 1.0, 4)
    assert replay.i == len(replay.calls)
    assert found2.schema == found.schema
    assert [c.measured for c in ledger2.charges] == [c.measured for c in ledger.charges]
    assert _zoom_cells(found, ledger) > 1.1 * FINE_CELLS


def test_a_support_of_a_heaps_cell_alone_is_not_zoomed():
    """Issue 27 (session 17, acs_2012's ``hrs_work`` on seed 5): a first fine support of one cell while the
    cells outside it and the profile's buckets hold a third of the rows is not zoomed (its cells would be the
    bounds and clamp every other row); a support that holds the rows is."""
    noisy = np.array([87.0, 57, -1, -9, 545, 13, 66, -3, -12, -5, 11, -8, 65, -14])
    grid = np.array([15.0, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91, 100])
    buckets = (np.array([10.0, 15, 20, 30, 50, 70, 100, 150]), np.array([-80.0, 61, 162, 661, 43, 50, 47]), 61.5)
    assert not holds(noisy, (4, 4), 36.7, grid, buckets)
    assert holds(noisy, (4, 4), 36.7, grid, None)  # the first histogram alone: 1.9 sds, not enough
    quiet = np.where(np.arange(noisy.size) == 4, 545.0, noisy * 0.1)
    assert holds(quiet, (4, 4), 36.7, grid, (buckets[0], np.array([-80.0, 6, 16, 600, 4, 5, 4]), 61.5))


def test_the_zoom_mass_check_reads_only_noisy_counts(monkeypatch):
    """With the outputs of a discovery of the decimal years replayed (zoomed: the support holds the rows), a
    table with half its rows spread over the coarse range gets the same schema: the mass check decided on its
    true fine counts would refuse the zoom."""
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    table = _decimal_years(n=4000)
    found, _ = _discover(table, 1.0, 0)
    assert any(note.startswith("zoomed in") for note in found.columns["when"]["learned"])
    coupling.mode = "replay"
    x = table["when"].to_numpy().copy()
    x[::2] = np.round(np.random.default_rng(1).uniform(1000, 6999, x[::2].size), 4)
    found2, _ = _discover(pd.DataFrame({"when": x}), 1.0, 0)
    assert found2.schema == found.schema and found2.columns == found.columns
