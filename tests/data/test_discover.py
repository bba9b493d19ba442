"""Private schema discovery (dpsynth/data/discover.py): hints, budget, output schema, replay."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import yaml

from dpsynth.config import parse_config
from dpsynth.data.discover import (
    coarse_grid,
    discover_schema,
    fine_cells,
    parse_discover,
    schema_yaml,
)
from dpsynth.data.discretize import encode
from dpsynth.data.profile import ColumnProfile
from dpsynth.errors import ConfigError, DataError
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger
from dpsynth.privacy.neighbouring import Neighbouring


def _table(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2]),
        "age": rng.integers(18, 90, size=n),
        "score": rng.normal(50.0, 10.0, size=n),
        "flag": rng.integers(0, 2, size=n),
    })


def _discover(table, raw, seed=0, neighbouring=Neighbouring.ADD_REMOVE):
    spec = parse_discover(raw)
    ledger = Ledger(spec.epsilon, spec.delta)
    found = discover_schema(table, spec, ledger=ledger, neighbouring=neighbouring, rng=np.random.default_rng(seed))
    return found, ledger


def _as_config(schema: dict) -> dict:
    return {"schema": schema, "privacy": {"epsilon": 1.0}, "workload": {"marginals": {"k": 1}}}


def test_discovered_schema_is_a_valid_config_section_that_encodes_the_table():
    table = _table()
    found, ledger = _discover(table, {"epsilon": 5.0, "delta": 1e-6})
    cols = found.schema["columns"]
    assert cols["colour"]["type"] == "categorical" and sorted(cols["colour"]["categories"]) == ["blue", "green", "red"]
    # missing: a noisy decision (discover/nulls.py); with no nulls and ε 5 the null cell stays under the cut
    assert {k: v for k, v in cols["flag"].items() if k not in ("missing", "fill")} == {
        "type": "numeric", "edges": [-0.5, 0.5, 1.5], "integer": True}
    assert cols["flag"]["missing"] == "fill" and cols["flag"]["fill"] in (0, 1)
    assert cols["colour"]["missing"] == "fill" and cols["colour"]["fill"] == "red"  # the largest noisy count
    assert cols["age"]["type"] == "numeric" and cols["age"]["integer"] is True
    assert cols["score"]["type"] == "numeric" and "integer" not in cols["score"]
    assert found.schema["unknown"] == "other"
    text = schema_yaml(found, "# header\n")
    assert text.startswith("# header\nschema:\n")
    cfg = parse_config(_as_config(yaml.safe_load(text)["schema"]))
    codes = encode(table, cfg.domain, unknown=cfg.unknown)
    assert codes.shape == (len(table), 4)
    # exact budget: never above (ε, δ); every charge is a discovery charge
    assert sum((Fraction(c.epsilon) for c in ledger.charges), Fraction(0)) <= Fraction(5.0)
    assert sum((Fraction(c.delta) for c in ledger.charges), Fraction(0)) <= Fraction(1e-6)
    assert {c.stage for c in ledger.charges} == {"discover"}


def test_complete_hints_cost_nothing_and_are_copied():
    table = _table()
    hints = {
        "colour": {"type": "categorical", "categories": ["red", "green", "blue"], "missing": "error"},
        "age": {"type": "numeric", "lower": 0, "upper": 100, "bins": 5, "integer": True, "missing": "error"},
        "flag": {"type": "integer", "lower": 0, "upper": 1, "missing": "error"},
    }
    found, ledger = _discover(table[list(hints)], {"epsilon": 1.0, "columns": hints})
    assert ledger.charges == []
    assert list(found.schema["columns"]) == ["colour", "age", "flag"]  # only the hinted columns
    assert found.schema["columns"]["age"] == {"type": "numeric", "lower": 0, "upper": 100, "bins": 5,
                                              "integer": True, "missing": "error"}
    assert all(c["epsilon"] == 0.0 and c["learned"] == [] for c in found.columns.values())


def test_budget_goes_only_to_columns_with_something_unknown():
    """Type and bounds known for 'age' (only integrality-free bins are learned: quantile edges), categories known
    for 'colour' except missing: the kind histogram only."""
    table = _table()
    hints = {"colour": {"categories": ["red", "green", "blue"]},
             "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True, "missing": "error"}}
    found, ledger = _discover(table[list(hints)], {"epsilon": 1.0, "columns": hints})
    measured = [c.measured for c in ledger.charges]
    # 'colour' is complete (missing: category); age: its candidate steps (lattice.py), the fine histogram, then
    # its second look (zoom or again)
    assert measured[0] == "age: nonzero integers per largest public step dividing them (24 cells)"
    assert measured[1] == "age: rows per fine cell (101 public cells)" and len(measured) == 3
    assert sum(c.epsilon for c in ledger.charges) == pytest.approx(1.0)
    assert found.schema["columns"]["age"]["edges"][0] == 0 and found.schema["columns"]["age"]["edges"][-1] == 100
    assert found.columns["colour"]["public"] == ["categories", "type"]


def test_max_categories_keeps_the_most_frequent():
    table = _table(20_000)
    found, _ = _discover(table, {"epsilon": 10.0, "delta": 1e-6, "max_categories": 2,
                                 "columns": {"colour": {"type": "categorical", "missing": "error"}}})
    assert found.schema["columns"]["colour"]["categories"] == ["red", "green"]


def test_rare_values_go_to_the_other_bucket():
    table = pd.DataFrame({"c": ["common"] * 3000 + [f"rare{i}" for i in range(50)]})
    found, _ledger = _discover(table, {"epsilon": 1.0, "delta": 1e-9})
    assert found.schema["columns"]["c"]["categories"] == ["common"]
    cfg = parse_config(_as_config(found.schema))
    codes = encode(table, cfg.domain, unknown=cfg.unknown)
    assert np.bincount(codes[:, 0]).tolist() == [3000, 50]  # the rare values are in __other__


def test_equal_width_edges_spend_nothing_on_bins():
    table = _table()[["score"]]
    found, ledger = _discover(table, {"epsilon": 1.0, "edges": "equal", "bins": 4,
                                      "columns": {"score": {"type": "numeric", "integer": False,
                                                            "missing": "error"}}})
    # the profile (coarse range) and the two fine histograms (bounds); no edges are learned
    assert [c.mechanism for c in ledger.charges] == ["discrete-laplace"] * 3
    edges = found.schema["columns"]["score"]["edges"]
    assert len(edges) == 5 and np.allclose(np.diff(edges), np.diff(edges)[0])


def test_nulls_are_declared_when_frequent():
    table = pd.DataFrame({"x": [None] * 2000 + ["a"] * 2000})
    found, _ = _discover(table, {"epsilon": 4.0, "delta": 1e-6})
    assert found.schema["columns"]["x"]["missing"] == "category"


def test_categories_need_delta():
    with pytest.raises(ConfigError, match=re.escape(
            "discovery of categories (column 'colour') needs delta > 0 for partition selection; set --delta / "
            "discover.delta (e.g. 1e-6) or give the column's type or categories as a hint")):
        _discover(_table(), {"epsilon": 1.0})


@pytest.mark.parametrize(("raw", "message"), [
    ({"delta": 1e-6}, "schema.discover.epsilon: required"),
    ({"epsilon": 0}, "schema.discover.epsilon: must be > 0, got 0.0"),
    ({"epsilon": 1, "delta": 1}, "schema.discover.delta: must be in [0, 1), got 1.0"),
    ({"epsilon": 1, "colums": {}}, ("schema.discover.colums: unknown key (allowed: bins, columns, delta, edges, "
                                   "epsilon, max_categories)")),
    ({"epsilon": 1, "columns": {"a": {"type": "text"}}},
     "schema.discover.columns.a.type: must be one of numeric, integer, categorical, got 'text'"),
    ({"epsilon": 1, "columns": {"a": {"lower": 3}}}, "schema.discover.columns.a: give both lower and upper, or neither"),
    ({"epsilon": 1, "columns": {"a": {"lower": 3, "upper": 1}}},
     "schema.discover.columns.a.upper: must be greater than lower (1 <= 3)"),
    ({"epsilon": 1, "columns": {"a": {"bound": 3}}},
     ("schema.discover.columns.a.bound: unknown hint (allowed: bins, categories, integer, lower, missing, step, "
     "type, upper)")),
    ({"epsilon": 1, "edges": "log"}, "schema.discover.edges: must be one of quantile, equal, got 'log'"),
    ({"epsilon": 1, "max_categories": 0}, "schema.discover.max_categories: expected an integer >= 1, got 0"),
])
def test_parse_errors(raw, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_discover(raw)


def test_hinted_column_missing_from_input():
    with pytest.raises(DataError, match=re.escape("column 'zzz' has discovery hints but is missing from the input")):
        _discover(_table(), {"epsilon": 1.0, "columns": {"zzz": {}}})


def test_grids_are_public_and_round():
    g = coarse_grid(-1e9, 1e9)
    assert g[0] == -1e9 and g[-1] == 1e9 and 0.0 in g and 1.5 in g and -7e8 in g
    f = fine_cells(17, 90, integral=True, cells=128)  # one cell per integer: edges k ± 0.5
    assert f[0] == 16.5 and f[-1] == 90.5 and np.all(np.diff(f) == 1)
    f = fine_cells(0.0, 1.0, integral=False, cells=128)  # width 0.01 (the round width >= 1/128)
    assert len(f) == 101 and np.allclose(np.diff(f), 0.01) and f[0] == 0.0 and f[-1] == 1.0
    f = fine_cells(1500, 3000, integral=True, cells=16)  # width 100 on multiples of 100
    assert f[0] == 1500 and f[-1] == 3000 and np.all(np.diff(f) == 100)


def test_profile_counts():
    col = pd.Series(["1", "2.5", None, "x", "3", "1"], dtype=object)
    p = ColumnProfile(col)
    assert p.kind_counts().tolist() == [1, 3, 1, 1]
    labels, counts = p.value_counts()
    assert labels.tolist() == ["1", "2.5", "3", "x"] and counts.tolist() == [2, 1, 1, 1]
    below, total = p.rank_counts([0, 1, 2, 3, 4])
    assert below.tolist() == [0, 0, 2, 3, 4] and total == 4


class _Coupling:
    """Records every mechanism call of a discovery on D, replays its outputs on D′ (see tests/privacy/test_replay)."""

    def __init__(self):
        self.mode, self.calls, self.i, self.distances = "record", [], 0, []

    def __call__(self, mechanism, true, output, info):
        key = (mechanism, tuple(sorted(info.items())))
        if self.mode == "record":
            self.calls.append((key, true, output))
            return None
        rec_key, rec_true, rec_out = self.calls[self.i]
        self.i += 1
        assert rec_key == key
        diff = np.asarray(true, float) - np.asarray(rec_true, float)
        if mechanism == "exponential-quantiles":
            dist = np.max(np.abs(diff))
        elif "gaussian" in mechanism:  # Gaussian noise is calibrated to the L2 distance
            dist = float(np.sqrt((diff**2).sum()))
        else:
            dist = np.abs(diff).sum()
        self.distances.append((mechanism, float(dist), info["sensitivity"]))
        return rec_out if np.ndim(rec_out) == 0 else np.array(rec_out, copy=True)


@pytest.mark.parametrize("neighbouring", [Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE])
def test_coupled_replay_of_discovery(neighbouring, monkeypatch):
    """Discovery on D and on a neighbour D′ (a row changed or removed, its values held by other rows too, so the
    candidate sets agree) with the same seed: the calls are identical, every pre-noise difference is within the
    declared sensitivity, and with D's noisy outputs replayed the two schemas and ledgers are identical, so the
    schema depends on the data only through the mechanisms.  Deterministic."""
    d = _table(600, seed=3)
    # wide integers, measured twice and averaged (a real column such as score is zoomed since session 12), with
    # row 0 alone far above the rest: the support read off true counts would reach it in D and not in D′
    d["count"] = np.random.default_rng(4).integers(0, 300, size=len(d))
    d.loc[0, "count"] = 600
    if neighbouring is Neighbouring.ADD_REMOVE:
        d2 = d.iloc[1:].reset_index(drop=True)
    else:
        d2 = d.copy()
        d2.loc[0, ["colour", "age", "score", "flag", "count"]] = ["blue", 89, 1e6, 1 - d.loc[0, "flag"], 5]
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 2.0, "delta": 1e-6}
    found, ledger = _discover(d, raw, seed=9, neighbouring=neighbouring)
    coupling.mode = "replay"
    found2, ledger2 = _discover(d2, raw, seed=9, neighbouring=neighbouring)
    assert coupling.i == len(coupling.calls) >= 8
    kinds = {m for m, _, _ in coupling.distances}
    assert kinds == {"discrete-laplace", "partition-selection"}
    for mech, dist, sens in coupling.distances:
        assert dist <= sens, (mech, dist, sens)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
    # the released counts a release reuses as measurements (evidence.py) are mechanism outputs too
    assert found.evidence.keys() == found2.evidence.keys()
    assert any(ev.cells is not None for ev in found.evidence.values())
    for name, ev in found.evidence.items():
        ev2 = found2.evidence[name]
        for field in ("null", "labels", "label_counts", "label_sd", "cells", "cell_counts", "cell_sd"):
            np.testing.assert_array_equal(np.asarray(getattr(ev, field), dtype=object),
                                          np.asarray(getattr(ev2, field), dtype=object), err_msg=f"{name}.{field}")


def test_every_discovery_draw_has_its_ledger_entry(monkeypatch):
    """Ledger completeness (as tests/privacy/test_ledger_exact.py for releases): each mechanism call of a
    discovery, seen through the recorder hook, has its own ledger entry in order, with the same mechanism,
    sensitivity and ε; nothing is drawn without a charge."""
    calls = []
    monkeypatch.setattr(mechanisms, "recorder", lambda mech, true, out, info: calls.append((mech, info)))
    _, ledger = _discover(_table(), {"epsilon": 1.0, "delta": 1e-6})
    assert len(calls) == len(ledger.charges) >= 8
    for (mech, info), charge in zip(calls, ledger.charges):
        assert charge.mechanism == mech and charge.stage == info["stage"] == "discover"
        assert charge.sensitivity == info["sensitivity"] and charge.epsilon == info["epsilon"]


def test_integer_hint_with_a_wide_learned_range_is_binned():
    table = pd.DataFrame({"n": np.random.default_rng(0).integers(0, 100_000, size=5000)})
    found, _ = _discover(table, {"epsilon": 5.0, "max_categories": 50,
                                 "columns": {"n": {"type": "integer", "missing": "error"}}})
    spec = found.schema["columns"]["n"]
    assert spec["type"] == "numeric" and spec["integer"] is True and len(spec["edges"]) <= 11
    assert found.columns["n"]["learned"][-2].endswith("binned (numeric, integer: true)")
    small = pd.DataFrame({"n": np.random.default_rng(0).integers(3, 9, size=5000)})
    found, _ = _discover(small, {"epsilon": 5.0, "columns": {"n": {"type": "integer", "missing": "error"}}})
    # the fine histogram has one cell per integer: the bounds are the data's own 3 and 8
    assert found.schema["columns"]["n"] == {"type": "integer", "lower": 3, "upper": 8, "missing": "error"}


def test_schema_depends_on_the_data_only_through_mechanism_outputs(monkeypatch):
    """Two tables that are NOT neighbours (very different null, text and value counts, another numeric range)
    but observe the same set of category labels: with the first run's noisy outputs fed to the second
    (recorder replay; sensitivities are not checked here), the schemas and the per-column notes are identical.
    A decision taken on a true count (nulls, type, integrality, bounds, kept categories) would differ.  (Seed 5
    since session 17: on seeds whose noise sends ``v`` to the heaps' partition selection over its observed numbers,
    0 and 3 before signs.py and 2, 4 and 6 after, the coupling cannot diff the two runs' candidate sets, whose
    sizes are data-dependent by design.)"""
    rng = np.random.default_rng(0)
    a = pd.DataFrame({"c": ["x"] * 2500 + ["y"] * 1500 + [None] * 1000,
                      "v": np.concatenate([rng.uniform(0, 100, 4000), rng.integers(0, 9, 1000)]).astype(str)})
    b = pd.DataFrame({"c": ["x"] * 300 + ["y"] * 4690 + [None] * 10,
                      "v": np.concatenate([rng.integers(5000, 9000, 4990), ["oops"] * 10]).astype(object)})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 0.5, "delta": 1e-6}
    found, _ = _discover(a, raw, seed=5)
    coupling.mode = "replay"
    found2, _ = _discover(b, raw, seed=5)
    assert coupling.i == len(coupling.calls) >= 4
    assert found2.schema == found.schema and found2.columns == found.columns


def test_delta_is_split_between_the_columns_that_may_be_categorical():
    """Each column that may need partition selection gets δ/c′ (c′ fixed before looking at the data); the
    partition selections of two categorical columns together stay within δ.  A profiled column's probe takes half
    of its δ/c′ (a second selection, when the probe leaves rows unexplained, the other half)."""
    table = _table().assign(shade=lambda t: t["colour"].map({"red": "dark", "green": "light", "blue": "dark"}))
    _, ledger = _discover(table, {"epsilon": 2.0, "delta": 1e-6})
    ps = [c for c in ledger.charges if c.mechanism == "partition-selection"]
    per_column: dict[str, Fraction] = {}
    for c in ps:
        name = c.measured.split(":")[0]
        per_column[name] = per_column.get(name, Fraction(0)) + Fraction(c.delta)
    assert sorted(per_column) == ["colour", "shade"] and all(c.delta == pytest.approx(1e-6 / 10) for c in ps)
    assert all(d <= Fraction(1e-6) / 5 for d in per_column.values())
    assert sum((Fraction(c.delta) for c in ledger.charges), Fraction(0)) <= Fraction(1e-6)


def test_small_integral_range_with_possible_fractions_gets_one_bin_per_integer():
    """A 0/1 column with a few fractional values: integral (under 10% fractions) but not an integer column
    (which would refuse the fractions): one bin around each integer, decoded to integers."""
    table = pd.DataFrame({"f": np.r_[np.zeros(3000), np.ones(2000), np.full(60, 0.5)].astype(str)})
    found, _ = _discover(table, {"epsilon": 5.0, "columns": {"f": {"type": "numeric", "missing": "error"}}})
    spec = found.schema["columns"]["f"]
    assert spec == {"type": "numeric", "edges": [-0.5, 0.5, 1.5], "integer": True, "missing": "error"}
    cfg = parse_config(_as_config(found.schema))
    assert np.bincount(encode(table, cfg.domain, unknown=cfg.unknown)[:, 0]).tolist() == [3000, 2060]  # 0.5 is in [0.5, 1.5)


def test_bounds_fallback_uses_only_noisy_counts(monkeypatch):
    """At a budget where no bucket passes the cut, the coarse range falls back to the fullest NOISY bucket: with the
    first run's noisy outputs replayed, two tables with numbers in very different ranges give the same schema.
    Mutant (issue 24): the fallback takes the true fullest bucket."""
    rng = np.random.default_rng(1)
    a = pd.DataFrame({"v": rng.integers(10, 20, size=300)})
    b = pd.DataFrame({"v": rng.integers(50_000, 90_000, size=300)})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 1e-3, "columns": {"v": {"type": "numeric", "integer": True}}}
    found, _ = _discover(a, raw, seed=2)
    assert any("coarse range" in x for x in found.columns["v"]["learned"])
    coupling.mode = "replay"
    found2, _ = _discover(b, raw, seed=2)
    assert found2.schema == found.schema and found2.columns == found.columns


@pytest.mark.parametrize("neighbouring", [Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE])
def test_coupled_replay_of_zcdp_discovery(neighbouring, monkeypatch):
    """Discovery inside a zCDP ledger (discrete Gaussian histograms, Gaussian partition selection): on D and a
    neighbour D′ with the same seed every pre-noise L2 difference is within the declared L2 sensitivity (sqrt 2
    under replace-one), and with D's noisy outputs replayed the schemas and ledgers are identical.
    Mutant: the histograms' L2 sensitivity taken as 1 under replace-one."""
    from dpsynth.privacy.accountant import ZCDPComposition

    d = _table(600, seed=3)
    if neighbouring is Neighbouring.ADD_REMOVE:
        d2 = d.iloc[1:].reset_index(drop=True)
    else:
        d2 = d.copy()
        d2.loc[0, ["colour", "age", "score", "flag"]] = ["blue", 89, 1e6, 1 - d.loc[0, "flag"]]
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    spec = parse_discover({"epsilon": 2.0, "delta": 1e-6})
    runs = []  # (seed 0: its noise does not send `score` to the heaped-values selection, whose candidates, the
    # observed numbers, differ between D and D′, so the replay's shapes agree; seed 9 did before the per-column
    # streams of noise.column_streams)
    for table in (d, d2):
        ledger = Ledger(5.0, 1e-5, ZCDPComposition())
        found = discover_schema(table, spec, ledger=ledger, neighbouring=neighbouring, rng=np.random.default_rng(0),
                                rho=0.05)
        runs.append((found, ledger))
        coupling.mode = "replay"
    assert coupling.i == len(coupling.calls) >= 8
    assert {m for m, _, _ in coupling.distances} == {"discrete-gaussian", "gaussian-partition-selection"}
    for mech, dist, sens in coupling.distances:
        assert dist <= sens * (1 + 1e-12), (mech, dist, sens)
    assert any(dist > 1 for _, dist, _ in coupling.distances) == (neighbouring is Neighbouring.REPLACE_ONE)
    (found, ledger), (found2, ledger2) = runs
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]
    spent = sum(c.rho for c in ledger.charges)  # at most the discovery's ρ: cheap columns leave theirs unspent
    assert 0.3 * 0.05 < spent <= 0.05 and spent == pytest.approx(sum(c["rho_spent"] for c in found.columns.values()))


@pytest.mark.parametrize("values, edges, note", [
    (np.arange(1997, 2003), [1996.5, 1997.5, 1998.5, 1999.5, 2000.5, 2001.5, 2002.5], "one cell per integer in"),
    (np.array([1_000_000, 1_000_100, 1_000_200]), [999_950, 1_000_050, 1_000_150, 1_000_250],
     "integer values by partition selection"),  # (on a lattice of step 100: one bin around each multiple)
], ids=["years", "tied-amounts"])
def test_tied_integers_at_a_large_magnitude_get_one_bin_per_value(monkeypatch, values, edges, note):
    """Years 1997..2002 (issue 27: edges 1500..2999 and a synthetic median of 2036): the fine histogram's cells are
    wider than 1 and the support is narrow, so the rest of the budget measures one cell per integer of the support
    (years) or, when the support holds more than UNIT_CELLS integers (tied amounts), selects the observed
    integers; each kept value gets its own bin.  With the first run's noisy outputs replayed, a table with other
    counts of the same values gives the same schema (mutants: the kept values taken from the true counts)."""
    rng = np.random.default_rng(0)
    k = values.size
    a = pd.DataFrame({"year": rng.choice(values, size=6000)})
    b = pd.DataFrame({"year": rng.choice(values, size=6000, p=[0.5] + [0.5 / (k - 1)] * (k - 1))})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 1.0, "delta": 1e-6}
    found, _ = _discover(a, raw, seed=1)
    assert found.schema["columns"]["year"]["edges"] == edges
    assert any(note in x for x in found.columns["year"]["learned"])
    coupling.mode = "replay"
    found2, _ = _discover(b, raw, seed=1)
    assert found2.schema == found.schema and found2.columns == found.columns
    # a value held by ONE row is never published: replayed outputs, so only a true-count read could add it
    outputs = [out for _, _, out in coupling.calls]
    replay = iter(outputs)
    monkeypatch.setattr(mechanisms, "recorder", lambda mech, true, out, info: np.array(next(replay), copy=True))
    # (the next value on the column's lattice: one bin per multiple of 100 would hide an off-lattice one)
    c = pd.concat([a, pd.DataFrame({"year": [int(2 * values[-1] - values[-2])]})], ignore_index=True)
    found3, _ = _discover(c, raw, seed=1)
    assert found3.schema == found.schema


def test_narrow_integers_none_kept_spend_the_budget_once():
    """When the integer selection keeps nothing (a small table, a small budget) the fine histogram alone gives the
    bounds: the rest of the budget is not spent a second time (it was: 'asks for epsilon 0.2019 of 0.2')."""
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"year": rng.integers(1997, 2003, size=400), "c": rng.choice(["a", "b"], size=400)})
    for seed in range(5):
        found, ledger = _discover(table, {"epsilon": 0.2, "delta": 1e-6}, seed=seed)
        assert ledger.spent()[0] <= 0.2 and "year" in found.schema["columns"]


def test_dates_are_discovered_as_a_datetime_column(monkeypatch):
    """ISO dates (issue 27 item 3: a timestamp column became 100% __other__): the profile's date cell makes the
    column a datetime column, binned on its instants within the data's year, with ISO day edges.  With the
    noisy outputs replayed, a table with dates in another year gives the same schema (only mechanism outputs
    decide)."""
    rng = np.random.default_rng(4)
    days = pd.Timestamp("2017-01-01") + pd.to_timedelta(rng.integers(0, 365, size=8000), unit="D")
    a = pd.DataFrame({"when": days.strftime("%Y-%m-%d"), "k": rng.choice(["x", "y"], size=8000)})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    found, _ = _discover(a, {"epsilon": 2.0, "delta": 1e-6}, seed=3)
    spec = found.schema["columns"]["when"]
    assert spec["type"] == "datetime" and spec["missing"] == "category"
    assert spec["edges"][0] >= "2015-01-01" and spec["edges"][-1] <= "2019-06-01" and len(spec["edges"]) >= 5
    cfg = parse_config(_as_config(found.schema))
    assert np.bincount(encode(a, cfg.domain, unknown=cfg.unknown)[:, 0]).size >= 4
    coupling.mode = "replay"
    b = a.assign(when=(days + pd.Timedelta(days=3000)).strftime("%Y-%m-%d"))
    found2, _ = _discover(b, {"epsilon": 2.0, "delta": 1e-6}, seed=3)
    assert found2.schema == found.schema


def test_log_cells_are_round_and_cover_the_range():
    from dpsynth.data.discover.noise import log_cells

    f = log_cells(1.5, 1.5, 10000.0, integral=False, cells=100)  # 3.8 decades: E24, 24 cells per decade
    assert f[0] == 1.5 and f[-1] == 10000.0 and np.all(np.diff(f) > 0)
    assert {2.2, 4.7, 10.0, 1000.0, 9100.0} <= set(f.tolist()) and f.size - 1 <= 100
    ratio = f[2:] / f[1:-1]  # roughly geometric: each cell 1.05 to 1.2 times the one before
    assert ratio.min() > 1.04 and ratio.max() < 1.25
    f = log_cells(0.0, 1.5, 10000.0, integral=True, cells=40)  # E6; integers; [0, 2) below the series
    assert f[0] == 0 and f[1] == 2 and f[-1] == 10000 and np.all(f % 1 == 0) and f.size - 1 <= 40
    f = log_cells(-3.0, 20.0, 1e6, integral=False, cells=128)
    assert f[0] == -3.0 and 0.0 in f and f[2] == 20.0


def test_a_skewed_column_gets_logarithmic_cells_and_quantile_edges_across_magnitudes():
    """A log-normal sampling weight (median 90, 90% quantile ~ 1,700) got linear fine cells of width 100 before:
    its lowest bin held over half the rows.  Logarithmic cells give ten bins of about a tenth each."""
    rng = np.random.default_rng(3)
    w = np.round(np.exp(rng.normal(np.log(90.0), 2.2, size=20000)), 2)
    found, _ = _discover(pd.DataFrame({"w": w}), {"epsilon": 1.0, "delta": 1e-6})
    assert any(n.startswith("skewed") for n in found.columns["w"]["learned"])
    edges = np.asarray(found.schema["columns"]["w"]["edges"], dtype=float)
    share = np.histogram(np.clip(w, edges[0], edges[-1]), bins=edges)[0] / w.size
    assert edges.size >= 8 and share.max() < 0.25  # no bin holds much more than its tenth
    normal = pd.DataFrame({"x": rng.normal(500.0, 50.0, size=20000)})
    found, _ = _discover(normal, {"epsilon": 1.0, "delta": 1e-6})
    assert not any(n.startswith("skewed") for n in found.columns["x"]["learned"])


_CODES = ["0.0", "4.5", "14.5", "24.5", "34.5", "100.0"]


def test_a_column_of_few_fractional_codes_is_categorical_and_decodes_exactly():
    """IMDB-style class codes (0.0, 4.5, 14.5, …, 100.0) were binned as numbers and decoded to values between the
    codes (movies r1..r10: every synthetic value invalid).  Isolated fine cells past the cut make discovery spend
    the rest of the column's budget on its values; kept, they are the categories.  A continuous column with one
    decimal stays numeric."""
    rng = np.random.default_rng(5)
    codes = rng.choice(_CODES, size=20000, p=[0.35, 0.35, 0.15, 0.08, 0.05, 0.02])
    cont = np.round(rng.normal(6.0, 1.5, size=20000), 1).astype(str)
    found, ledger = _discover(pd.DataFrame({"r": codes, "x": cont}), {"epsilon": 2.0, "delta": 1e-6})
    r = found.schema["columns"]["r"]
    assert r["type"] == "categorical" and r["categories"] == _CODES  # numeric order, all six (100.0: 400 rows)
    assert any(n.startswith("few distinct numbers") for n in found.columns["r"]["learned"])
    assert found.schema["columns"]["x"]["type"] == "numeric"
    assert [c.mechanism for c in ledger.charges if "few distinct numbers" in str(c.measured)] == ["partition-selection"]


@pytest.mark.parametrize("seed", [0, 1])
def test_few_distinct_numbers_that_leave_rows_out_are_point_bins_not_categories(seed):
    """A mailing calendar's weeks (six values stored in single precision, 95% of the rows) and 40 rare weeks of
    25 rows each: the six pass partition selection (at ε 0.5 its threshold is far above 25 rows and far below the
    six's 1,900 or more) but hold under LABELS_ALL (99%) of the rows, so the column stays numeric with a point bin
    at each kept value and the rare weeks keep numbers between them (held-out-13's charity_mail ``weekslast``
    released 16% of its rows as ``__other__``, a text value in a column of numbers)."""
    rng = np.random.default_rng(11 + seed)
    weeks = np.array([13.142857551574709, 26.14285659790039, 51.28571319580078, 65.42857360839844,
                      103.85713958740234, 143.0])
    heavy = rng.choice(weeks, size=19000, p=[0.25, 0.15, 0.25, 0.1, 0.15, 0.1])
    rare = np.repeat(np.round(rng.uniform(13.0, 195.0, size=40), 6), 25)
    found, _ = _discover(pd.DataFrame({"w": np.r_[heavy, rare]}), {"epsilon": 0.5, "delta": 1e-6}, seed=seed)
    w = found.schema["columns"]["w"]
    assert w["type"] == "numeric", w
    edges = np.asarray(w["edges"], dtype=float)
    assert all(np.count_nonzero(edges == v) == 2 for v in weeks), edges  # a point bin at each kept value
    assert any("6 of them as point masses" in n for n in found.columns["w"]["learned"])


def test_the_few_numbers_decision_reads_only_noisy_counts(monkeypatch):
    """With table a's noisy outputs replayed, table b (the same six codes, but 3 rows each and the rest null)
    gets a's schema: a decision on b's true fine counts (no cell would pass the cut) would keep it numeric."""
    rng = np.random.default_rng(6)
    a = pd.DataFrame({"r": rng.choice(_CODES, size=6000, p=[0.35, 0.35, 0.15, 0.08, 0.05, 0.02])})
    b = pd.DataFrame({"r": np.r_[np.repeat(_CODES, 3), [None] * 5982]})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 2.0, "delta": 1e-6}
    found, _ = _discover(a, raw, seed=2)
    assert found.schema["columns"]["r"]["type"] == "categorical"
    coupling.mode = "replay"
    found2, _ = _discover(b, raw, seed=2)
    assert found2.schema == found.schema and found2.columns == found.columns


def test_counts_coded_partly_as_text_are_categorical():
    """FAA's birds_struck: '1' (79%), '2-10', '11-100', 'Over 100', '0'.  Typed numeric (numbers outnumber text),
    its text was null: 21% of the rows lost.  Text holding 5% of the rows beside a few integers makes it
    categorical; a wide integral column with a little stray text ('?') stays numeric, its text null."""
    rng = np.random.default_rng(8)
    struck = rng.choice(["1", "2-10", "11-100", "Over 100", "0"], size=20000, p=[0.78, 0.19, 0.015, 0.005, 0.01])
    age = rng.integers(17, 91, size=20000).astype(str).astype(object)
    age[rng.random(20000) < 0.06] = "?"
    found, _ = _discover(pd.DataFrame({"struck": struck, "age": age}), {"epsilon": 1.0, "delta": 1e-6})
    s = found.schema["columns"]["struck"]
    assert s["type"] == "categorical" and {"1", "2-10", "11-100"} <= set(s["categories"])
    assert found.schema["columns"]["age"]["type"] == "numeric"


def test_the_text_share_decision_reads_only_noisy_counts(monkeypatch):
    """With table a's noisy outputs replayed, table b (the same five labels, but text in 4 rows only) gets a's
    categorical schema: a decision on b's true text count would type it numeric."""
    rng = np.random.default_rng(9)
    a = pd.DataFrame({"s": rng.choice(["1", "2-10", "11-100", "Over 100", "0"], size=8000,
                                      p=[0.78, 0.19, 0.015, 0.005, 0.01])})
    b = pd.DataFrame({"s": ["2-10", "11-100", "Over 100", "0"] + ["1"] * 7996})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 1.0, "delta": 1e-6}
    found, _ = _discover(a, raw, seed=3)
    assert found.schema["columns"]["s"]["type"] == "categorical"
    coupling.mode = "replay"
    found2, _ = _discover(b, raw, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns


def test_the_probe_decision_reads_only_noisy_counts(monkeypatch):
    """Partition selection first runs with PROBE_SHARE of a categorical column's budget; whether it runs again
    depends on noisy counts only.  With table a's outputs replayed (three common labels, a rare fourth: the probe
    suffices), table b (the same labels, nearly every row in the fourth) gets a's schema and ledger: a decision on
    b's true counts of the kept labels would select again."""
    a = pd.DataFrame({"c": ["x"] * 1990 + ["y"] * 1990 + ["z"] * 1990 + ["w"] * 30})
    b = pd.DataFrame({"c": ["x"] * 10 + ["y"] * 10 + ["z"] * 10 + ["w"] * 5970})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 1.0, "delta": 1e-6}
    found, ledger = _discover(a, raw, seed=3)
    assert sorted(found.schema["columns"]["c"]["categories"]) == ["x", "y", "z"]
    assert [c.mechanism for c in ledger.charges].count("partition-selection") == 1  # the probe sufficed
    assert found.columns["c"]["epsilon_spent"] < 0.5 * found.columns["c"]["epsilon"]
    coupling.mode = "replay"
    found2, ledger2 = _discover(b, raw, seed=3)
    assert found2.schema == found.schema and found2.columns == found.columns
    assert [c.to_dict() for c in ledger2.charges] == [c.to_dict() for c in ledger.charges]


def test_a_column_of_many_categories_selects_again_within_its_budget():
    """A probe that leaves many rows unexplained (60 labels of 1.5% each: under the probe's threshold) is followed
    by a second selection with the rest of the column's budget, the pool the cheaper columns left (allot.py) and
    the rest of its δ, never more: the charges stay within the discovery's ε and the column's δ, and the second
    selection's labels are the schema's."""
    rng = np.random.default_rng(4)
    table = pd.DataFrame({"c": rng.choice([f"v{i}" for i in range(60)], size=6000),
                          "flag": rng.integers(0, 2, size=6000)})
    found, ledger = _discover(table, {"epsilon": 1.0, "delta": 1e-6}, seed=1)
    charges = [c for c in ledger.charges if c.measured.startswith("c:")]
    ps = [c for c in charges if c.mechanism == "partition-selection"]
    assert len(ps) == 2 and "probe" in ps[0].measured and "probe" not in ps[1].measured
    assert sum((Fraction(c.epsilon) for c in ledger.charges), Fraction(0)) <= Fraction(1.0)
    assert sum((Fraction(c.delta) for c in ps), Fraction(0)) <= Fraction(found.columns["c"]["delta"])
    assert ps[1].epsilon == found.columns["c"]["epsilon_pooled"]
    # the second selection has the rest of the column's own budget (here its need: no share of the pool)
    assert found.columns["c"]["epsilon_spent"] == pytest.approx(found.columns["c"]["epsilon"], rel=1e-6)
    assert len(found.schema["columns"]["c"]["categories"]) >= 40
    # the 0/1 flag: few integers, FEW_SHARE of the rest of its budget spent (its leftover goes to the pool)
    assert found.columns["flag"]["epsilon_spent"] < found.columns["flag"]["epsilon"]
    assert found.schema["columns"]["flag"]["edges"] == [-0.5, 0.5, 1.5]


def test_nothing_past_the_profile_cut_with_negative_sums_is_not_a_date_column(monkeypatch):
    """A nearly empty column (who's newrel_f65: 97% null) whose profile cells all stay under the cut falls back to
    the raw noisy sums of text and numbers; when both are negative it was typed datetime (0 dates > both)."""
    from dpsynth.data.discover.noise import ColumnBudget

    def flat(self, counts, measured):
        return np.full(np.shape(counts), -3, dtype=np.int64)

    monkeypatch.setattr(ColumnBudget, "histogram", flat)
    table = pd.DataFrame({"v": [None] * 390 + ["5", "70", "1200", "3", "40", "8", "15", "900", "2", "60"]})
    found, _ = _discover(table, {"epsilon": 1.0, "delta": 1e-6}, seed=0)
    assert found.schema["columns"]["v"]["type"] != "datetime"


def test_a_heap_beside_many_day_numbers_is_a_point_mass_not_the_bounds(monkeypatch):
    """aids_australia's ``death`` (session 15's closing check): days since 1960, spread over ~3,000 integers in
    three cells of 1,000, with 37.5 % at the end of observation.  The selection over its integers kept that one
    value and it became the bounds [11503, 11504]: every other row clamped (1-way TV 0.60).  The kept integers now
    give the bounds only when they hold most of the rows; here the column is binned over the spread and the heap
    is a point mass.  With the noisy outputs replayed, a table whose heap holds 93 % of the rows and every other day one row (where the true
    counts would say "tied") gives the same schema: only noisy counts decide (mutant: the test reads true counts)."""
    rng = np.random.default_rng(5)
    n = 2843
    heap = np.full(int(0.375 * n), 11504)
    days = rng.choice(np.arange(8469, 11504), size=200, replace=False)  # (200 days, about 9 rows each)
    spread = rng.choice(days, size=n - heap.size)
    a = pd.DataFrame({"death": np.concatenate([heap, spread]), "k": rng.choice(["x", "y"], size=n)})
    coupling = _Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    raw = {"epsilon": 0.2, "delta": 1e-6}
    found, _ = _discover(a, raw, seed=0)
    spec = found.schema["columns"]["death"]
    assert any("not tied" in x for x in found.columns["death"]["learned"]), found.columns["death"]["learned"]
    assert spec["edges"][0] <= float(np.quantile(spread, 0.1)) and 11504 in [round(e + 0.5) for e in spec["edges"]]
    coupling.mode = "replay"
    distinct = np.unique(spread[spread != 11504])  # (the same observed values, other counts: 1 row each)
    b = a.copy()
    b["death"] = np.concatenate([np.full(n - distinct.size, 11504), distinct])
    found2, _ = _discover(b, raw, seed=0)
    assert found2.schema == found.schema


@pytest.mark.parametrize(("text_sds", "kind"), [(1.0, "numeric"), (3.0, "categorical")])
def test_a_text_cell_under_two_sds_types_no_column_text(monkeypatch, text_sds, kind):
    """Issue 27, session 15: acs_2012's time_to_work (783 numbers, 61% null, a cell sd of 43.5) had no profile cell
    past the cut on seed 1, and its noisy text cell (26) beat the noisy sum of its 368 number cells (sd 834): typed
    text, every value went to one placeholder category.  Under FALLBACK_TEXT_SD sds the text cell no longer makes
    the column text; past them (a thin text column, the sum of the numbers below) it still does."""
    from dpsynth.data.discover import column
    from dpsynth.data.discover.noise import ColumnBudget

    real = ColumnBudget.histogram

    def profile(self, counts, measured):
        if not measured.startswith("rows per kind"):
            return real(self, counts, measured)
        out = np.full(np.shape(counts), -1, dtype=np.int64)  # every number cell under the cut, their sum -368
        out[0] = int(np.asarray(counts)[0])
        out[1] = round(text_sds * self.sd)  # the text cell: under the cut, over the numbers' sum
        return out

    monkeypatch.setattr(ColumnBudget, "histogram", profile)
    assert column.FALLBACK_TEXT_SD == 2.0
    rng = np.random.default_rng(0)
    values = rng.choice([5, 10, 15, 20, 30, 45, 60], size=800).astype(object)
    table = pd.DataFrame({"v": np.concatenate([values, np.full(1200, None, dtype=object)])})
    found, _ = _discover(table, {"epsilon": 1.0, "delta": 1e-6}, seed=1)
    assert found.schema["columns"]["v"]["type"] == kind
