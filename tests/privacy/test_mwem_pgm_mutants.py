"""Mutants of MWEM's default (pgm) variant that the coupled replay must catch (tests/privacy/test_replay.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.algorithms import mwem_pgm
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from tests.privacy.audit import tiny_neighbours, tiny_raw_config
from tests.privacy.test_replay import Coupling, _release


def _replay(monkeypatch, neighbouring="replace-one") -> Coupling:
    cfg = parse_config(tiny_raw_config("mwem", neighbouring))
    d, d2 = tiny_neighbours(neighbouring)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    _release(d, cfg, seed=1)
    coupling.mode = "replay"
    _release(d2, cfg, seed=1)
    return coupling


def test_replay_passes_the_pgm_variant(monkeypatch):
    for neighbouring in ("replace-one", "add-remove"):
        assert all(dist <= sens * (1 + 1e-9) for _, dist, sens in _replay(monkeypatch, neighbouring).distances)


def test_replay_catches_an_understated_score_sensitivity(monkeypatch):
    """Mutant: the selection declares half the quality score's sensitivity (add-remove: 0.5 instead of 1;
    adding a row moves the L1 score of the measured 2-way marginal by exactly 1)."""
    original = mwem_pgm.exponential_mechanism
    monkeypatch.setattr(mwem_pgm, "exponential_mechanism", lambda scores, *, sensitivity, **kw: original(
        scores, sensitivity=sensitivity / 2, **kw))
    assert any(dist > sens for _, dist, sens in _replay(monkeypatch, "add-remove").distances)


def test_replay_catches_an_understated_measurement_sensitivity(monkeypatch):
    """Mutant: the measured marginal declares sensitivity 1 under replace-one (true L1 distance 2)."""
    original = mwem_pgm.geometric_mechanism  # the default measurement: integer noise on integer counts
    monkeypatch.setattr(mwem_pgm, "geometric_mechanism", lambda true, *, sensitivity, **kw: original(
        true, sensitivity=1.0, **kw))
    assert any(dist > sens for _, dist, sens in _replay(monkeypatch).distances)


def _three_columns(epsilon: float, delta: float, params: dict) -> dict:
    """Three 3-value columns, all pairs in the workload: three candidate pairs, so a batch of 2 has a choice."""
    cols = ("a", "b", "c")
    return {
        "schema": {"columns": {c: {"type": "categorical", "categories": ["x", "y", "z"]} for c in cols}},
        "privacy": {"epsilon": epsilon, "delta": delta, "neighbouring": "replace-one"},
        "algorithm": {"name": "mwem", "params": {"iterations": 8, **params}},
        "workload": {"marginals": [["a", "b"], ["a", "c"], ["b", "c"]]},
    }


def _far_tables(n: int = 300):
    """D with an a–b–c dependence, and a table of the same size holding one row value only."""
    import pandas as pd

    rng = np.random.default_rng(0)
    a = rng.choice(["x", "y", "z"], size=n)
    b = np.where(rng.random(n) < 0.8, a, rng.choice(["x", "y", "z"], size=n))
    c = np.where(rng.random(n) < 0.7, b, rng.choice(["x", "y", "z"], size=n))
    return pd.DataFrame({"a": a, "b": b, "c": c}), pd.DataFrame({"a": ["z"] * n, "b": ["x"] * n, "c": ["y"] * n})


@pytest.mark.parametrize(("delta", "params"), [(0.0, {}), (1e-3, {"accounting": "zcdp"})])
def test_batch_far_replay_depends_on_mechanism_outputs_only(monkeypatch, delta, params):
    """``batch: 2``: a run on a table sharing nothing with D but its size, fed D's mechanism outputs, must make
    the same calls (the same second draw's candidates, the same budget increases, the same last round) and
    release the same rows: at ε = 20 a loop that read the true marginals outside a mechanism would diverge.
    Deterministic: no false failures."""
    d, far = _far_tables()
    cfg = parse_config(_three_columns(20.0, delta, {"batch": 2, **params}))
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg, seed=1)
    coupling.mode = "replay"
    second, report2 = _release(far, cfg, seed=1)
    assert coupling.i == len(coupling.calls)
    assert report1 == report2 and first.synthetic.equals(second.synthetic)
    details = report1["algorithm"]["details"]
    assert details["batch"] == 2 and details["budget_increases"] >= 1
    assert len(details["selected"]) > details["rounds"]  # some round measured two marginals
