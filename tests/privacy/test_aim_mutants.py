"""``aim``: the coupled replay and its mutants (tests/privacy/test_replay.py's Coupling).

Besides the worst-case neighbour pair, a *far* replay: the run on a table that shares nothing with D but its
size, fed D's mechanism outputs, must make the same calls (same ε per round, so the same annealing steps and
the same last round) and release the same rows.  A loop that read the data outside a mechanism (a budget
increase decided from the true marginal, a size limit from true counts) would diverge there even when one row
is too little to flip it.  Deterministic: no false failures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.algorithms import aim
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from tests.privacy.audit import tiny_neighbours, tiny_raw_config
from tests.privacy.test_replay import Coupling, _release


def _replay(monkeypatch, d, d2, *, neighbouring="replace-one", params=None, epsilon=1.0, delta=0.0) -> Coupling:
    raw = tiny_raw_config("aim", neighbouring, epsilon=epsilon)
    raw["algorithm"]["params"].update(params or {})
    raw["privacy"]["delta"] = delta
    cfg = parse_config(raw)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg, seed=1)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg, seed=1)
    assert coupling.i == len(coupling.calls)
    pd.testing.assert_frame_equal(first.synthetic, second.synthetic)
    assert report1 == report2
    return coupling


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("params", "delta"), [({}, 0.0), ({"accounting": "zcdp"}, 1e-3)])
def test_replay_passes(monkeypatch, neighbouring, params, delta):
    d, d2 = tiny_neighbours(neighbouring)
    coupling = _replay(monkeypatch, d, d2, neighbouring=neighbouring, params=params, delta=delta)
    assert any(m == "exponential" for m, _, _ in coupling.distances)
    assert all(dist <= sens * (1 + 1e-9) for _, dist, sens in coupling.distances)


def test_replay_catches_a_score_sensitivity_without_the_workload_weight(monkeypatch):
    """Mutant: the selection declares Δ₁ alone; the scores are weighted (w = 2 for a 1-way marginal, 4 for the
    pair over the workload {a}, {b}, {a, b}), so one replaced row moves them by up to 4·Δ₁."""
    original = aim.exponential_mechanism
    monkeypatch.setattr(aim, "exponential_mechanism", lambda scores, *, sensitivity, **kw: original(
        scores, sensitivity=sensitivity / 4, **kw))
    d, d2 = tiny_neighbours("replace-one")
    coupling = _replay(monkeypatch, d, d2)
    assert any(m == "exponential" and dist > sens for m, dist, sens in coupling.distances)


def _far_tables(n: int = 300):
    """D with an a–b dependence, and a table of the same size holding one row value only."""
    rng = np.random.default_rng(0)
    a = rng.choice(["x", "y", "z"], size=n)
    b = np.where(rng.random(n) < 0.8, a, rng.choice(["x", "y", "z"], size=n))
    d = pd.DataFrame({"a": a, "b": b})
    far = pd.DataFrame({"a": ["z"] * n, "b": ["x"] * n})
    return d, far


@pytest.mark.parametrize(("params", "delta"), [({}, 0.0), ({"accounting": "zcdp"}, 1e-3)])
def test_far_replay_trajectory_depends_on_mechanism_outputs_only(monkeypatch, params, delta):
    """At ε = 20 the noise is small, so a loop deciding anything from the true marginals would decide
    differently on a table this far away; the budget increases (and rounds) must be the same."""
    d, far = _far_tables()
    coupling = _replay(monkeypatch, d, far, params={"rounds_per_column": 4, **params}, epsilon=20.0, delta=delta)
    assert sum(1 for c in coupling.calls if c[0] == "exponential") >= 2


@pytest.mark.parametrize(("params", "delta"), [({}, 0.0), ({"accounting": "zcdp"}, 1e-3)])
def test_far_replay_size_limit_from_structure_only(monkeypatch, params, delta):
    """With ``model_cells`` 8 on the 3 × 3 domain the pair (a, b) (a 9-cell clique) is never offered: the
    limit is a function of the model's structure, so the run on the far table (one row value: a 1-cell
    support) must offer the same candidates as on D (9 cells with data)."""
    d, far = _far_tables()
    coupling = _replay(monkeypatch, d, far, params={"rounds_per_column": 4, "model_cells": 8, **params},
                       epsilon=20.0, delta=delta)
    assert sum(1 for c in coupling.calls if c[0] == "exponential") >= 2
