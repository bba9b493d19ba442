"""Same-randomness (coupled) replay: the release sees the data only through its mechanisms.

For each algorithm and neighbouring relation we run the release on D and on a
worst-case neighbour D′ with the same seed.  On D every mechanism call is
recorded (``dpsynth.privacy.mechanisms.recorder``, which also sees iReduct's
uncharged chain draws ``laplace-chain`` and ``noise-down`` and DualQuery's query
sampling, so no sampling function is wrapped).  On D′ each call must match the recorded one
(same mechanism, stage, description, sensitivity and ε: the sequence of calls
is identical), the difference of the pre-noise quantities must not exceed the
declared sensitivity (L1 for Laplace and discrete Laplace, sup norm of the
scores for the exponential mechanism and DualQuery's samples), and the call
returns the output drawn on D.

If the control flow depends on the data only through noisy values, the run on
D′ then makes exactly the same calls and, because the generator is consumed
identically, produces byte-identical synthetic rows, marginals and report.
Any direct use of the data (a branch on a true count, an unnoised value in the
report) breaks that identity.  Deterministic: no false failures.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from tests.privacy.audit import (
    ALONE,
    SECTION_RUNS,
    TINY_WORKLOADS,
    section_variants,
    tiny_neighbours,
    tiny_raw_config,
)

ALGORITHMS = list(algorithm_names())  # the registry: a new algorithm is replayed without editing a list
VARIANTS = [(name, raw) for name in ALGORITHMS for raw in get_algorithm(name).audit_params]
EXPECTED_KINDS = {  # with default parameters, the sampling calls each algorithm must make (so the replay covers them)
    "laplace": {"discrete-laplace"},
    "mwem": {"discrete-laplace", "exponential"},
    "ireduct": {"laplace-chain", "noise-down"},
    "twophase": {"discrete-laplace"},
    "iresamp": {"discrete-laplace"},
    "dualquery": {"exponential-samples"},
    "fourier": {"discrete-laplace"},
    "aim": {"discrete-laplace", "exponential"},
    "auto": {"discrete-laplace", "exponential"},  # the tiny workload has a 2-way marginal: auto runs mwem
}


def _distance(mechanism: str, diff: np.ndarray) -> float:
    if mechanism in ("exponential", "exponential-quantiles", "exponential-samples"):
        return float(np.max(np.abs(diff)))
    if mechanism in ("gaussian", "discrete-gaussian"):
        return float(np.sqrt(np.sum(diff**2)))
    return float(np.sum(np.abs(diff)))


class Coupling:
    """Records calls on D (``mode = 'record'``) and replays their outputs on D′ (``mode = 'replay'``)."""

    def __init__(self):
        self.mode = "record"
        self.calls: list = []
        self.i = 0
        self.distances: list[tuple[str, float, float]] = []  # (mechanism, distance, declared sensitivity)

    def _next(self, kind: str, key):
        if self.mode == "record":
            return None
        assert self.i < len(self.calls), f"D′ made more sampling calls than D (extra {kind})"
        rec = self.calls[self.i]
        self.i += 1
        assert (rec[0], rec[1]) == (kind, key), f"call {self.i} differs: {rec[:2]} on D, {(kind, key)} on D′"
        return rec

    # -- dpsynth.privacy.mechanisms.recorder
    def __call__(self, mechanism, true, output, info):
        key = tuple(sorted(info.items()))
        rec = self._next(mechanism, key)
        if rec is None:
            self.calls.append((mechanism, key, true, output if isinstance(output, int) else np.array(output, copy=True)))
            return None
        assert np.shape(true) == np.shape(rec[2])
        dist = _distance(mechanism, np.asarray(true, dtype=float) - np.asarray(rec[2], dtype=float))
        self.distances.append((mechanism, dist, info["sensitivity"]))
        out = rec[3]
        return out if isinstance(out, int) else np.array(out, copy=True)


def _release(table, cfg, seed):
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(seed))
    report = json.loads(json.dumps(res.report))
    if report["algorithm"]["name"] == "dualquery":
        for r in report["algorithm"]["details"]["rounds"]:  # the solver's wall time per round
            r.pop("seconds", None)
    return res, report


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "params"), VARIANTS, ids=[f"{a}-{p}" for a, p in VARIANTS])
def test_coupled_replay(algorithm, params, neighbouring, monkeypatch):
    """Every algorithm and every variant its spec declares, under both neighbouring relations."""
    delta = 1e-3 if get_algorithm(algorithm).needs_delta(params) else 0.0
    _coupled_replay(algorithm, neighbouring, params, monkeypatch, delta=delta)


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "section"), section_variants())
def test_coupled_replay_workload_sections(algorithm, section, neighbouring, monkeypatch):
    """Every optional workload section an algorithm accepts (e.g. MWEM's linear queries, with continuous noise
    for fractional weights and integer noise for weights in {−1, 0, 1}), under both neighbouring relations."""
    run = SECTION_RUNS[(algorithm, section)]
    _coupled_replay(algorithm, neighbouring, run["params"], monkeypatch, kinds=run["kinds"],
                    workload={section: TINY_WORKLOADS[section]})


@pytest.mark.parametrize("marginal_queries", ["cells", "cuboids"])
def test_coupled_replay_mwem_mixed_query_families(marginal_queries, monkeypatch):
    """Issue 24: MWEM with several query families at once, under replace-one: 0/1 marginal queries (sensitivity 1)
    with the ±1 linear queries (sensitivity 2) of the tiny workload.  The selection's scores move by up to 2, so
    the exponential mechanism must be charged at the largest family's sensitivity (mutant: the first family's,
    which the section tests, running linear queries alone, could not see)."""
    workload = {"marginals": [["a"], ["b"], ["a", "b"]], "linear": TINY_WORKLOADS["linear"]}
    _coupled_replay("mwem", "replace-one", {"marginal_queries": marginal_queries, "iterations": 6}, monkeypatch,
                    kinds={"exponential"}, workload=workload)


def test_every_algorithm_declares_its_expected_sampling_calls():
    assert set(EXPECTED_KINDS) == set(ALGORITHMS), "add the new algorithm's mechanism kinds to EXPECTED_KINDS"


@pytest.mark.parametrize("params", [{"refresh": 0.3}, {"refresh": 0.02, "lambda_delta": 0.05}])
def test_coupled_replay_ireduct_batched_rounds(params, monkeypatch):
    """iReduct's batched rounds (water level chosen from noisy values) as well as the literal tail loop."""
    _coupled_replay("ireduct", "replace-one", params, monkeypatch)


@pytest.mark.parametrize(("algorithm", "params", "delta", "kinds"), [
    ("mwem", {"marginal_queries": "cells", "iterations": 3}, 0.0, {"discrete-laplace", "exponential"}),
    ("mwem", {"accounting": "zcdp"}, 1e-3, {"discrete-gaussian", "exponential"}),
    ("mwem", {"accounting": "zcdp", "noise": "continuous"}, 1e-3, {"gaussian", "exponential"}),
    ("mwem", {"output": "average", "init": "uniform", "bias_cells": True}, 0.0, {"discrete-laplace", "exponential"}),
    ("laplace", {"noise": "continuous"}, 0.0, {"laplace"}),
    ("laplace", {"noise": "snapping"}, 0.0, {"snapping"}),
    ("dualquery", {"accounting": "advanced", "free_attributes": "uniform"}, 1e-3, {"exponential-samples"}),
    ("fourier", {"noise": "continuous", "fit": "mw"}, 0.0, {"laplace"}),
])
def test_coupled_replay_variants(algorithm, params, delta, kinds, monkeypatch):
    """Other code paths: MWEM cell queries, zCDP with Gaussian noise (L2 sensitivity), averaged output;
    continuous Laplace; DualQuery under advanced composition; Fourier with continuous noise and the MW fit."""
    _coupled_replay(algorithm, "add-remove", params, monkeypatch, delta=delta, kinds=kinds)


REPLAY_QUERIES = {"queries": TINY_WORKLOADS["queries"]}
"""iReduct's cell-set workload (tests/workload/test_cellsets.py has the sensitivity arithmetic)."""

# Variants that make a sensitivity or a use of n matter (issue 13's surviving mutants).  Each is the
# keyword arguments of _coupled_replay; add one when an algorithm gains an option.
SENSITIVITY_VARIANTS = {
    # n/10 = 60 > 10·Δ·m/ε: the default λ_max comes from n, which is private (noisy) under add-remove
    "ireduct-default-lambda-max-private-n": {"algorithm": "ireduct", "neighbouring": "add-remove", "n": 600,
                                                 "params": {"lambda_max": None}},
    "iresamp-default-lambda-max-private-n": {"algorithm": "iresamp", "neighbouring": "add-remove", "n": 600,
                                                 "params": {"lambda_max": None}},
    # cuboids (Δ = 2 under replace-one) and ranges (Δ = 1) compete in one exponential mechanism
    "mwem-cuboids-and-ranges-replace-one": {"algorithm": "mwem", "neighbouring": "replace-one", "ranges": True,
                                                "params": {"iterations": 3}},
    "mwem-ranges-add-remove": {"algorithm": "mwem", "neighbouring": "add-remove", "ranges": True,
                                   "params": {"iterations": 3}},
    # noise ≫ n: clipping measurements to [0, n] binds, and n is private
    "mwem-clipping-binds-private-n": {"algorithm": "mwem", "neighbouring": "add-remove", "epsilon": 0.05,
                                          "params": {"iterations": 3, "init": "uniform"}},
    # Gaussian measurements at L2 sensitivity √2 under replace-one
    "mwem-zcdp-replace-one": {"algorithm": "mwem", "neighbouring": "replace-one", "delta": 1e-3,
                                  "params": {"accounting": "zcdp"}, "kinds": {"discrete-gaussian", "exponential"}},
    "mwem-zcdp-ranges-replace-one": {"algorithm": "mwem", "neighbouring": "replace-one", "delta": 1e-3, "ranges": True,
                                         "params": {"accounting": "zcdp", "iterations": 3},
                                         "kinds": {"discrete-gaussian", "exponential"}},
    "twophase-replace-one-large-n": {"algorithm": "twophase", "neighbouring": "replace-one", "n": 600, "params": {}},
    # iReduct over counting queries (workload.queries): Definition 4 over overlapping queries
    "ireduct-queries-replace-one": {"algorithm": "ireduct", "neighbouring": "replace-one", "workload": REPLAY_QUERIES,
                                    "params": {"lambda_delta": 0.5}, "kinds": {"laplace-chain", "noise-down"}},
    "ireduct-queries-add-remove-rounds-max": {"algorithm": "ireduct", "neighbouring": "add-remove",
                                              "workload": REPLAY_QUERIES, "kinds": {"laplace-chain", "noise-down"},
                                              "params": {"lambda_delta": 0.5, "refresh": 0.3, "pick": "max"}},
    "ireduct-queries-default-lambda-max-private-n": {"algorithm": "ireduct", "neighbouring": "add-remove", "n": 600,
                                                     "workload": REPLAY_QUERIES, "params": {"lambda_max": None}},
    "ireduct-pick-max-rounds": {"algorithm": "ireduct", "neighbouring": "replace-one",
                                "params": {"pick": "max", "refresh": 0.3, "lambda_delta": 0.5}},
}


@pytest.mark.parametrize("variant", list(SENSITIVITY_VARIANTS))
def test_coupled_replay_sensitivity_variants(variant, monkeypatch):
    kw = dict(SENSITIVITY_VARIANTS[variant])
    _coupled_replay(kw.pop("algorithm"), kw.pop("neighbouring"), kw.pop("params"), monkeypatch, **kw)


def _with_ordered_column(raw: dict, d: pd.DataFrame, d2: pd.DataFrame):
    """Add an integer column c (0..4) with range queries over it; the changed row keeps its c."""
    raw["schema"]["columns"]["c"] = {"type": "integer", "lower": 0, "upper": 4}
    raw["workload"]["ranges"] = {"count": 6, "columns": ["c"], "seed": 1}
    c = np.arange(len(d)) % 5
    d = d.assign(c=c)
    d2 = d2.assign(c=np.concatenate([c, [4]])[: len(d2)])
    return raw, d, d2


def _coupled_replay(algorithm, neighbouring, params, monkeypatch, delta=0.0, kinds=None, n=30, ranges=False,
                    epsilon=1.0, workload=None):
    """``kinds``: the mechanism kinds the run must use (default: ``EXPECTED_KINDS`` for default params);
    ``workload``: extra workload sections."""
    raw = tiny_raw_config(algorithm, neighbouring, epsilon=epsilon, n_epsilon=0.2 * epsilon)
    if workload:  # a section released on its own replaces the tiny marginals
        raw["workload"] = dict(workload) if set(workload) & ALONE else {**raw["workload"], **workload}
    raw["algorithm"]["params"] = {k: v for k, v in {**raw["algorithm"]["params"], **params}.items() if v is not None}
    raw["privacy"]["delta"] = delta
    if workload is not None:
        raw["workload"] = workload
    d, d2 = tiny_neighbours(neighbouring, n=n)
    if ranges:
        raw, d, d2 = _with_ordered_column(raw, d, d2)
    cfg = parse_config(raw)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)

    first, report1 = _release(d, cfg, seed=2024)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg, seed=2024)

    assert coupling.i == len(coupling.calls) > 0, "D′ made fewer sampling calls than D"
    used = {c[0] for c in coupling.calls}
    expected = kinds if kinds is not None else (EXPECTED_KINDS[algorithm] if not params else set())
    assert used >= expected | ({"discrete-laplace"} if neighbouring == "add-remove" else set()), used
    for mechanism, dist, sens in coupling.distances:
        assert dist <= sens * (1 + 1e-12), (mechanism, dist, sens)
    # the pair is worst case: some pre-noise quantity really differs
    assert any(dist > 0 for _, dist, _ in coupling.distances)
    if algorithm == "dualquery":
        samples = [dict(c[1]) for c in coupling.calls if c[0] == "exponential-samples"]
        charges = [c for c in first.report["ledger"] if c["stage"] == "dualquery"]
        assert len(charges) == len(samples)
        for c, info in zip(charges, samples):
            # one sample is an exponential mechanism with weights exp(η·r): its ε is 2·η·(sensitivity of r)
            assert info["epsilon"] == c["epsilon"] and info["count"] == c["count"]
            assert 2 * info["weight"] * info["sensitivity"] <= c["epsilon"] / c["count"] * (1 + 1e-12), (c, info)
        assert max(d for m, d, _ in coupling.distances if m == "exponential-samples") > 0
    pd.testing.assert_frame_equal(first.synthetic, second.synthetic)
    if first.marginals is not None:
        pd.testing.assert_frame_equal(first.marginals, second.marginals)
    assert report1 == report2


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_coupled_replay_with_schema_discovery(neighbouring, monkeypatch):
    """schema: {discover: ...}: the discovery's partition selections and kind histograms are replayed like the
    release's mechanisms (every value of D′ is observed in D, so the candidate sets agree; a value held by one
    row is the δ event, tested in tests/privacy/test_selection.py), and the two reports, including the
    discovered domain, are byte-identical."""
    raw = tiny_raw_config("mwem", neighbouring, epsilon=5.0)
    raw["schema"] = {"discover": {"epsilon": 4.0, "delta": 1e-6,
                                  "columns": {"a": {"type": "categorical", "missing": "error"}, "b": {}}}}
    raw["privacy"]["delta"] = 1e-6
    cfg = parse_config(raw)
    d, d2 = tiny_neighbours(neighbouring)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg, seed=77)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg, seed=77)
    assert coupling.i == len(coupling.calls)
    assert {c[0] for c in coupling.calls} >= {"partition-selection", "discrete-laplace", "exponential"}  # mwem measures with discrete noise
    for mechanism, dist, sens in coupling.distances:
        assert dist <= sens * (1 + 1e-12), (mechanism, dist, sens)
    assert any(dist > 0 for m, dist, _ in coupling.distances if m == "partition-selection")
    assert report1["ledger"][0]["stage"] == "discover" and report1["privacy"]["epsilon_requested"] == 5.0
    pd.testing.assert_frame_equal(first.synthetic, second.synthetic)
    assert report1 == report2


def test_replay_catches_a_data_dependent_branch(monkeypatch):
    """Power: an algorithm that branches on a true count (here, laplace skipping a marginal when the true
    (z, z) count is 0) changes the call sequence between D and D′, and the replay fails."""
    from dpsynth.algorithms import laplace

    original = laplace.measure_marginals

    def leaky(ctx, attr_sets, epsilon, **kw):
        joint = ctx.counts.marginal((0, 1))
        sets = list(attr_sets) if joint[2, 2] > 0 else list(attr_sets)[:-1]
        return original(ctx, sets, epsilon, **kw)

    monkeypatch.setattr(laplace, "measure_marginals", leaky)
    cfg = parse_config(tiny_raw_config("laplace"))
    d, d2 = tiny_neighbours()
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _release(d, cfg, seed=1)
    coupling.mode = "replay"
    with pytest.raises(AssertionError, match="call 1 differs"):
        _release(d2, cfg, seed=1)


def test_replay_catches_a_wrong_sensitivity(monkeypatch):
    """Power: a measurement declared with sensitivity 1 under replace-one (true L1 distance 2) is flagged."""
    from dpsynth.algorithms import laplace

    original = laplace.geometric_mechanism
    monkeypatch.setattr(laplace, "geometric_mechanism", lambda true, *, sensitivity, **kw: original(
        true, sensitivity=1.0, **kw))
    cfg = parse_config(tiny_raw_config("laplace"))
    d, d2 = tiny_neighbours()
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _release(d, cfg, seed=1)
    coupling.mode = "replay"
    _release(d2, cfg, seed=1)
    assert any(dist > sens for _, dist, sens in coupling.distances)


def test_recorder_is_off_by_default():
    assert mechanisms.recorder is None


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_domain_independence(algorithm, monkeypatch):
    """With a schema, a table that observes a single category per column and a table that observes every
    category give identical domain metadata and identical reports once the mechanism outputs are the same
    (the coupling above feeds the second run the first run's noisy values; the tables are not neighbours,
    so sensitivities are not checked here).  Any field computed from the data would differ."""
    cfg = parse_config(tiny_raw_config(algorithm, "replace-one"))
    full, _ = tiny_neighbours("replace-one")
    narrow = full.assign(a="x", b="y")
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _, report1 = _release(full, cfg, seed=8)
    coupling.mode = "replay"
    _, report2 = _release(narrow, cfg, seed=8)
    assert report1["domain"] == cfg.domain.to_dict()  # from the schema alone
    assert [d["values"] for d in report1["domain"]] == [["x", "y", "z"]] * 2
    assert report1 == report2


@pytest.mark.parametrize("algorithm", ["laplace", "auto"])
def test_coupled_replay_error_bounds(algorithm, monkeypatch):
    """Issue 28 §3: the report's error bounds are post-processing of mechanism outputs.  With 3,000 rows the
    bounds are informative (below the trivial 2), and the replay on D′ (n private, one row added) must give the
    same section: a bound read from the true counts or the true n differs."""
    captured = {}
    real = dpsynth.pipeline.release_bounds

    def spy(*args, **kwargs):
        captured.setdefault("sections", []).append(real(*args, **kwargs))
        return captured["sections"][-1]

    monkeypatch.setattr(dpsynth.pipeline, "release_bounds", spy)
    _coupled_replay(algorithm, "add-remove", {}, monkeypatch, n=3000)
    first, second = captured["sections"]
    assert first["available"] and first == second
    assert all(m["bound"] is not None and m["bound"] < 0.5 for m in first["marginals"]), first


@pytest.mark.parametrize("algorithm", ["auto", "aim"])
def test_selection_bounds_replay_on_another_table(algorithm, monkeypatch):
    """Issue 28 §3, marginals no measurement contains (bounds.selection_bound): their bounds come from the
    selection's rounds (the model's marginals the scores used, the chosen measurement's noisy values).  A second
    table of the same n with other counts, fed the first run's mechanism outputs, must give the same section:
    a bound read from the true counts (the chosen marginal's residual, a candidate's true error) differs."""
    rng = np.random.default_rng(5)
    cols = {c: {"type": "categorical", "categories": ["x", "y", "z"]} for c in "abcde"}
    raw = {"schema": {"columns": cols}, "privacy": {"epsilon": 1.0, "delta": 1e-6, "n": "public"},
           "algorithm": {"name": algorithm}, "workload": {"marginals": {"k": 2}}, "decode": {"fine": "off"}}
    cfg = parse_config(raw)
    first = pd.DataFrame({c: rng.choice(["x", "y", "z"], size=3000, p=[0.6, 0.3, 0.1]) for c in "abcde"})
    first["b"] = np.where(rng.random(3000) < 0.7, first["a"], first["b"])  # a dependence for the selection to find
    second = pd.DataFrame({c: rng.choice(["x", "y", "z"], size=3000) for c in "abcde"})
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _, report1 = _release(first, cfg, seed=4)
    coupling.mode = "replay"
    _, report2 = _release(second, cfg, seed=4)
    rows = report1["error_bounds"]["marginals"]
    by_selection = [m for m in rows if m["measured"] == "selection"]
    assert by_selection and all(0 < m["bound"] <= 2 for m in by_selection), rows
    assert report1["error_bounds"] == report2["error_bounds"]
