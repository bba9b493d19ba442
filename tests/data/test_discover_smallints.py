"""Small integers beside a zero spike (issue 27, email's flags and small counts; dpsynth/data/discover/tail.py).

When a column's profile shows its zeros alone, the decades histogram finds the rows in [1, 10); the histogram per
integer −9 … 9 then says where in that decade they are, so a 0/1 flag is not released with values 0 to 10.

Statistical tests on a fixed seed: the stage budget is set so that the per-integer histogram's discrete Gaussian
noise has σ = 20 rows (its cut over 9 cells at BUCKET_MISS 1%: about 74 rows).  The integers with data hold 200 to
400 rows, at least 6 σ past the cut (a miss below 1e-9 each); an empty integer past the last passes its own cut
or a ring's with probability at most 1% by the cut's design, which bounds each test's false-failure rate.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.column import CONCENTRATED, FEW_CELLS, ColumnDiscovery
from dpsynth.data.discover.noise import ColumnBudget, support
from dpsynth.data.discover.spec import ColumnHint
from dpsynth.data.discover.tables import as_discovery_table
from dpsynth.data.discover.tail import BESIDE_BLOCKS, DECADES, TAIL_SHARE, UNIT_SHARE, UNITS, beside, probe, reached
from dpsynth.data.discover.tied import SPIKE, kept_sides, past_mass, tied_cells, which
from dpsynth.data.discover.values import seen_integers
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition
from tests.helpers import Replay

SIGMA = 20.0
N = 4000


def _table() -> pd.DataFrame:
    """``flag``: 400 ones; ``small``: 400 ones, 300 twos, 200 threes; ``neg``: −1 and −2 (300 each); else 0."""
    flag = np.zeros(N, dtype=int)
    flag[:400] = 1
    small = np.zeros(N, dtype=int)
    small[:400], small[400:700], small[700:900] = 1, 2, 3
    neg = np.zeros(N, dtype=int)
    neg[:300], neg[300:600] = -1, -2
    return pd.DataFrame({"flag": flag, "small": small, "neg": neg})


def _column(table: pd.DataFrame, name: str) -> ColumnDiscovery:
    """A column as if its profile showed its zeros alone (the state in which the decades are asked)."""
    col = ColumnDiscovery(ColumnHint(), as_discovery_table(table).column(name), parse_discover({"epsilon": 1.0}))
    col.kind, col.integral, col.zero_spike, col.non_null = "numeric", True, True, float(len(table))
    col.bounds, col.core = (-1.5e-6, 2e-6), ((0.0, 1e-6), (0.0, 1e-6))
    return col


def _bounds(col: ColumnDiscovery) -> tuple[int, int]:
    """The integer bounds the column's spec gets (``_numeric``: ceil and floor of seen_integers)."""
    lo, hi = seen_integers(col, 0.0, 0.0)
    return math.ceil(lo), math.floor(hi)


def _stage(seed: int, name: str) -> ColumnBudget:
    """A stage budget whose per-integer histogram (UNIT_SHARE of it) has noise σ = SIGMA."""
    rho = 1.0 / (2.0 * SIGMA**2) / UNIT_SHARE
    return ColumnBudget(rho, True, 1.0, Ledger(1.0, 1e-6, ZCDPComposition()), np.random.default_rng(seed), name)


@pytest.mark.parametrize("name, bounds", [("flag", (0, 1)), ("small", (0, 3)), ("neg", (-2, 0))])
def test_the_first_decade_is_cut_at_its_last_integer_with_data(name, bounds):
    """Before: the decade [1, 10) kept as bounds, so a flag became 0 … 10 (email's ``spam``)."""
    table = _table()
    col = _column(table, name)
    probe(col, _stage(3, name))
    assert _bounds(col) == bounds
    assert col.few  # still one bin per integer


def test_the_integers_are_charged_their_share_and_read_off_noisy_counts_only(monkeypatch):
    """The per-integer histogram is charged UNIT_SHARE of the stage (the decades TAIL_SHARE), and the bounds read
    only mechanism outputs: on D' (the flag's ones moved to 7) with D's outputs replayed, the same bounds."""
    table = _table()
    outputs: list = []
    monkeypatch.setattr(mechanisms, "recorder", lambda m, true, out, info: outputs.append(out))
    col, stage = _column(table, "flag"), _stage(5, "flag")
    probe(col, stage)
    units = [c for c in stage.ledger.charges if "per integer" in c.measured]
    decades = [c for c in stage.ledger.charges if "public decade" in c.measured]
    assert len(units) == 1 and units[0].rho == pytest.approx(UNIT_SHARE * stage.amount, rel=1e-9)
    assert len(decades) == 1 and decades[0].rho == pytest.approx(TAIL_SHARE * stage.amount, rel=1e-9)
    assert math.fsum(c.rho for c in stage.ledger.charges) <= stage.amount * (1 + 1e-9)
    assert UNITS.size - 1 == 21 and len(outputs) == 2
    replayed = iter(outputs)
    monkeypatch.setattr(mechanisms, "recorder", lambda m, true, out, info: np.array(next(replayed), copy=True))
    other = table.assign(flag=np.where(table["flag"] == 1, 7, 0))
    again = _column(other, "flag")
    probe(again, _stage(5, "flag"))
    assert _bounds(again) == _bounds(col) == (0, 1)


# -- tied.py: when an integral column's first fine histogram is measured again per integer

def _budget(sigma: float) -> ColumnBudget:
    return ColumnBudget(1.0 / (2.0 * sigma**2), True, 1.0, Ledger(1.0, 1e-6, ZCDPComposition()),
                        np.random.default_rng(0), "x")


def test_a_ring_cell_past_tied_years_does_not_hide_them():
    """anes_therms' years (cells of 50): the support reached a fourth cell by a ring on noise alone (313 rows
    under the cut of 333); its core, the cells past their own cut, is two cells holding all the rows: tied.  A
    support of four cells each past the cut is not (deterministic: post-processing of given counts)."""
    noisy = np.zeros(126)
    noisy[[23, 25, 26]] = [313.0, 20911.0, 12797.0]
    budget = _budget(77.0)
    assert budget.block_cut(1, 126) > 313.0
    assert tied_cells(noisy, (23, 26), budget, non_null=34000.0, few_cells=FEW_CELLS, concentrated=CONCENTRATED)
    noisy[[23, 24]] = 5000.0
    assert not tied_cells(noisy, (23, 26), budget, non_null=34000.0, few_cells=FEW_CELLS, concentrated=CONCENTRATED)
    assert not tied_cells(noisy, (25, 26), budget, non_null=60000.0, few_cells=FEW_CELLS, concentrated=CONCENTRATED)
    kw = {"non_null": 60000.0, "few_cells": FEW_CELLS, "concentrated": CONCENTRATED}  # (not concentrated: not tied)
    weeks = np.full(126, 500.0)
    weeks[17] = SPIKE * 500.0  # 52 weeks inside [51, 54): a spike SPIKE times the median cell
    assert which(weeks, (0, 34), budget, 3.0, integral=True, most=105.0, **kw) == (False, True)
    weeks[17] = SPIKE * 500.0 - 100.0  # smoother: the wide cells measured again instead
    assert which(weeks, (0, 34), budget, 3.0, integral=True, most=105.0, **kw) == (False, False)
    assert which(noisy, (0, 35), budget, 3.0, integral=True, most=105.0, **kw) == (False, False)
    assert which(noisy, (0, 34), budget, 1.0, integral=True, most=500.0, **kw) == (False, False)
    assert which(noisy, (0, 34), budget, 3.0, integral=False, most=500.0, **kw) == (False, False)


def _weeks(seed: int, n: int = 28000) -> pd.DataFrame:
    """Weeks worked in two years (nlswork's ``wks_work``): 14% at 52, 9% at 104, 7% at 98, the rest even over
    0-104."""
    rng = np.random.default_rng(seed)
    spikes = rng.choice([52, 104, 98], size=n, p=np.array([14, 9, 7]) / 30)
    return pd.DataFrame({"weeks": np.where(rng.random(n) < 0.3, spikes, rng.integers(0, 105, size=n))})


def test_few_integers_for_the_rows_are_measured_one_cell_each():
    """A coarse range of about 300 integers (the profile's buckets to [100, 150) and two more) is more than the
    rows fill (cells of 3 first), but the support, 105 integers, is not: the rest of the budget measures one cell
    per integer, so the spikes at 52, 98 and 104 are not spread over cells of 3 (before: cells of 3 again).  At the
    ρ used the first fine histogram has σ ≈ 80 (cut ≈ 320 over 128 cells, fill ≈ 175 integers): the support
    would need 70 integers of false cells past its ends to fail (below 1e-6)."""
    rho = 1.0 / (2.0 * 80.0**2) / (0.6 * 0.7)
    spec = parse_discover({"epsilon": 1.0, "delta": 5e-7})
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    found = discover_schema(_weeks(0), spec, ledger=ledger, rng=np.random.default_rng(0), rho=rho)
    cells = np.asarray(found.evidence["weeks"].cells)
    assert any("few integers for the rows" in x for x in found.columns["weeks"]["learned"])
    assert np.all(np.diff(cells) == 1.0) and cells[0] <= 0.5 and cells[-1] >= 103.5


def test_tied_years_are_read_off_noisy_counts_only(monkeypatch):
    """Survey years (even, 1978-2012) at a budget whose rows fill few cells (σ ≈ 60 on the first fine histogram:
    cells of a few hundred years, the support two cells): tied, one cell per integer.  On D' (the years moved to
    1100-1134, outside those cells) with D's noisy outputs replayed: the same schema."""
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"year": 1978 + 2 * rng.integers(0, 18, size=6000)})
    rho = 1.0 / (2.0 * 60.0**2) / (0.6 * 0.7)
    spec = parse_discover({"epsilon": 1.0, "delta": 5e-7})
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = discover_schema(d, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()), rng=np.random.default_rng(2),
                            rho=rho)
    assert any("tied integers" in x for x in found.columns["year"]["learned"])
    replay.mode = "replay"
    again = discover_schema(d.assign(year=d["year"] - 878), spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()),
                            rng=np.random.default_rng(2), rho=rho)
    assert replay.i == len(replay.calls) and again.schema == found.schema


def test_tied_bounds_trim_a_side_only_where_its_wide_cells_are_mostly_empty():
    """tied.kept_sides (deterministic: post-processing of given counts).  Survey years 1978-2012 measured per
    integer over the wide cells [1900, 2100) of 100: the cells past 2012 and before 1978 sum to noise, trimmed.
    Ages at first marriage over [15, 30) in cells of 5 (σ 53, then 65 per integer): the per-integer support
    ends at 25, but [25, 30) holds 258 rows and 26-29 sum to 186: the upper side stays at the wide edge.  A heap
    of 600 at 25 filling [25, 30) alone (26-29 sum to noise): trimmed to 25."""
    years = np.zeros(200)
    years[78:113:2] = 900.0
    cells = np.arange(1900, 2101) - 0.5
    grid, first = np.array([1800.0, 1900.0, 2000.0, 2100.0]), np.array([0.0, 8100.0, 5400.0])
    assert kept_sides(cells, years, (78, 112), 60.0, grid, first, (1, 2), 50.0) == (78, 112)
    ages = np.array([111, 170, 190, 205, 212, 190, 180, 125, 114, 88, 73, 74, 43, 32, 37], dtype=float)
    cells, grid, first = np.arange(15, 31) - 0.5, np.arange(0.0, 75.0, 5.0), np.zeros(14)
    first[3:6] = [888.0, 697.0, 258.0]
    assert kept_sides(cells, ages, (0, 10), 65.0, grid, first, (3, 5), 53.0) == (0, 14)
    ages[10:] = [600.0, -40.0, 10.0, -20.0, 5.0]  # a heap at 25, nothing past it: the wide cell is 25's rows
    first[5] = 640.0
    assert kept_sides(cells, ages, (0, 10), 65.0, grid, first, (3, 5), 53.0) == (0, 10)


def test_tied_edges_past_the_integers_support_spread_the_wide_cells_rows():
    """tied.past_mass (deterministic): past the per-integer support, clipped noise per integer would be a phantom
    mass (26-29 at -40, 80, -20, 90: 170 rows where the wide cell [25, 30) holds only 25's 73); each wide cell's
    estimate is spread evenly instead.  Inside the support the noisy counts clipped at 0 are kept."""
    ages = np.array([111, 170, 190, 205, 212, 190, 180, 125, 114, 88, 73, -40, 80, -20, 90], dtype=float)
    cells, grid, first = np.arange(15, 31) - 0.5, np.arange(0.0, 75.0, 5.0), np.zeros(14)
    first[3:6] = [888.0, 697.0, 73.0]
    mass = past_mass(cells, ages, (0, 10), 65.0, grid, first, (3, 5), 53.0)
    assert np.array_equal(mass[:11], ages[:11]) and np.ptp(mass[11:]) == 0.0
    assert 0.0 <= mass[11:].sum() < 0.25 * np.clip(ages[11:], 0, None).sum()
    ages[11:] = [74.0, 43.0, 32.0, 37.0]  # rows past 25 that the wide cell shows too: about their sum
    first[5] = 258.0
    assert abs(past_mass(cells, ages, (0, 10), 65.0, grid, first, (3, 5), 53.0)[11:].sum() - 186.0) < 5.0


def _ages(seed: int, n: int = 4000) -> pd.DataFrame:
    """Age at first marriage (botswana's ``agefm``): 10-46, mode 19, a long right tail (15% past 26); half null."""
    rng = np.random.default_rng(seed)
    k = np.arange(10, 47)
    p = np.where(k < 19, np.exp(-(k - 19.0) ** 2 / 18.0), np.exp(-(k - 19.0) / 5.0))
    ages = rng.choice(k, size=n, p=p / p.sum()).astype(float)
    ages[rng.random(n) < 0.5] = np.nan
    return pd.DataFrame({"agefm": ages})


def test_tied_bounds_are_read_off_noisy_counts_only(monkeypatch):
    """Ages at first marriage at a thin budget (σ ≈ 53 on the first fine histogram: cells of 5, three holding
    most rows: tied, one cell per integer over the support widened to the profile's, [10, 30) on seed 17).  The
    per-integer support ends before 29 but the wide cell past it holds rows: the upper bound stays at the wide
    edge; below, the integers' own support (18) is kept.  On D' (20,000 more rows aged 12, under that lower
    bound, and 20,000 aged 29) with D's noisy outputs replayed: the same schema, so the sides kept were read off
    noisy counts only; likewise on seed 3 ([15, 35), 21 integers: quantile edges) with 20,000 more aged 30, past
    the per-integer support: the mass placing the edges too."""
    d = _ages(0)
    rho = 1.0 / (2.0 * 53.0**2) / (0.6 * 0.7)
    spec = parse_discover({"epsilon": 1.0, "delta": 5e-7})
    for seed, more in ((17, [12.0, 29.0]), (3, [30.0])):
        replay = Replay()
        monkeypatch.setattr(mechanisms, "recorder", replay)
        found = discover_schema(d, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()),
                                rng=np.random.default_rng(seed), rho=rho)
        assert any("tied integers" in x for x in found.columns["agefm"]["learned"])
        edges = found.schema["columns"]["agefm"]["edges"]
        assert edges[-1] >= 29.5 and edges[0] > 12
        replay.mode = "replay"
        again = discover_schema(pd.concat([d, pd.DataFrame({"agefm": np.repeat(more, 20000)})], ignore_index=True),
                                spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()), rng=np.random.default_rng(seed),
                                rho=rho)
        assert replay.i == len(replay.calls) and again.schema == found.schema


def _rare_zeros(seed: int = 0, n: int = 5000) -> pd.DataFrame:
    """Two 0/1 flags whose 0s are rare (2.7 % and 2 %) beside ten columns of integers 0-99 that thin the budget,
    as botswana_fertility's ``knowmeth`` (160 zeros of 4,361 rows) among 27 columns."""
    rng = np.random.default_rng(seed)
    out = {"f97": (rng.random(n) < 0.973).astype(int), "f98": (rng.random(n) < 0.98).astype(int)}
    out.update({f"x{j}": rng.integers(0, 100, n) for j in range(10)})
    return pd.DataFrame(out)


@pytest.mark.parametrize("seed", range(4))
def test_a_flag_whose_zeros_are_rare_keeps_0_and_gets_no_2(seed):
    """The zeros (135 and 100 rows) are under the profile's cut, so the support holds the integer 1 alone; an
    integral column's bounds of one integer took the next one up as their second value ([1, 2]: every 0 lost
    and 2s released, 1-way TV 0.027 and 0.02).  The neighbour toward 0 is the second value now: [0, 1].
    Deterministic (fixed seeds): the rule reads the bounds, which the noisy counts gave."""
    spec = parse_discover({"epsilon": 0.5, "delta": 5e-7})
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    found = discover_schema(_rare_zeros(seed), spec, ledger=ledger, rng=np.random.default_rng(seed), rho=0.002)
    for name in ("f97", "f98"):
        assert found.schema["columns"][name]["edges"] == [-0.5, 0.5, 1.5], found.schema["columns"][name]


# -- tail.beside: the decade just past the decades' support

def _tail_table(at: tuple[int, ...] = (11, 22, 45)) -> pd.DataFrame:
    """``stay``: nights in hospital (doctor_visits_aus' ``hospdays``): 400 rows in 1-7, 260 at ``at`` (the
    decade [10, 100)), the rest 0."""
    stay = np.zeros(N, dtype=int)
    stay[:400] = np.arange(400) % 7 + 1
    stay[400:660] = np.array(at)[np.arange(260) % len(at)]
    return pd.DataFrame({"stay": stay})


def test_a_decade_beside_the_support_passes_at_the_cut_of_one_cell_a_side():
    """doctor_visits_aus' ``hospdays`` on seed 3 (σ 56): [10, 100) at 205 under the 19 decades' cut (218) but past
    that of one cell a side (182); the next decade out is tested in turn, an empty one is not reached
    (deterministic: post-processing of given counts)."""
    budget = _budget(56.0)
    noisy = np.zeros(DECADES.size - 1)
    zero, one, ten = (int(np.flatnonzero(DECADES[:-1] == x)[0]) for x in (0.0, 1.0, 10.0))
    noisy[[zero, one, ten]] = [4537.0, 484.0, 205.0]
    assert budget.block_cut(1, noisy.size) > 205.0 >= budget.block_cut(1, BESIDE_BLOCKS)
    found = support(noisy, budget)
    assert found == (zero, one)
    notes: list = []
    assert beside(noisy, found, budget, notes) == (zero, ten) and "[10, 100)" in notes[0]
    noisy[ten + 1] = 190.0  # [100, 1000) beside it: reached too
    assert beside(noisy, found, budget) == (zero, ten + 1)
    noisy[ten] = 150.0  # under the cut of one cell a side: nothing past [1, 10), whatever lies further out
    assert beside(noisy, found, budget) == (zero, one)
    noisy[zero - 1] = 300.0  # [−1, 0) beside the support's lower end
    assert beside(noisy, found, budget) == (zero - 1, one)
    edge = np.zeros(DECADES.size - 1)
    edge[[1, noisy.size - 2]], edge[[0, noisy.size - 1]] = 1000.0, 1000.0  # the outer cells are never reached
    assert beside(edge, (1, noisy.size - 2), budget) == (1, noisy.size - 2)


def test_the_decade_beside_is_read_off_noisy_counts_only(monkeypatch):
    """On D' (the tail moved to [100, 1000)) with D's mechanism outputs replayed, the same bounds: the decade
    beside the support is read off the noisy decades, not off the table."""
    outputs: list = []
    monkeypatch.setattr(mechanisms, "recorder", lambda m, true, out, info: outputs.append(out))
    col = _column(_tail_table(), "stay")
    probe(col, _stage(4, "stay"))
    assert _bounds(col) == (0, 99)
    replayed = iter(outputs)
    monkeypatch.setattr(mechanisms, "recorder", lambda m, true, out, info: np.array(next(replayed), copy=True))
    again = _column(_tail_table((110, 220, 450)), "stay")
    probe(again, _stage(4, "stay"))
    assert _bounds(again) == _bounds(col)


def test_the_fine_support_reaches_the_decades_reach():
    """randhie's ``mentvis`` (3.5% of its rows in 1-99, every fine cell past 0 under its cut): the support of the
    zero cell alone is made to reach the cell of 99 the decades found, so the tail keeps its bins (was one bin,
    edges [0, 0.5, 99]); a side the decades did not widen (the coarse range's −1.5e-06) keeps its support, and
    without a reach (no decades asked) nothing moves.  Deterministic: post-processing of public edges."""
    grid = np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 4.5, 9.5, 19.5, 49.5, 99.5])
    assert reached((2, 2), grid, (-1.5e-6, 99.0)) == (2, 8)
    assert reached((2, 3), grid, (-1.5e-6, 9.0)) == (2, 5)
    assert reached((2, 7), grid, (-1.5e-6, 9.0)) == (2, 7)  # (a support past the reach stays)
    assert reached((2, 2), grid, (-20.0, 0.0)) == (0, 2)
    assert reached((2, 2), grid, None) == (2, 2) and reached(None, grid, (0.0, 99.0)) is None
