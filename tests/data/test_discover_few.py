"""Columns of few integers on small wide tables (issue 27, held-out-13's big_five: 25 Likert items 1-6 on 2,800
rows x 28 columns): the stage sized to the noisy rows (allot.few_share), after the pool, and the rows of the
profile's last support bucket past the fine bounds (values.seen_integers).

The tables here mimic a zero-config discovery's per-column budget (half the ρ of ε 1, δ 1e-6, over 28 columns)
with fewer columns (a share of it)."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import allot, discover_schema, parse_discover, values
from dpsynth.data.discover.column import FEW_SHARE
from dpsynth.data.discover.values import LAST_SD, seen_integers
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp
from tests.helpers import Replay

LIKERT = {"c1": [73, 161, 275, 655, 1018, 597], "a2": [47, 126, 151, 553, 1023, 873],
          "n3": [499, 638, 365, 591, 439, 257], "e3": [149, 293, 412, 826, 743, 352]}
"""Four of big_five's items (rows per answer 1-6)."""


def _likert(sixes_at: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    out = {}
    for name, counts in LIKERT.items():
        answers = np.resize(np.repeat(np.arange(1, 7), counts), 2700)
        answers[answers == 6] = sixes_at
        rng.shuffle(answers)
        out[name] = answers
    return pd.DataFrame(out)


def _discover(table: pd.DataFrame, seed: int, columns: int = 28):
    share = 0.5 * table.shape[1] / columns
    spec = parse_discover({"epsilon": share, "delta": 5e-7})
    rho = share * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7)
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed), rho=rho), ledger, rho


def _outside(found, table: pd.DataFrame) -> float:
    """The share of the rows outside the discovered bounds, over the columns."""
    out = []
    for name, spec in found.schema["columns"].items():
        x = table[name].to_numpy()
        out.append(float(((x < spec["edges"][0]) | (x > spec["edges"][-1])).mean()))
    return float(np.mean(out))


def _col(core, buckets, cells=None, first=None):
    """A column of few integers as values.seen_integers reads it: the profile's support ``core``, its buckets
    (the margins and the support's end buckets), the latest fine cells ``cells`` (edges, noisy counts, sd) and
    the first fine histogram ``first`` (edges, noisy counts, sd)."""
    grid, counts, sd = cells if cells is not None else (None, None, 0.0)
    return SimpleNamespace(hint=SimpleNamespace(lower=None), reach=None, few=True, core=core, margins=tuple(buckets),
                           first_grid=None if first is None else first[0],
                           evidence=SimpleNamespace(cells=grid, cell_counts=counts, cell_sd=sd,
                                                    first=None if first is None else first[1:]))


def test_the_last_bucket_keeps_its_further_integers_when_its_rows_show_them():
    """big_five's C1 (6: 597 rows, 21%): the profile's support [3, 5) … [5, 7), the fine bounds (a zoom onto the
    cells of 4 and 5) end at 5, and the rule that ends a support at its last bucket's first integer (mplsstops'
    precincts 1-5 were given an empty 6 by [5, 7)) lost the 6s.  The bucket's 1,600 rows less the 5s' cell, and
    the first fine histogram's cell of 6: 600 rows at σ ≈ 100, 6 σ.  Precincts 1-5: both near 0."""
    core = ((3.0, 5.0), (5.0, 7.0))
    zoom = (np.array([3.5, 4.5, 5.5]), np.array([640.0, 1000.0]), 108.0)
    first = np.arange(0.5, 15.0, 1.0)  # unit cells of 1 … 14
    likert = np.array([90.0, 150.0, 250.0, 700.0, 1050.0, 560.0] + [0.0] * 8)
    buckets = [(3.0, 5.0, 930.0, 90.0), (5.0, 7.0, 1600.0, 90.0), (7.0, 10.0, 20.0, 90.0)]
    assert seen_integers(_col(core, buckets, zoom, (first, likert, 139.0)), 4.0, 5.0) == (3.0, 6.0)
    precincts = likert.copy()
    precincts[5] = 60.0
    buckets[1] = (5.0, 7.0, 1040.0, 90.0)  # the 5s alone: 40 rows beside the cell of 5, 60 in the cell of 6
    assert seen_integers(_col(core, buckets, zoom, (first, precincts, 139.0)), 4.0, 5.0) == (3.0, 5.0)
    assert LAST_SD == 2.5  # (100 rows at σ ≈ 100: 1 σ; an empty 6 passes with probability 0.006)
    buckets[1] = (5.0, 7.0, 1300.0, 90.0)  # the profile alone (no first histogram): 300 rows at σ 140, 2.1 σ
    assert seen_integers(_col(core, buckets, zoom), 4.0, 5.0) == (3.0, 5.0)
    buckets[1] = (5.0, 7.0, 1400.0, 90.0)  # 400 rows, 2.9 σ: the 6s
    assert seen_integers(_col(core, buckets, zoom), 4.0, 5.0) == (3.0, 6.0)
    assert seen_integers(_col(core, buckets[::2], zoom), 4.0, 5.0) == (3.0, 5.0)  # no count of the bucket: as before


def test_a_small_wide_tables_likert_items_keep_their_ends(monkeypatch):
    """Four of big_five's items at its per-column budget: rows outside the bounds 1.3% on average on seeds 0-3
    and 0-11 (main before, the stage at FEW_SHARE of the rest and no rows read past the fine bounds in the last
    bucket: 7.0% and 7.9%; with the rows of the last bucket alone 4.8% on seeds 0-11, with the stage sized alone
    1.7%).  The stage spends most of the rest of the column's allotment (no second selection waits)."""
    table = _likert()
    found = [_discover(table, seed) for seed in range(4)]
    assert np.mean([_outside(f, table) for f, _, _ in found]) < 0.02
    assert all(f.columns[n]["rho_spent"] > 0.8 * f.columns[n]["rho"] for f, _, _ in found for n in LIKERT)
    monkeypatch.setattr(allot, "FEW_TARGET", 0.0)
    monkeypatch.setattr(values, "LAST_SD", math.inf)
    before = [_discover(table, seed)[0] for seed in range(4)]
    assert np.mean([_outside(f, table) for f in before]) > 0.06
    assert all(f.columns[n]["rho_spent"] < 0.5 * f.columns[n]["rho"] for f in before for n in LIKERT)


def _with_labels(seed: int, n: int = 3000) -> pd.DataFrame:
    """A flag and a count beside ``country`` (30 labels, 15 of 2%): its probe leaves rows out and its second
    selection draws on the pool."""
    rng = np.random.default_rng(seed)
    shares = np.array([0.25, 0.15, 0.1] + [0.02] * 15 + [0.005] * 12)
    return pd.DataFrame({"flag": (rng.random(n) < 0.2).astype(int),
                         "kids": rng.choice([0, 1, 2, 3], size=n, p=[0.9, 0.05, 0.04, 0.01]),
                         "country": rng.choice([f"c{i:02d}" for i in range(30)], size=n, p=shares / shares.sum())})


@pytest.mark.parametrize("seed", range(2))
def test_the_few_integers_stages_take_only_what_the_pool_left(seed):
    """The stages of few integers run after the pool (phase 4): ``country``'s second selection gets what it got
    with the cheap stages (they reserve FEW_SHARE of their rest), and they share what it left (``kids`` 76% of
    its allotment, ``flag`` its floor: its profile shows its rows); the charges use the whole total and stay
    within it.  Alone on a thinner budget, the same columns spend more than their floor (40.5%)."""
    table = _with_labels(seed)
    found, ledger, rho = _discover(table, seed, columns=6)
    spent = sum((Fraction(c.rho) for c in ledger.charges), Fraction(0))
    assert 0.999 * rho < spent <= Fraction(rho)
    pooled = found.columns["country"]["rho_pooled"]
    assert pooled > found.columns["country"]["rho"]  # (it needs the pool)
    kids = found.columns["kids"]
    assert (0.3 + 0.7 * FEW_SHARE) * 1.5 * kids["rho"] < kids["rho_spent"] < 0.9 * kids["rho"]  # (the pool's rest)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(allot, "FEW_TARGET", 0.0)
        cheap, _, _ = _discover(table, seed, columns=6)
    assert cheap.columns["country"]["rho_pooled"] == pooled
    alone, _, _ = _discover(table[["flag", "kids"]], seed, columns=12)
    for name in ("flag", "kids"):
        used, nominal = alone.columns[name]["rho_spent"], alone.columns[name]["rho"]
        assert (0.3 + 0.7 * FEW_SHARE) * 1.1 * nominal < used <= nominal * (1 + 1e-9)


def test_the_last_buckets_rows_are_read_off_noisy_counts_only(monkeypatch):
    """The Likert items at the cheap stage (FEW_SHARE of the rest), seed 0: the 6s of ``c1`` kept by the last
    bucket's rows past the fine bounds (seeds 0-11: kept on 12, 8 without the rule; ``e3``'s on 7, none without).
    Then the 6s moved to 5 with the outputs replayed: the same schema (a rule on the true rows of 6 would drop
    them) and the same ledger."""
    monkeypatch.setattr(allot, "FEW_TARGET", 0.0)
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found, ledger, _ = _discover(_likert(), 0)
    assert found.schema["columns"]["c1"]["edges"][-1] == 6.5
    replay.mode = "replay"
    again, ledger2, _ = _discover(_likert(sixes_at=5), 0)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


def test_the_stages_share_is_read_off_the_noisy_rows_only(monkeypatch):
    """``flag`` and ``kids`` alone on a thin budget (their stages sized between the floor and the whole rest),
    then the flag two-thirds null with the outputs replayed: the same schema and ledger (a share sized to the true
    non-null rows would charge another amount)."""
    replay = Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    table = _with_labels(0)[["flag", "kids"]]
    found, ledger, _ = _discover(table, 0, columns=12)
    assert 0.45 < found.columns["flag"]["rho_spent"] / found.columns["flag"]["rho"] < 0.9
    replay.mode = "replay"
    nulls = table.astype({"flag": "float"})
    nulls.loc[: 1999, "flag"] = np.nan
    again, ledger2, _ = _discover(nulls, 0, columns=12)
    assert replay.i == len(replay.calls)
    assert again.schema == found.schema
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
