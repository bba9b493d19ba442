"""The budget split of a discovery over its columns (dpsynth/data/discover/allot.py, issue 27: wide tables).

Cheap stages (a column of few integers, a categorical column whose probe suffices) leave budget that the second
partition selections of the columns that need it share; the charges never pass the discovery's total, and every
share is read off mechanism outputs only."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger, ZCDPComposition, approx_dp_to_zcdp

LABELS = [f"c{i:02d}" for i in range(30)]
SHARES = np.array([0.25, 0.15, 0.1] + [0.02] * 15 + [0.005] * 12)  # 15 labels of 2%, 12 rare ones


def _wide(seed: int, n: int = 8000, flags: int = 6, cats: int = 8) -> pd.DataFrame:
    """One categorical column of many labels beside cheap columns: 0/1 flags (few integers) and categorical
    columns of three labels (their probes suffice), and a few-integers column with a value of 4%."""
    rng = np.random.default_rng(seed)
    out = {f"f{j}": (rng.random(n) < 0.2).astype(int) for j in range(flags)}
    for j in range(cats):
        out[f"g{j}"] = rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])
    out["kids"] = rng.choice([0, 1, 2, 3], size=n, p=[0.905, 0.05, 0.04, 0.005])
    out["country"] = rng.choice(LABELS, size=n, p=SHARES / SHARES.sum())
    return pd.DataFrame(out)


def _zcdp(table: pd.DataFrame, *, seed: int, share: float = 0.5):
    """A zero-config discovery: ``share`` of the ρ of (ε 1, δ 1e-6) on a zCDP ledger, δ 5e-7 for selection."""
    spec = parse_discover({"epsilon": share, "delta": 5e-7})
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    rho = share * approx_dp_to_zcdp(1.0, 1e-6 - 5e-7)
    found = discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed), rho=rho)
    return found, ledger, rho


def _rho(ledger: Ledger) -> Fraction:
    return sum((Fraction(c.rho) for c in ledger.charges), Fraction(0))


@pytest.mark.parametrize("seed", range(4))
def test_a_wide_table_keeps_the_categories_of_two_percent(seed):
    """16 columns on 8,000 rows (half of ρ of ε 1): the second selection of ``country`` draws on what the cheap
    columns left (about 4.7x its own rest) and keeps every label of 2% (160 rows); with its own rest alone (main
    before the pool) it lost some on each of seeds 0-19.  ``kids`` keeps its value 2 (4%, 320 rows) shown by its
    profile (values.seen_integers), which the cheap fine histogram alone lost on 12 of seeds 0-19.  Of seeds 0-19,
    ``country`` failed on none, ``kids`` on 2 (seeds 5 and 7)."""
    found, ledger, rho = _zcdp(_wide(seed), seed=seed)
    kept = set(found.schema["columns"]["country"]["categories"])
    assert set(LABELS[:18]) <= kept
    assert found.columns["country"]["rho_pooled"] > 0.7 * found.columns["country"]["rho"]  # more than its own rest
    assert found.schema["columns"]["kids"]["edges"][:4] == [-0.5, 0.5, 1.5, 2.5]
    assert _rho(ledger) <= Fraction(rho)


@pytest.mark.parametrize("seed", range(3))
def test_the_pool_never_charges_past_the_discovery_total(seed):
    """Whatever the columns need (second selections, a heaps selection: heaps.waits), the exact sum of the
    charges stays within ρ (zCDP) and within ε (basic), and a column's spend is its profile, its stage and its
    share of the pool."""
    table = _wide(seed, n=3000)
    table["city"] = np.random.default_rng(seed).choice([f"t{i}" for i in range(80)], size=3000)
    table["weight"] = _weights(seed, n=3000, cats=0)["weight"]  # (a heaps selection shares the pool too)
    found, ledger, rho = _zcdp(table, seed=seed, share=0.3)
    assert _rho(ledger) <= Fraction(rho)
    assert seed or "rho_pooled" in found.columns["weight"]  # (seeds 1, 2: no heavy last cell, no selection)
    pooled = [n for n, c in found.columns.items() if "rho_pooled" in c]
    assert pooled and all(found.columns[n]["rho_spent"] > found.columns[n]["rho_pooled"] for n in pooled)
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    basic = Ledger(1.0, 1e-6)
    found = discover_schema(table, spec, ledger=basic, rng=np.random.default_rng(seed))
    assert sum((Fraction(c.epsilon) for c in basic.charges), Fraction(0)) <= Fraction(1.0)
    assert sum((Fraction(c.delta) for c in basic.charges), Fraction(0)) <= Fraction(1e-6)


def test_the_split_reads_only_noisy_counts(monkeypatch):
    """Table a's mechanism outputs replayed on table b (the flag mostly null, the labels' true counts changed, a
    row of ``kids`` past its other values):
    b gets a's schema and exactly a's ledger, so what each stage and the pool get depends on noisy counts only
    (a split on b's true counts would charge other amounts)."""
    from tests.data.test_discover import _Coupling

    a = _wide(1, n=20_000, flags=2, cats=2)
    b = a.copy()
    b.loc[: 14_999, "f0"] = None
    b["country"] = "c00"  # nearly every row in one label the probe released: nothing left out, truly
    b.loc[: len(LABELS) - 1, "country"] = LABELS  # (every label still observed)
    b.loc[5, "kids"] = 9  # one row past the integers the profile showed
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, ledger, _ = _zcdp(a, seed=3)
    assert any("rho_pooled" in c for c in found.columns.values())
    assert found.columns["f0"]["rho_spent"] < 0.6 * found.columns["f0"]["rho"]  # a cheap few-integers stage
    coupling.mode = "replay"
    found2, ledger2, _ = _zcdp(b, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


def test_the_pool_decision_reads_only_noisy_counts(monkeypatch):
    """Whether a pending column shares the pool (its probe's residual POOL_SD sds above 1% of its rows) is read
    off the probe's and the profile's noisy counts.  Table a (16 columns, 8,000 rows): ``country``'s probe leaves
    its labels of 2% out and its second selection draws on the pool.  Table b: the same labels observed, nearly
    every row in ``c00``, which the probe released, so truly nothing is left out.  With a's mechanism outputs
    replayed, b gets a's schema, report and ledger; the rule on b's true counts would give ``country`` only the
    rest of its own budget (a smaller second selection, another ledger)."""
    from tests.data.test_discover import _Coupling

    a = _wide(0)
    b = a.copy()
    b["country"] = "c00"
    b.loc[: len(LABELS) - 1, "country"] = LABELS  # every label still observed (the same candidates)
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, ledger, _ = _zcdp(a, seed=0)
    country = found.columns["country"]
    assert country["rho_pooled"] > 0.7 * country["rho"]  # more than the rest of its own budget: the pool's share
    assert any("the pool the cheaper stages left" in s for s in country["learned"])
    coupling.mode = "replay"
    found2, ledger2, _ = _zcdp(b, seed=0)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


# a survey weight in shape (held-out-18's ces_abortion, ``weight``: 2,231 rows, 45 values with two decimals): six
# heaps of 6-17% of the rows, then 39 values of 1.2% or less
_HEAPS = {8977.61: 0.17, 6153.85: 0.16, 4488.81: 0.09, 3076.93: 0.085, 8575.71: 0.06, 9230.78: 0.06}


def _weights(seed: int, n: int = 2200, cats: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rare = np.round(rng.uniform(400.0, 40_000.0, size=39), 2)
    values = np.concatenate([list(_HEAPS), rare])
    p = np.concatenate([list(_HEAPS.values()), np.full(39, (1.0 - sum(_HEAPS.values())) / 39)])
    out = {"weight": rng.choice(values, size=n, p=p)}
    for j in range(cats):  # (their probes suffice: what they leave is the pool)
        out[f"g{j}"] = rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])
    return pd.DataFrame(out)


def _points(found, name: str) -> list[float]:
    edges = found.schema["columns"][name]["edges"]
    return sorted({e for e in edges if edges.count(e) == 2})



@pytest.mark.parametrize("seed", range(1, 5))
def test_a_heaped_real_column_draws_on_the_pool(seed):
    """A small table's survey weight (2,200 rows, 7 columns, half of ρ of ε 1): its last fine cells show heavy
    ones, so its reserve runs the heaps selection (heaps.settle) with half its δ; it releases a heap, so a second
    one (the other half of the δ) waits for the pool the categorical columns' probes left and draws up to what
    keeps a heap of 5% one sd above its threshold (heaps.need): the four heaps of 8.5% or more get a point bin
    each.  With the reserve alone (HEAP_Z 0) they all did on 1 of seeds 0-29; with the pool on 28 (seed 0: no
    heavy last cell, the reserve measured the cells again).  The column's selections spend its δ, no more."""
    found, ledger, rho = _zcdp(_weights(seed), seed=seed)
    assert set(list(_HEAPS)[:4]) <= set(_points(found, "weight"))
    weight = found.columns["weight"]
    assert weight["rho_pooled"] > 0 and any("heaps selection again" in s for s in weight["learned"])
    assert weight["rho_spent"] <= weight["rho"] + weight["rho_pooled"]
    assert _rho(ledger) <= Fraction(rho)
    deltas = [c.approx_delta for c in ledger.charges if c.measured.startswith("weight:")]
    assert len([d for d in deltas if d > 0]) == 2 and sum(deltas) <= weight["delta"] * (1 + 1e-12)


def test_the_heaps_pool_reads_only_noisy_counts(monkeypatch):
    """What a waiting heaps selection draws from the pool is read off the profile's noisy non-null count: table
    b is table a with 300 of the top heap's rows null (the same observed values); with a's mechanism outputs
    replayed, b gets a's schema, report and ledger (sized on b's true count, the selection would be charged
    another amount)."""
    from tests.data.test_discover import _Coupling

    a = _weights(1)
    b = a.copy()
    top = np.flatnonzero(b["weight"].to_numpy() == 8977.61)
    b.loc[top[:300], "weight"] = np.nan
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, ledger, _ = _zcdp(a, seed=1)
    assert found.columns["weight"]["rho_pooled"] > 0
    coupling.mode = "replay"
    found2, ledger2, _ = _zcdp(b, seed=1)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
