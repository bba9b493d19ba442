"""The coarse range's margin buckets (issue 27, resume's years of college and of experience; coarse.margins,
zoom.widen): a bucket beside the profile's support that holds a tenth of the rows or less stands only 2-3 sd
out of the profile's noise, under its cut; the fine support reaches it when the profile's noisy count and the
fine cells inside it, averaged with inverse-variance weights, stand MARGIN_SD sds.

Statistical test (``test_a_few_integers_column_keeps_its_thin_integer``): a zero-config-like discovery (half the
ρ of ε 1, δ 1e-6, over 30 columns as resume's: here 5 columns with a sixth of that share) of 5,000 rows.  The
profile's bucket noise has σ ≈ 93 rows, the few-integers stage's cells σ ≈ 144: their average σ ≈ 78.  The
400 twos are about 5.1 of those σ, against a cut of MARGIN_SD = 2.5: missed with probability about 0.005 (seeds
0-11 measured: kept on 12; main before: 9).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import allot, coarse, column, discover_schema, parse_discover, values, zoom
from dpsynth.data.discover.coarse import margins
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.discover.values import FEW_MARGIN_NEXT, FEW_MARGIN_SD, seen_integers
from dpsynth.data.discover.zoom import MARGIN_SD, widen
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp
from tests.helpers import Replay

GRID = np.arange(1.5, 10.6, 1.0)  # unit cells for the integers 2 … 10


@pytest.fixture(autouse=True)
def _cheap_stage(monkeypatch):
    """The margins at the cheap few-integers stage (FEW_SHARE of the rest), as measured: a stage sized to the
    rows (allot.few_share) shows these tables' thin integers by its own cells (tests/data/test_discover_few.py)."""
    monkeypatch.setattr(allot, "FEW_TARGET", 0.0)
CORE = ((3.0, 5.0), (3.0, 5.0))  # the profile's support: the bucket [3, 5)


def _budget(sd: float) -> ColumnBudget:
    return ColumnBudget.with_scale(sd, ColumnBudget(1.0, True, 1.0, Ledger(1.0, 1e-6, ZCDPComposition()),
                                                    np.random.default_rng(0), "x"))


def test_the_margins_are_the_buckets_beside_the_support_with_their_noisy_counts():
    ext = np.array([0.0, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0])
    per_bucket = np.array([5.0, 6.0, 7.0, 300.0, 4000.0, 8.0, 9.0])
    assert margins(per_bucket, ext, (4, 4), (2, 6), 100.0) == (
        (1.5, 2.0, 7.0, 100.0), (2.0, 3.0, 300.0, 100.0), (5.0, 7.0, 8.0, 100.0), (7.0, 10.0, 9.0, 100.0))


def test_the_fine_support_reaches_a_margin_bucket_the_profile_and_its_cells_show_together():
    """The twos (cell 0): 200 in the profile (σ 100: 2 σ, under its cut and MARGIN_SD) and 250 in the fine cell (σ
    150: 1.7 σ, under its CONFIRM test); averaged, 215 rows at σ 83, 2.6 σ.  Main before: the support stayed at 3."""
    noisy = np.array([250.0, 1000.0, 3600.0, 0, 0, 0, 0, 0, 0])
    bucket = [(2.0, 3.0, 200.0, 100.0)]
    assert widen((1, 2), GRID, CORE, noisy, _budget(150.0), bucket) == (0, 2)
    assert widen((1, 2), GRID, CORE, noisy, _budget(150.0)) == (1, 2)  # no margins: as before


def test_a_margin_bucket_under_the_averaged_cut_is_not_reached():
    """Either measurement alone at 1.5 σ: averaged 173 rows at σ 83, 2.1 σ < MARGIN_SD: not reached; upwards
    too (the integers 7, 8, 9 of the bucket [7, 10))."""
    noisy = np.array([225.0, 1000.0, 3600.0, 0, 0, 0, 0, 0, 0])
    assert widen((1, 2), GRID, CORE, noisy, _budget(150.0), [(2.0, 3.0, 150.0, 100.0)]) == (1, 2)
    assert 2.1 < MARGIN_SD
    up = np.array([0, 1000.0, 3600.0, 0, 0, 100.0, 100.0, 100.0, 0])  # cells of 7, 8, 9
    bucket = [(7.0, 10.0, 150.0, 100.0)]  # 1.5 σ; cells 300 at σ 260: averaged 169 at σ 93, 1.8 σ
    assert widen((1, 2), GRID, CORE, up, _budget(150.0), bucket) == (1, 2)
    bucket = [(7.0, 10.0, 400.0, 100.0)]  # 4 σ: reached to the cell of its upper edge, 10
    assert widen((1, 2), GRID, CORE, up, _budget(150.0), bucket) == (1, 8)


def _table(twos_at: int = 2, twos: int = 400) -> pd.DataFrame:
    """``college``: 3,600 fours, 1,000 threes, ``twos`` at ``twos_at``; 4 flags (columns that thin the budget)."""
    rng = np.random.default_rng(7)
    college = np.repeat([4, 3, twos_at], [3600, 1000, twos])
    rng.shuffle(college)
    out = {"college": college}
    out.update({f"f{j}": (rng.random(college.size) < 0.3).astype(int) for j in range(4)})
    return pd.DataFrame(out)


def _discover(table: pd.DataFrame, seed: int):
    share = 0.5 * 5 / 30  # resume's per-column budget: half of ρ over 30 columns
    spec = parse_discover({"epsilon": share, "delta": 5e-7})
    rho = share * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7)
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed), rho=rho)


def test_a_few_integers_column_keeps_its_thin_integer():
    """Resume's years of college (72% at 4, 5.6% at 2) lost its twos to a few-integers stage too thin to show them
    (main before, at this seed: edges [2.5, 3.5, 4.5]; seeds 0-11: lost on 3)."""
    edges = _discover(_table(), seed=3).schema["columns"]["college"]["edges"]
    assert edges == [1.5, 2.5, 3.5, 4.5]


def test_the_twos_the_profile_missed_are_kept_by_the_margin(monkeypatch):
    """300 twos (3.2 σ in the profile's bucket: under its cut at seed 3, its support is [3, 5)); the margin keeps
    them (averaged 3.8 σ); with no margin reached (as before) they are lost (seeds 0-11: kept on 11, before 6)."""
    assert _discover(_table(twos=300), seed=3).schema["columns"]["college"]["edges"][0] == 1.5
    monkeypatch.setattr(zoom, "MARGIN_SD", math.inf)
    monkeypatch.setattr(values, "FEW_MARGIN_SD", math.inf)  # (the profile's count alone also shows them)
    assert _discover(_table(twos=300), seed=3).schema["columns"]["college"]["edges"][0] == 2.5


def test_the_margins_are_read_off_noisy_counts_only(monkeypatch):
    """Discovery on D (the twos of the test above), then on D' (the twos moved to 4) with D's noisy outputs
    replayed: the same schema."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = _discover(_table(twos=300), seed=3)
    assert found.schema["columns"]["college"]["edges"][0] == 1.5
    replay.mode = "replay"
    again = _discover(_table(twos_at=4, twos=300), seed=3)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema


def test_an_integral_columns_coarse_range_ends_in_buckets_holding_integers():
    """Schooling's ``famed`` (classes 1-9; its 1s under the profile's cut, its support from [3, 5)): the two
    margin buckets below were [2, 3) and [1.5, 2), and the coarse range [1.5, …) held no cell for the 1s.  An
    integral column's range ending in [1.5, 2) (no integer) ends in [1, 1.5); a real column's is as before, and
    so is a range ending between -1 and 1 (its integer is 0: reach_zero's)."""
    from dpsynth.data.discover.coarse import around

    ext = np.array([-2.0, -1.5, -1.0, -0.7, 0.0, 1e-6, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0])
    assert around((11, 12), ext, 2, True).tolist() == [8, 14]  # [1, 1.5) … [10, 15)
    assert around((11, 12), ext, 2, False).tolist() == [9, 14]  # [1.5, 2) … [10, 15): as before
    assert around((8, 12), ext, 2, True).tolist() == [6, 14]  # [0.5, 0.7): as before
    assert around((4, 4), ext, 2, True).tolist() == [2, 6]  # [-1, -0.7) and [0.5, 0.7): as before
    assert around((4, 4), ext, 3, True).tolist() == [0, 8]  # [-1.5, -1) to [-2, -1.5); [0.7, 1) to [1, 1.5)
    assert around((1, 14), ext, 2, True).tolist() == [0, 14]  # (clipped to the grid)


def _classes(ones_at: int = 1) -> pd.DataFrame:
    """``college`` as schooling's ``famed`` (classes 1-9 on 3,010 rows, 185 1s: 6%), the 1s at ``ones_at``."""
    rng = np.random.default_rng(7)
    college = np.repeat([ones_at, 2, 3, 4, 5, 6, 7, 8, 9], [185, 237, 376, 143, 238, 400, 152, 663, 616])
    rng.shuffle(college)
    out = {"college": college}
    out.update({f"f{j}": (rng.random(college.size) < 0.3).astype(int) for j in range(4)})
    return pd.DataFrame(out)


def test_an_integral_range_reads_only_noisy_counts(monkeypatch):
    """Classes 1-9 whose 1s the profile misses (its support from [3, 5) at seed 0): the range's lower end is
    [1, 1.5), moved out from [1.5, 2) by the public edges; with the 1s moved to 9 and the outputs replayed, the
    same schema and range (an end read off the true smallest number would differ)."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = _discover(_classes(), seed=0)
    assert "coarse range [1, 20) (noisy logarithmic buckets)" in found.columns["college"]["learned"]
    replay.mode = "replay"
    again = _discover(_classes(ones_at=9), seed=0)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema and again.columns == found.columns
    monkeypatch.setattr(mechanisms, "recorder", None)
    monkeypatch.setattr(column, "around", lambda found, ext, width, integral: coarse.around(found, ext, width, False))
    before = _discover(_classes(), seed=0)  # the margins of a real column's (main before)
    assert "coarse range [1.5, 20) (noisy logarithmic buckets)" in before.columns["college"]["learned"]


def _few(core, buckets, few: bool = True, fine=None):
    """A column of few integers (values.seen_integers' view): its profile's support ``core`` and margins, and its
    fine cells ``fine`` (edges, noisy counts, sd) when measured."""
    cells, counts, sd = fine if fine is not None else (None, None, 0.0)
    return SimpleNamespace(hint=SimpleNamespace(lower=None), reach=None, few=few, core=core, margins=tuple(buckets),
                           evidence=SimpleNamespace(cells=cells, cell_counts=counts, cell_sd=sd, first=None),
                           first_grid=None)


def test_a_few_integers_column_keeps_a_margin_bucket_its_profile_count_shows():
    """Botswana's ``idlnchld`` (ideal children; 7-20 hold 11.7% of its rows): the profile's support ended in
    [5, 7), its margins [7, 10) and [10, 15) stood 2.0 and 1.8 σ (seed 1) or [10, 15) 3.5 σ (seed 0), and the cheap
    stage's fine cells (σ ≈ 150 per integer) showed neither: bounds [2, 6] or [2, 7], 11-15% of the rows clamped.
    A side reaches its first k buckets when their sum stands FEW_MARGIN_SD σ of its noise for some k."""
    core = ((3.0, 5.0), (5.0, 7.0))
    up = [(7.0, 10.0, 250.0, 100.0), (10.0, 15.0, 300.0, 100.0), (15.0, 20.0, 50.0, 100.0)]
    assert seen_integers(_few(core, up), 3.0, 6.0) == (3.0, 10.0)  # 7 (2.5 σ), 10 (3 σ); [15, 20) at 0.5 σ ends it
    assert FEW_MARGIN_SD == 2.25 and 0.5 < FEW_MARGIN_NEXT <= 1.0
    up[0] = (7.0, 10.0, 150.0, 100.0)  # 1.5 σ, but 450 rows in the two at 3.2 σ: both reached
    assert seen_integers(_few(core, up), 3.0, 6.0) == (3.0, 10.0)
    up[1] = (10.0, 15.0, 100.0, 100.0)  # 1.5 σ, 1.8 σ summed, 1.7 with the third: none
    assert seen_integers(_few(core, up), 3.0, 6.0) == (3.0, 6.0)
    thinning = [(7.0, 10.0, 200.0, 100.0), (10.0, 15.0, 180.0, 100.0), (15.0, 20.0, 90.0, 100.0)]
    # 2.0 and 1.8 σ, 2.7 summed: 7 and 10 kept; [15, 20) at 0.9 σ is not, though the three summed pass
    assert seen_integers(_few(core, thinning), 3.0, 6.0) == (3.0, 10.0)
    thinning[0:2] = [(7.0, 10.0, 190.0, 100.0), (10.0, 15.0, 100.0, 100.0)]  # 1.9, 2.05 and 2.2 σ summed: none
    assert seen_integers(_few(core, thinning), 3.0, 6.0) == (3.0, 6.0)
    down = [(1.0, 1.5, 300.0, 100.0), (1.5, 2.0, -80.0, 100.0), (2.0, 3.0, 250.0, 100.0)]
    assert seen_integers(_few(core, down), 3.0, 6.0) == (1.0, 6.0)  # [1.5, 2) holds no integer: passed over
    down[0], down[2] = (1.0, 1.5, 150.0, 100.0), (2.0, 3.0, 100.0, 100.0)
    assert seen_integers(_few(core, down), 3.0, 6.0) == (3.0, 6.0)
    assert seen_integers(_few(core, up + down, few=False), 3.0, 6.0) == (3.0, 6.0)  # not few integers: as before


def test_a_flag_gains_no_2_from_a_margin_bucket_at_its_noise():
    """Issue 27: 0/1 flags (botswana, nlswork, check_times, email; seeds 0-59) were given an empty 2 on 2.3% of
    their discoveries, 34 of 44 by a lone margin bucket [2, 3) at 2-2.25 σ of noise (the first bucket's bar was
    2 σ: an empty one passes with probability 0.023, 0.012 at 2.25): 1.5%, 18 by this rule.  The fine cells add
    their evidence to the profile's."""
    core = ((-1.5e-6, 1e-6), (1.0, 1.5))
    bucket = [(1.5, 2.0, 300.0, 100.0), (2.0, 3.0, 220.0, 100.0)]  # 2.2 σ
    assert seen_integers(_few(core, bucket), 0.0, 1.0) == (0.0, 1.0)
    bucket[1] = (2.0, 3.0, 260.0, 100.0)
    assert seen_integers(_few(core, bucket), 0.0, 1.0) == (0.0, 2.0)
    cells = np.arange(-0.5, 3.6, 1.0)  # unit cells of 0, 1, 2, 3
    bucket[1] = (2.0, 3.0, 200.0, 100.0)  # 2 σ alone; the fine cell of 2 at 150 (σ 150): 185 at σ 83, 2.2 σ
    assert seen_integers(_few(core, bucket, fine=(cells, np.array([900.0, 3000.0, 150.0, 0.0]), 150.0)), 0.0,
                         1.0) == (0.0, 1.0)
    # the cell at 300: averaged 231 rows at σ 83, 2.8 σ: the 2s are shown
    assert seen_integers(_few(core, bucket, fine=(cells, np.array([900.0, 3000.0, 300.0, 0.0]), 150.0)), 0.0,
                         1.0) == (0.0, 2.0)


def _fives(fives_at: int = 5, fives: int = 250) -> pd.DataFrame:
    """``college``: 3,600 fours, 1,000 threes and ``fives`` at ``fives_at`` (5%); 4 flags."""
    rng = np.random.default_rng(7)
    college = np.repeat([4, 3, fives_at], [3600, 1000, fives])
    rng.shuffle(college)
    out = {"college": college}
    out.update({f"f{j}": (rng.random(college.size) < 0.3).astype(int) for j in range(4)})
    return pd.DataFrame(out)


def test_a_few_integers_column_keeps_its_thin_top_integer_by_its_margin(monkeypatch):
    """250 fives (2.7 σ of the profile's bucket noise, σ ≈ 93) beside the support [3, 5): the margin bucket [5, 7)
    alone keeps them at seed 0 (seeds 0-11: kept on 10, before 5); without the rule they are lost."""
    assert _discover(_fives(), seed=0).schema["columns"]["college"]["edges"][-1] == 5.5
    monkeypatch.setattr(values, "FEW_MARGIN_SD", math.inf)
    assert _discover(_fives(), seed=0).schema["columns"]["college"]["edges"][-1] == 4.5


@pytest.mark.parametrize("seed", [0, 2])
def test_the_few_integers_margins_read_noisy_counts_only(monkeypatch, seed):
    """Discovery on D (the fives above), then on D' (the fives moved to 4) with D's noisy outputs replayed: the same
    schema (bounds read off the true rows of the margin bucket would end at 4; at seed 2 the fives are kept by the
    profile's count and the fine cell of 5 averaged, which the cell's true rows, none in D', would drop)."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = _discover(_fives(), seed=seed)
    assert found.schema["columns"]["college"]["edges"][-1] == 5.5
    replay.mode = "replay"
    again = _discover(_fives(fives_at=4), seed=seed)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema


def test_a_support_widened_into_an_outer_bucket_stops_at_twice_its_inner_edge():
    """txhousing's ``volume`` (session 15): the profile's support ends in the outer bucket [1e9, 1e15); the fine
    support ended at 8e8 and the thin tail past it (a few rows to 2.6e9) passes CONFIRM, so the support widened
    to the cell of 1e15 and the top bin was decoded evenly up to it.  It now stops at the cell of 2e9
    (OUTER_REACH); a bucket of the public grid (at most 5/3 wide) is reached whole, as before."""
    grid = np.concatenate([np.geomspace(1e6, 1e15, 28)])  # (logarithmic fine cells, 3 per decade)
    noisy = np.zeros(grid.size - 1)
    noisy[:9] = 3000.0
    noisy[9:11] = 300.0  # (the tail: 1e9 … 1e10 in two cells)
    found = (0, 8)
    core = ((1e6, 1.5e6), (1e9, 1e15))
    _, b = widen(found, grid, core, noisy, _budget(50.0))
    assert grid[b + 1] >= 2e9 and grid[b] < 2e9
    grid2 = np.geomspace(1e6, 1e10, 13)
    _, b2 = widen((0, 8), grid2, ((1e6, 1.5e6), (7e8, 1e9)), np.r_[np.full(9, 3000.0), [300.0] * 3], _budget(50.0))
    assert grid2[b2 + 1] >= 1e9  # (the public bucket [7e8, 1e9): reached whole)
