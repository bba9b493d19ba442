"""Point masses (issue 27): a value holding a sizeable share of a numeric column's rows exactly gets a bin of its
own, found by a noisy histogram of rows equal to public round values (dpsynth/data/discover/points.py), or with a
δ by partition selection over the observed numbers (dpsynth/data/discover/heaps.py, tests/data/test_discover_heaps.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.config import parse_config, zero_config
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.evidence import Evidence, one_way_queries
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.discover.points import PointMasses, candidates, measure, with_points
from dpsynth.data.discretize import decode, encode
from dpsynth.data.fine import FineColumn, FineView, fine_counts
from dpsynth.data.schema import Domain, NumericColumn
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import Ledger, ZCDPComposition

SPIKE = "rows equal to each of"  # the public round values' histogram (no δ)
ASKS = (SPIKE, "(heaped values)")  # either point-mass measurement (with δ: partition selection, heaps.py)
NO_DELTA = {"epsilon": 1.0, "delta": 0.0, "columns": {"pct": {"type": "numeric"},
                                                       "k": {"type": "integer", "lower": 0, "upper": 3}}}


def _asks(measured: str) -> bool:
    return any(a in measured for a in ASKS)


def _spiky(n: int = 5000, share: float = 0.6, seed: int = 0) -> pd.DataFrame:
    """A percentage with ``share`` of its rows at exactly 100, the rest spread over [10, 100) in tenths."""
    rng = np.random.default_rng(seed)
    pct = np.where(rng.random(n) < share, 100.0, np.round(rng.uniform(10.0, 99.9, size=n), 1))
    return pd.DataFrame({"pct": pct, "k": rng.integers(0, 4, size=n)})


def _discover(table, raw=None, seed=0):
    spec = parse_discover(raw or {"epsilon": 1.0, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


# ------------------------------------------------------------------ the schema: an edge written twice
def test_a_point_bin_encodes_exactly_its_value_and_decodes_to_it():
    """Edges [0, 50, 100, 100, 150]: bins [0, 50), [50, 100), {100}, (100, 150]."""
    spec = NumericColumn("x", (0.0, 50.0, 100.0, 100.0, 150.0))
    dom = Domain((spec,))
    table = pd.DataFrame({"x": [0.0, 99.999, 100.0, 100.001, 150.0, 49.0]})
    assert encode(table, dom)[:, 0].tolist() == [0, 1, 2, 3, 3, 0]
    assert spec.points == (100.0,)
    assert spec.labels() == ["[0, 50)", "[50, 100)", "[100, 100]", "(100, 150]"]
    codes = np.full((200, 1), 2)
    for numeric in ("uniform", "midpoint"):
        assert (decode(codes, dom, numeric=numeric, rng=np.random.default_rng(0))["x"] == 100.0).all()
    fine = FineView({"x": FineColumn(np.array([0.0, 50.0, 100.0, 125.0, 150.0]), np.array([1.0, 1.0, 5.0, 1.0]))})
    got = decode(np.array([[2]] * 50 + [[3]] * 50), dom, rng=np.random.default_rng(1), fine=fine)["x"].to_numpy()
    assert (got[:50] == 100.0).all() and ((got[50:] >= 100.0) & (got[50:] < 150.0)).all()
    # the point's rows are no part of any bin's within-bin distribution
    assert fine_counts(np.array([100.0, 100.0, 120.0]), np.zeros(3, bool), spec,
                       np.array([100.0, 125.0, 150.0])).tolist() == [1, 0]


def test_a_point_bin_at_an_end_is_closed_there():
    top, bottom = NumericColumn("x", (0.0, 50.0, 100.0, 100.0)), NumericColumn("x", (0.0, 0.0, 50.0))
    assert encode(pd.DataFrame({"x": [100.0, 99.0, 0.0]}), Domain((top,)))[:, 0].tolist() == [2, 1, 0]
    assert encode(pd.DataFrame({"x": [0.0, 0.5, 50.0]}), Domain((bottom,)))[:, 0].tolist() == [0, 1, 1]


def test_an_integral_column_skips_the_point_after_a_point_bin():
    spec = NumericColumn("x", (0.0, 5.0, 5.0, 9.0), integral=True)
    vals = decode(np.full((300, 1), 2), Domain((spec,)), rng=np.random.default_rng(0))["x"]
    assert vals.min() == 6 and vals.max() == 9


def test_config_reads_an_edge_written_twice_as_a_point_bin():
    raw = {"schema": {"columns": {"x": {"type": "numeric", "edges": [0, 100, 100]}}}, "privacy": {"epsilon": 1.0},
           "workload": {"marginals": {"k": 1}}}
    assert parse_config(raw).domain.columns[0].points == (100.0,)
    raw["schema"]["columns"]["x"]["edges"] = [0, 100, 100, 100]
    with pytest.raises(ConfigError, match="at most twice"):
        parse_config(raw)


# ------------------------------------------------------------------ discovery
def test_a_60_percent_spike_at_100_gets_a_closed_point_bin_and_is_charged():
    found, ledger = _discover(_spiky())
    edges = found.schema["columns"]["pct"]["edges"]
    assert edges[-2:] == [100, 100] and edges.count(100) == 2  # the point bin closes the range: nothing above 100
    assert 8 <= len(edges) - 1 <= 11  # the other bins are quantiles of the rest
    charges = [c for c in ledger.charges if _asks(c.measured)]
    assert [c.measured.split(":")[0] for c in charges] == ["pct"]  # numeric columns only; k is a few integers
    ev = found.evidence["pct"]
    assert ev.points.values.tolist() == [100.0]
    assert ev.points.counts[0] == pytest.approx(3000, abs=6 * ev.points.sds[0])  # 60% of 5000, noisy
    assert any("point masses" in x for x in found.columns["pct"]["learned"])
    config = parse_config({"schema": found.schema, "privacy": {"epsilon": 1.0}, "workload": {"marginals": {"k": 1}}})
    spec = config.domain.columns[config.domain.index("pct")]
    queries = one_way_queries(ev, spec)
    point_bin = spec.n_bins - 1
    rows = [q for q, _, sd in queries if q[:, point_bin].any()]
    assert len(rows) == 1 and rows[0].shape[0] == 1  # the spike count measures the point bin, and only it


def test_no_spike_gives_no_point_bin():
    rng = np.random.default_rng(3)
    found, ledger = _discover(pd.DataFrame({"score": np.round(rng.normal(50.0, 10.0, size=5000), 2)}))
    edges = found.schema["columns"]["score"]["edges"]
    assert len(set(edges)) == len(edges) and len(edges) == 11
    assert found.evidence["score"].points is None
    assert not any(_asks(c.measured) for c in ledger.charges)  # no fine cell heavy enough: nothing is spent


def test_a_spike_under_a_bin_share_is_not_a_point():
    """5% of the rows at 100 pass the cut easily but hold less than 1/bins of them: no bin of their own."""
    found, _ = _discover(_spiky(share=0.05))
    edges = found.schema["columns"]["pct"]["edges"]
    assert len(set(edges)) == len(edges)


def test_a_count_under_the_cut_is_not_kept():
    """A candidate holding a quarter of the rows but fewer than the noise's cut is dropped (measure())."""

    class Column:
        def point_counts(self, values):
            return np.where(values == 100.0, 25, 0)

    budget = ColumnBudget(0.001, True, 1.0, Ledger(1.0, 1e-6, ZCDPComposition()), np.random.default_rng(0), "x")
    values = np.array([10.0, 50.0, 100.0])
    assert budget.block_cut(1, 3) > 3 * 25  # σ ≈ 22: a count of 25 is well under the cut
    got = measure(budget, Column(), values, non_null=100.0, bins=10)
    assert got.values.size == 0


def test_candidates_are_public_round_values_within_the_bounds():
    c = candidates(-5.0, 1_000_000.0, np.array([0.0, 250.0, 500.0]), integral=True)
    assert {1.0, 100.0, 250.0, 999.0, 999_999.0, 1_000_000.0, -1.0, -3.0} <= set(c.tolist())
    assert 0.0 not in c and c.min() >= -5 and c.max() <= 1_000_000  # 0: the profile's exact-zero cell serves
    assert 1.5 not in candidates(0.0, 10.0, None, integral=True) and 1.5 in candidates(0.0, 10.0, None, integral=False)


def test_with_points_real_and_integral():
    e = np.array([0.0, 40.0, 80.0, 120.0])
    assert with_points(e, np.array([40.0, 120.0]), integral=False, lo=0.0, hi=120.0).tolist() == \
        [0, 40, 40, 80, 120, 120]
    assert with_points(e, np.array([40.0, 120.0]), integral=True, lo=0.0, hi=120.0).tolist() == \
        [0, 39.5, 40.5, 80, 119.5, 120]
    # no bin beside a point is left without an integer ([5.5, 6) would hold none)
    assert with_points(np.array([2.0, 4.0, 6.0, 8.0]), np.array([5.0]), integral=True, lo=2.0, hi=8.0).tolist() == \
        [2, 4, 4.5, 5.5, 8]


def test_real_exact_zeros_come_from_the_profile_at_no_extra_cost():
    """A real column 70% exactly 0 (late fees): 0 is a point from the profile's exact-zero cell, not a candidate
    of the point histogram, so its rows are not paid for twice."""
    rng = np.random.default_rng(5)
    fees = np.where(rng.random(6000) < 0.7, 0.0, np.round(rng.uniform(5.0, 60.0, size=6000), 2))
    table = pd.DataFrame({"fees": fees, "k": rng.integers(0, 3, size=6000)})
    found, _ = _discover(table)
    edges = found.schema["columns"]["fees"]["edges"]
    assert edges[:2] == [0, 0]
    assert 0.0 in found.evidence["fees"].points.values.tolist()
    synth = dpsynth.release(table, zero_config(1.0, 1e-6), rng=2).synthetic
    assert (synth["fees"] == 0.0).mean() == pytest.approx(0.7, abs=0.03)


def test_real_exact_zeros_of_half_a_bin_share_get_a_point_bin():
    """A real column 8% exactly 0 (taxi_trips' ``distance``: 8.2% recorded as 0 beside short city trips): under
    1/bins but over HEAP_SHARE/bins, the share any heaped value needs, so 0 is a point bin (its rows spread over
    [0, 0.5) before, half of them past the real 0.27 decile)."""
    rng = np.random.default_rng(7)
    miles = np.where(rng.random(8000) < 0.08, 0.0, np.round(rng.gamma(2.0, 1.0, size=8000) + 0.05, 2))
    found, _ = _discover(pd.DataFrame({"miles": miles, "k": rng.integers(0, 3, size=8000)}))
    assert found.schema["columns"]["miles"]["edges"][:2] == [0, 0]
    assert 0.0 in found.evidence["miles"].points.values.tolist()


def test_a_zero_config_release_keeps_the_spike_exact():
    """End to end: the released rows hold about 60% exactly 100 and none above it (before: decoded over
    [100, 100.5), above the real maximum)."""
    table = _spiky(seed=1)
    result = dpsynth.release(table, zero_config(1.0, 1e-6), rng=4)
    pct = result.synthetic["pct"].astype(float)
    assert (pct == 100.0).mean() == pytest.approx(0.6, abs=0.03)
    assert pct.max() <= 100.0
    assert any(_asks(c["measured"]) for c in result.report["ledger"])


def test_point_evidence_is_consistent_with_the_bin_after_it():
    """The cells from 100 on also hold the spike's rows: the bin after the point bin is not measured by them."""
    spec = NumericColumn("x", (0.0, 50.0, 100.0, 100.0, 150.0, 200.0))
    ev = Evidence(cells=np.arange(0.0, 201.0, 50.0), cell_counts=np.array([5.0, 5.0, 90.0, 5.0]), cell_sd=1.0,
                  points=PointMasses(np.array([100.0]), np.array([80.0]), np.array([2.0])))
    queries = one_way_queries(ev, spec)
    measured = np.concatenate([np.flatnonzero(q.sum(axis=0)) for q, _, _ in queries]).tolist()
    assert 3 not in measured and 2 in measured  # (100, 150) left out; {100} from the spike count


def test_point_masses_identical_numpy_vs_stream(tmp_path, monkeypatch):
    """The point-mass question is a sum over rows: batch by batch (stream engine) it gives the same noisy counts,
    schema and ledger as in memory."""
    import dpsynth.data.engines.stream as stream_mod
    from dpsynth.data.engines import discovery_table

    monkeypatch.setattr(stream_mod, "CSV_BLOCK", 1 << 11)
    path = tmp_path / "spiky.csv"
    _spiky(3000).to_csv(path, index=False)
    runs = []
    for engine in ("numpy", "stream"):
        spec = parse_discover({"epsilon": 4.0, "delta": 1e-6})
        ledger = Ledger(4.0, 1e-6)
        found = discover_schema(discovery_table(str(path), engine=engine), spec, ledger=ledger,
                                rng=np.random.default_rng(2))
        runs.append((found.schema, [(c.measured, c.epsilon) for c in ledger.charges],
                     found.evidence["pct"].points.counts.tolist()))
    assert runs[0] == runs[1]
    assert runs[0][0]["columns"]["pct"]["edges"][-2:] == [100, 100]
    assert any(_asks(m) for m, _ in runs[0][1])


def test_point_masses_depend_on_the_data_only_through_the_mechanism(monkeypatch):
    """Discovery on D records every mechanism output; replayed on D′ (other spike counts, same candidates) it gives
    the same schema, ledger and released point counts, so nothing else reads the data.  On the neighbour that
    moves one row off the spike, the point histogram's true counts differ by at most its sensitivity."""
    from dpsynth.privacy import mechanisms
    from tests.data.test_discover import _Coupling

    d = _spiky(4000, share=0.6, seed=7)
    d2 = _spiky(4000, share=0.3, seed=8)
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {**NO_DELTA, "epsilon": 2.0}  # the public candidates (with δ: test_discover_heaps' replay)
    found, ledger = _discover(d, raw, seed=3)
    assert found.evidence["pct"].points is not None
    assert sum(c.epsilon for c in ledger.charges) <= 2.0  # the point histogram within the column's ε
    assert found.columns["pct"]["epsilon_spent"] == pytest.approx(found.columns["pct"]["epsilon"])  # all of it
    coupling.mode = "replay"
    found2, ledger2 = _discover(d2, raw, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
    assert found2.evidence["pct"].points.counts.tolist() == found.evidence["pct"].points.counts.tolist()
    # neighbours: one row moved off the spike changes the true point counts by at most 1 (a histogram)
    d3 = d.copy()
    d3.loc[int(np.flatnonzero(d["pct"] == 100.0)[0]), "pct"] = 37.3
    coupling.mode, coupling.i, coupling.distances = "replay", 0, []
    _discover(d3, raw, seed=3)
    spike = [dist for (mech, dist, _), (key, _, _) in zip(coupling.distances, coupling.calls)
             if any(SPIKE in str(v) for v in dict(key[1]).values())]
    assert spike and max(spike) <= 1


def test_a_spike_at_a_value_no_public_grid_holds_is_not_published_without_delta():
    """60% of the rows at 37.3 (not a round value, not a fine cell edge), no δ: no point bin at 37.3 (a candidate
    set read off the data would publish it; with a δ partition selection may: test_discover_heaps)."""
    rng = np.random.default_rng(4)
    x = np.where(rng.random(5000) < 0.6, 37.3, np.round(rng.uniform(10.0, 99.9, size=5000), 1))
    found, ledger = _discover(pd.DataFrame({"pct": x, "k": rng.integers(0, 4, size=5000)}), NO_DELTA)
    assert any(SPIKE in c.measured for c in ledger.charges)
    assert 37.3 not in found.schema["columns"]["pct"]["edges"]


def test_spark_encodes_point_bins_as_numpy(spark, tmp_path):
    """The Spark engine's column expression puts a value equal to a point in its point bin, as bin_index does."""
    from dpsynth.data.engines.spark import SparkCounts

    cfg = parse_config({"schema": {"columns": {"x": {"type": "numeric", "edges": [0, 50, 100, 100, 150, 150],
                                                     "missing": "category"}}, "unknown": "other"},
                        "privacy": {"epsilon": 1.0}, "workload": {"marginals": {"k": 1}}})
    x = pd.Series([0.0, 49.9, 50.0, 100.0, 100.0, 100.5, 150.0, 151.0, -3.0, None, 100.0])
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": x}).to_csv(path, index=False)
    want = np.bincount(encode(pd.DataFrame({"x": x}), cfg.domain, unknown="other")[:, 0], minlength=6)
    assert want.tolist() == [3, 1, 3, 1, 2, 1]  # [0, 50), [50, 100), {100}, (100, 150), {150}, null (clamped)
    with SparkCounts(str(path), cfg.domain, unknown="other", spark=spark) as counts:
        np.testing.assert_array_equal(counts.marginal((0,)), want)
