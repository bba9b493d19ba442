"""End-to-end empirical ε audits of every algorithm on a tiny domain (2 columns × 3 values, 30 rows).

Each run is a full release (``dpsynth.release_from_counts``, i.e. ``dpsynth.release`` after encoding,
which is done once) with the algorithm's configuration at ε = 1 on a worst-case neighbouring pair
(:func:`tests.privacy.audit.tiny_neighbours`).  The output feature is a fixed linear statistic of the
released noisy marginals (when the algorithm releases marginals) or of the synthetic rows: per cell,
(number of coordinates equal to z) − (number equal to x), which moves by +4 from D to D′.

Fast tier (60 runs per side): catches releases whose output separates D and D′ almost surely (a
missing noise term, a branch on the data), e.g. the noiseless mutant below.  Slow tier (600 runs per
side, ``-m slow``, about 3 minutes, 11 on a busy 2-core machine): finer violations; its power is shown on
the ``laplace`` algorithm with half its noise (1000 runs per side with a single-cell statistic; 2×
violations of one mechanism are caught with 200,000 draws in test_audit_mechanisms.py).  A correct
algorithm fails an audit with probability ≤ 1e-3 (Clopper–Pearson, see audit.py); fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.algorithms import algorithm_names
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.pipeline import release_from_counts
from tests.privacy.audit import audit, tiny_neighbours, tiny_raw_config

ALGORITHMS = list(algorithm_names())  # the registry: a new algorithm is audited without editing a list
_WEIGHT = {"z": 1.0, "x": -1.0, "y": 0.0}


def _weights(column) -> np.ndarray:
    col = np.asarray(column, dtype=object)
    return np.where(col == "z", 1.0, 0.0) - np.where(col == "x", 1.0, 0.0)


def feature(res) -> float:
    """Σ over released cells (or synthetic rows) of value × (#z − #x among its coordinates)."""
    if res.marginals is not None:
        m = res.marginals
        w = _weights(m["a"]) + _weights(m["b"])
        return float(np.sum(w * m["noisy_count"].to_numpy(dtype=float)))
    s = res.synthetic
    return float(np.sum(_weights(s["a"]) + _weights(s["b"])))


def zz_cell(res) -> float:
    """The released noisy count of the (z, z) cell of the 2-way marginal (0 in D, 1 in D′ under add-remove)."""
    m = res.marginals
    row = (m["marginal"] == "a|b") & (m["a"] == "z") & (m["b"] == "z")
    return float(m.loc[row, "noisy_count"].iloc[0])


def _outputs(algorithm: str, neighbouring: str, draws: int, seed: int, *, marginals=None, stat=feature):
    raw = tiny_raw_config(algorithm, neighbouring)
    if marginals is not None:
        raw["workload"]["marginals"] = marginals
    cfg = parse_config(raw)
    out = []
    for i, table in enumerate(tiny_neighbours(neighbouring)):
        counts = ArrayCounts(encode(table, cfg.domain), cfg.domain)
        rng = np.random.default_rng([seed, i])
        out.append([stat(release_from_counts(counts, cfg, rng=rng)) for _ in range(draws)])
    return out, cfg.privacy.epsilon


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_algorithm_audit_fast(algorithm):
    (d, d2), eps = _outputs(algorithm, "replace-one", 60, seed=100)
    res = audit(d, d2, claimed_epsilon=eps)
    assert res.passed, res


def test_fast_tier_catches_a_noiseless_release(monkeypatch):
    """Power of the fast tier: the laplace algorithm with its noise removed is caught with 60 runs per side."""
    from dpsynth.algorithms import laplace

    def no_noise(values, *, ledger, stage, measured="", sensitivity, epsilon, rng):
        from dpsynth.privacy.accountant import Charge

        ledger.charge(Charge(stage=stage, mechanism="none", sensitivity=sensitivity, epsilon=epsilon))
        return np.asarray(values)

    monkeypatch.setattr(laplace, "geometric_mechanism", no_noise)
    (d, d2), eps = _outputs("laplace", "replace-one", 60, seed=101)
    res = audit(d, d2, claimed_epsilon=eps)
    assert not res.passed, res


@pytest.mark.slow
@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_algorithm_audit_slow(algorithm, neighbouring):
    (d, d2), eps = _outputs(algorithm, neighbouring, 600, seed=200)
    res = audit(d, d2, claimed_epsilon=eps)
    assert res.passed, res


@pytest.mark.slow
def test_slow_tier_catches_half_the_noise(monkeypatch):
    """Power of the slow tier: the laplace algorithm measuring its one marginal with half the noise scale.
    Add-remove, ε = 1 with 0.2 on the noisy n: the (z, z) cell alone then costs 1.6 > 1.  Caught with 1000
    runs per side (in simulation the bound for this mutant was ≥ 1.1 in 10 of 10 repetitions; for the
    correct algorithm ≤ 0.6).  Statistic: the released (z, z) count, chosen from D and D′ before any run."""
    from dpsynth.algorithms import laplace

    runs = 1000
    (d, d2), eps = _outputs("laplace", "add-remove", runs, seed=103, marginals=[["a", "b"]], stat=zz_cell)
    assert audit(d, d2, claimed_epsilon=eps).passed
    original = laplace.geometric_mechanism
    monkeypatch.setattr(laplace, "geometric_mechanism", lambda values, *, sensitivity, **kw: original(
        values, sensitivity=sensitivity / 2, **kw))
    (d, d2), eps = _outputs("laplace", "add-remove", runs, seed=102, marginals=[["a", "b"]], stat=zz_cell)
    res = audit(d, d2, claimed_epsilon=eps)
    assert not res.passed, res
