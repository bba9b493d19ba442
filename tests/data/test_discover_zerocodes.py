"""Exact zeros beside small integers and fractional shares near 0 on a small table (issue 27, session 19;
:mod:`dpsynth.data.discover.coarse`): belgian_budgets' ``age`` (codes 0-4, 7.8% zeros) had its zeros clamped into
1 (the profile's support began at [1, 1.5), its margins at [0.5, 0.7), buckets holding no integer), and its
``stobacco`` (a budget share, 62% exact zeros, the rest spread thin over [0.0002, 0.19]) was read as integral
(its fractional cells each under the profile's cut) and released as {0, 1}.

Statistical tests: a zero-config-like discovery (half of the ρ of ε 1, δ 1e-6) of 9 columns on 2,724 rows, as
belgian_budgets': the profile's cells have σ ≈ 36 rows and a cut of ≈ 166.  The 212 zeros of ``codes`` and of
``visits`` (values 5-60) pass their own cell's cut from 1.3 σ of noise down (about 0.9 per seed; the sum of the
zero bucket's two cells, σ ≈ 51, against its cut of ≈ 220: about 0.45), and ``codes`` reaches 0 from [0.5, 0.7)
past ZERO_SD σ otherwise; the ~575 fractional rows of ``share`` in [0.01, 0.1) stand ≈ 6.5 σ of their decade's
sum of 6 noises (σ ≈ 89) against a cut of ≈ 4 of those σ, while each bucket's ~100 stay under a cell's cut.
Seeds 0-5 measured: all three kept on each (main before: ``codes`` on 3, ``share`` on 1, ``visits`` on 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.coarse import ZERO_SD, decades, fractional, reach_zero, with_zeros
from dpsynth.data.discover.noise import BUCKET_MISS, ColumnBudget, coarse_grid
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp
from tests.helpers import Replay

N = 2724


def _table(seed: int = 0) -> pd.DataFrame:
    """``codes`` (0-4: 212 zeros), ``share`` (62% zeros, the rest log-uniform in [0.003, 0.19]), ``visits`` (212
    zeros, the rest 5-60), ``grade`` (0-4: 110 zeros) and 5 flags (belgian_budgets' width)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat([0, 1, 2, 3, 4], [212, 664, 574, 637, 637])
    rng.shuffle(codes)
    share = np.where(rng.random(N) < 0.62, 0.0, np.round(10 ** rng.uniform(np.log10(3e-3), np.log10(0.19), N), 6))
    visits = rng.integers(5, 61, N)
    visits[rng.permutation(N)[:212]] = 0
    grade = np.repeat([0, 1, 2, 3, 4], [110, 700, 600, 657, 657])
    rng.shuffle(grade)
    out = {"codes": codes, "share": share, "visits": visits, "grade": grade}
    out.update({f"f{j}": (rng.random(N) < 0.3).astype(int) for j in range(5)})
    return pd.DataFrame(out)


def _zcdp(table: pd.DataFrame, *, seed: int, share: float = 0.5):
    spec = parse_discover({"epsilon": share, "delta": 5e-7})
    rho = share * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7)
    return discover_schema(table, spec, ledger=Ledger(1.0, 1e-6, ZCDPComposition()),
                           rng=np.random.default_rng(seed), rho=rho)


@pytest.mark.parametrize("seed", range(3))
def test_zeros_beside_small_integers_and_a_thin_share_are_kept(seed):
    cols = _zcdp(_table(seed), seed=seed).schema["columns"]
    assert cols["codes"]["edges"][0] == -0.5 and cols["codes"]["edges"][-1] == 4.5  # was [0.5, …): the 0s as 1s
    assert not cols["share"].get("integer") and cols["share"]["edges"][-1] >= 0.05  # was integral {0, 1}
    assert cols["visits"]["edges"][0] <= 0.0  # was from 3 or more: 270 zeros clamped up


def test_the_zeros_and_the_fractional_decades_are_read_off_noisy_counts_only(monkeypatch):
    """Discovery on D, then on D' (no zeros in ``codes``, ``visits`` nor ``grade``; ``share`` integral: its
    fractions moved to 1) with D's noisy outputs replayed: the same schema and notes (``grade``'s 110 zeros, 4%,
    reach its coarse range by ZERO_SD but not its cheap few-integers stage's bounds)."""
    d = _table(0)
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found = _zcdp(d, seed=0)
    assert found.schema["columns"]["codes"]["edges"][0] == -0.5 and not found.schema["columns"]["share"].get("integer")
    assert found.schema["columns"]["visits"]["edges"][0] <= 0.0
    assert "coarse range [0, 10) (noisy logarithmic buckets)" in found.columns["grade"]["learned"]
    replay.mode = "replay"
    other = d.assign(codes=d["codes"].clip(1, None), share=np.ceil(d["share"]), visits=d["visits"].clip(5, None),
                     grade=d["grade"].clip(1, None))
    again = _zcdp(other, seed=0)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema and again.columns == found.columns


def test_reach_zero_from_one_for_an_integral_range_whose_zeros_stand_out():
    """Post-processing: an integral range from [0.5, 0.7) or 1 reaches 0 when the noisy zeros stand ZERO_SD sds,
    from below as well; from 1.5 (another integer between), without the zeros, or for a real column, it does not;
    from anywhere when the zeros' cell passed its cut."""
    core = ((3.0, 5.0), (7.0, 10.0))  # (its support: far from 0 for the share rule)
    assert reach_zero(0.5, 10.0, core, 20, ZERO_SD) == (0.0, 10.0)
    assert reach_zero(1.0, 10.0, core, 20, ZERO_SD + 1) == (0.0, 10.0)
    assert reach_zero(-10.0, -0.7, ((-10.0, -7.0), (-5.0, -3.0)), 20, ZERO_SD) == (-10.0, 0.0)
    assert reach_zero(1.5, 10.0, core, 20, ZERO_SD) == (1.5, 10.0)
    assert reach_zero(0.5, 10.0, core, 20, ZERO_SD - 0.1) == (0.5, 10.0)
    assert reach_zero(0.5, 10.0, core, 0.0, ZERO_SD) == (0.5, 10.0)
    # zeros past their cell's cut: 0 reached from farther (visits' 5-60), but not for a real column
    far = ((20.0, 30.0), (50.0, 70.0))  # (too far from 0 for the share rule)
    assert reach_zero(15.0, 100.0, far, 20, 5.0, True) == (0.0, 100.0)
    assert reach_zero(-100.0, -15.0, ((-70.0, -50.0), (-30.0, -20.0)), 20, 5.0, True) == (-100.0, 0.0)
    assert reach_zero(15.0, 100.0, far, 20, 5.0, False) == (15.0, 100.0)
    assert reach_zero(15.0, 100.0, far, 0.0, 5.0, True) == (15.0, 100.0)


def test_the_support_is_joined_by_the_zeros_only_when_their_cell_passed_and_the_range_reaches_them():
    """Post-processing: kershaw's ``Outs`` (support from [1, 1.5), noisy zeros past their cut, range from 0) gets
    the zero bucket in its support; not without the cut, nor when the range does not reach 0."""
    core = ((1.0, 1.5), (3.0, 5.0))
    assert with_zeros(core, 0.0, 20.0, 1e-6, True) == ((0.0, 1e-6), (3.0, 5.0))
    assert with_zeros(((-5.0, -3.0), (-1.5, -1.0)), -20.0, 0.0, 1e-6, True) == ((-5.0, -3.0), (-1e-6, 0.0))
    assert with_zeros(core, 0.0, 20.0, 1e-6, False) == core
    assert with_zeros(core, 0.5, 20.0, 1e-6, True) == core
    assert with_zeros(None, 0.0, 20.0, 1e-6, True) is None


EXT = np.concatenate([[-1e15], coarse_grid(-1e9, 1e9), [1e15]])


def test_fractional_rows_spread_thin_pass_their_decades_cut_and_noise_alone_rarely():
    """661 fractional rows over the 6 buckets of [0.01, 0.1), each under a cell's cut (≈ 4.6 σ), pass their
    decade's; pure noise passes with probability at most BUCKET_MISS (2,000 draws: under 2%).  Fails with a
    decade's sum read without a cut."""
    budget = ColumnBudget.with_scale(36.0, ColumnBudget(1.0, True, 1.0, None, None, "x"))
    rng = np.random.default_rng(0)
    at = np.flatnonzero((EXT[:-1] >= 0.01) & (EXT[1:] <= 0.1))
    assert at.size == 6 and np.unique(np.searchsorted(decades(EXT), at, side="right")).size == 1
    noise = rng.normal(0.0, 36.0, (2000, EXT.size - 1))
    passed = np.array([fractional(np.zeros(0), row, EXT, budget) > 0 for row in noise])
    assert passed.mean() <= 2 * BUCKET_MISS
    rows = noise[:50].copy()
    rows[:, at] += 661 / 6
    assert (rows[:, at] < budget.block_cut(1, 371)).all(axis=1).mean() > 0.5  # (mostly no cell alone passes)
    assert all(fractional(np.zeros(0), row, EXT, budget) >= 0.5 * 661 for row in rows)
