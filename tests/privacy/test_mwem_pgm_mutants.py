"""Mutants of MWEM's default (pgm) variant that the coupled replay must catch (tests/privacy/test_replay.py)."""

from __future__ import annotations

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
