"""Mutants of the Fourier release (dpsynth/algorithms/fourier.py) that the privacy tests must catch.

Each test injects one privacy bug and checks that the generic machinery (coupled replay, fast ε audit)
or the brute-force sensitivity check flags it.  Deterministic (fixed seeds) except the audit, whose
false-pass probability for the noiseless mutant is negligible (its outputs on D and D′ never overlap).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpsynth.algorithms import fourier
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from dpsynth.privacy.neighbouring import Neighbouring
from tests.privacy.audit import tiny_neighbours, tiny_raw_config
from tests.privacy.test_audit_algorithms import FAST_RUNS, run_audit
from tests.privacy.test_replay import Coupling, _release


def _replay(monkeypatch, neighbouring: str):
    cfg = parse_config(tiny_raw_config("fourier", neighbouring))
    d, d2 = tiny_neighbours(neighbouring)
    coupling = Coupling()
    monkeypatch.setattr(mechanisms, "recorder", coupling)
    first, report1 = _release(d, cfg, seed=4)
    coupling.mode = "replay"
    second, report2 = _release(d2, cfg, seed=4)
    return coupling, (first, report1), (second, report2)


def test_half_the_sensitivity_is_caught_by_the_replay(monkeypatch):
    """Declaring |B′|/2 under add-remove: adding a row moves the coefficient vector by exactly |B′|."""
    monkeypatch.setattr(fourier, "coefficient_sensitivity", lambda measured, nb: measured / 2)
    coupling, _, _ = _replay(monkeypatch, "add-remove")
    assert any(dist > sens for _, dist, sens in coupling.distances)


def test_the_correct_sensitivity_passes_the_replay(monkeypatch):
    coupling, (a, r1), (b, r2) = _replay(monkeypatch, "add-remove")
    assert coupling.distances and all(dist <= sens for _, dist, sens in coupling.distances)
    pd.testing.assert_frame_equal(a.synthetic, b.synthetic)
    assert r1 == r2


def test_replace_one_at_add_remove_sensitivity_is_caught_by_the_brute_force():
    """Declaring |B′| under replace-one: some pair of records moves the vector by more (test_fourier's
    brute force would fail)."""
    basis = fourier.Basis.closure(parse_config(tiny_raw_config("fourier")).domain, [(0, 1)])
    contrib = basis.characters()[1:].astype(np.int64)
    worst = np.abs(contrib[:, :, None] - contrib[:, None, :]).sum(axis=0).max()
    measured = basis.size - 1
    assert worst > measured  # so the mutant's declared sensitivity |B′| would be exceeded
    assert worst <= fourier.coefficient_sensitivity(measured, Neighbouring.REPLACE_ONE)


def test_using_the_true_n_is_caught_by_the_replay(monkeypatch):
    """Under add-remove with a noisy n, using the true row count for the constant coefficient makes the
    release depend on the data outside the mechanisms: the replayed run on D′ differs."""
    original = fourier.fit
    monkeypatch.setattr(fourier, "fit", lambda ctx, params, *, rng: original(
        dataclasses.replace(ctx, n=float(ctx.counts.n)), params, rng=rng))
    with pytest.raises(AssertionError):
        _, (a, r1), (b, r2) = _replay(monkeypatch, "add-remove")
        pd.testing.assert_frame_equal(a.synthetic, b.synthetic)
        assert r1 == r2


def test_fast_audit_catches_a_noiseless_fourier_release(monkeypatch):
    def no_noise(values, *, ledger, stage, measured="", sensitivity, epsilon, rng):
        from dpsynth.privacy.accountant import Charge

        ledger.charge(Charge(stage=stage, mechanism="none", sensitivity=sensitivity, epsilon=epsilon))
        return np.asarray(values)

    monkeypatch.setattr(fourier, "geometric_mechanism", no_noise)
    bound, text = run_audit("fourier", "replace-one", FAST_RUNS, seed=105)
    assert bound > 1.0, text
