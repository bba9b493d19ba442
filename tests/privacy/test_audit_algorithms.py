"""End-to-end empirical ε audits of every algorithm on a tiny domain (2 columns × 3 values, 30 rows).

Each run is a full release (``dpsynth.release_from_counts``) at ε = 1 on a worst-case neighbouring pair
(:func:`tests.privacy.audit.tiny_neighbours`: replace-one moves a row from (x, x) to (z, z); add-remove
adds a (z, z) row) with the one-marginal workload (a, b).

**The event is fixed before any run** (no half of the sample is spent choosing it): for the algorithms
that release the (a, b) marginal, E = "every cell that differs between D and D′ is released at least
one count beyond its value in D, towards its value in D′" (under replace-one: noisy(z, z) ≥ 1 and
noisy(x, x) ≤ count_D(x, x) − 1; under add-remove: noisy(z, z) ≥ 1).  For (discrete or continuous)
Laplace noise of scale b per cell this is a tail event whose probability ratio is exactly e^{1/b} per
changed cell, i.e. e^{ε_true}: for the ``laplace`` algorithm under replace-one (one marginal, Δ = 2,
b = 2 at ε = 1) Pr_D′(E) = (1/(1+a))² and Pr_D(E) = (a/(1+a))² with a = e^{−1/b}.  DualQuery releases no
marginals; its audit keeps the learned-threshold feature of :func:`tests.privacy.audit.audit`.

ε_lo = ln(p′_lo / p_hi), with p′_lo the one-sided Clopper–Pearson lower bound of Pr_D′(E) and p_hi the
upper bound of Pr_D(E), each at level α/2, α = 1e-3: a correct algorithm fails with probability ≤ 1e-3.

**Runs per side, from the Clopper–Pearson bound (see docs/privacy.md).**  For the laplace algorithm
with its noise divided by k (true ε = k), with k′ ~ Bin(N, p′) and k ~ Bin(N, p) independent, the
power is P[ln(CP_lo(k′) / CP_hi(k)) > 1], summed exactly over all (k′, k) (:func:`power`):

| mutant      | b   | p′ = Pr_D′(E) | p = Pr_D(E) | smallest N with power ≥ 0.99 | N used | power at N used |
|-------------|-----|---------------|-------------|------------------------------|--------|-----------------|
| correct     | 2   | 0.3875        | 0.1425      | (false alarm ≤ 1e-3)         |        |                 |
| noise ÷ 2   | 1   | 0.5344        | 0.0723      | 414                          | 450    | 0.9959 (slow)   |
| noise ÷ 4   | 0.5 | 0.7758        | 0.0142      | 72                           | 80     | 0.9979 (fast)   |
| noise ÷ 8   | 0.25| 0.9644        | 0.0003      | < 72                         | 80     | 1.0000 (fast)   |

So the fast tier (80 runs per side) rejects a 4× violation and the slow tier (``-m slow``, 450 runs
per side) a 2× violation, each with probability ≥ 0.99; :func:`test_power_of_the_chosen_run_counts`
recomputes these figures.  The ``*_catches_*`` tests run the mutants themselves (fixed seeds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth.algorithms import algorithm_names
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.pipeline import release_from_counts
from tests.privacy.audit import (
    ALONE,
    ALPHA,
    SECTION_RUNS,
    TINY_WORKLOADS,
    audit,
    epsilon_lower_bound,
    section_variants,
    tiny_neighbours,
    tiny_raw_config,
)

ALGORITHMS = list(algorithm_names())  # the registry: a new algorithm is audited without editing a list
SECTIONS = [(a, s) for a, s in section_variants() if s not in ALONE]
"""(algorithm, optional workload section) pairs the specs accept (e.g. DualQuery's parities): audited in the
slow tier only (the fast tier replays them in test_replay.py and test_ledger_exact.py).  Sections released on
their own (iReduct's ``queries``) have no released (a, b) marginal for the audit's event: the replay, the
ledger tests and tests/workload/test_cellsets.py (sensitivity by brute force) cover them."""
FAST_RUNS = 80  # power ≥ 0.99 against a 4× noise violation (module docstring)
SLOW_RUNS = 450  # power ≥ 0.99 against a 2× noise violation
_AUDIT_PARAMS = {"mwem": {"iterations": 1}}  # one candidate marginal: one round


def power(runs: int, scale: float, claimed: float = 1.0, alpha: float = ALPHA) -> float:
    """P[ε_lo > claimed] for the two-cell event under discrete Laplace noise of ``scale`` (exact sum)."""
    a = math.exp(-1.0 / scale)
    p_d2, p_d = (1 / (1 + a)) ** 2, (a / (1 + a)) ** 2
    k = np.arange(runs + 1)
    bound = epsilon_lower_bound(k[:, None], runs, k[None, :], runs, alpha=alpha)
    weight = stats.binom.pmf(k, runs, p_d2)[:, None] * stats.binom.pmf(k, runs, p_d)[None, :]
    return float(weight[bound > claimed].sum())


def test_power_of_the_chosen_run_counts():
    """The figures of the module docstring (deterministic: binomial sums, no sampling)."""
    assert power(FAST_RUNS, 0.5) >= 0.99 and power(FAST_RUNS, 0.25) >= 0.99
    assert power(SLOW_RUNS, 1.0) >= 0.99
    assert power(413, 1.0) < 0.99 <= power(414, 1.0)
    assert power(71, 0.5) < 0.99 <= power(72, 0.5)
    assert power(SLOW_RUNS, 2.0) <= ALPHA  # the correct algorithm: false alarm


def _config(algorithm: str, neighbouring: str, section: str | None = None):
    raw = tiny_raw_config(algorithm, neighbouring)
    raw["workload"]["marginals"] = [["a", "b"]]
    if section is not None:
        raw["workload"][section] = TINY_WORKLOADS[section]
        raw["algorithm"]["params"].update(SECTION_RUNS[(algorithm, section)]["params"])
    raw["algorithm"]["params"].update(_AUDIT_PARAMS.get(algorithm, {}))
    raw["output"] = {"rows": 30}
    return parse_config(raw)


def _cell(res, a: str, b: str) -> float:
    m = res.marginals
    row = (m["marginal"] == "a|b") & (m["a"] == a) & (m["b"] == b)
    return float(m.loc[row, "noisy_count"].iloc[0])


def _event(tables, cfg):
    """The pre-registered event: every changed cell released ≥ 1 beyond its D value, towards D′."""
    d, d2 = (ArrayCounts(encode(t, cfg.domain), cfg.domain).marginal((0, 1)) for t in tables)
    labels = cfg.domain.columns[0].labels()
    changed = [(labels[i], labels[j], float(d[i, j]), float(np.sign(d2[i, j] - d[i, j])))
               for i, j in zip(*np.nonzero(d2 != d))]

    def holds(res) -> bool:
        return all(s * (_cell(res, a, b) - base) >= 1 for a, b, base, s in changed)

    return holds


def _feature(res) -> float:
    """DualQuery (no marginals): Σ over synthetic rows of (#z − #x among the coordinates)."""
    s = res.synthetic
    w = [np.where(np.asarray(s[c], dtype=object) == "z", 1.0, 0.0) - np.where(s[c] == "x", 1.0, 0.0)
         for c in ("a", "b")]
    return float(np.sum(w[0] + w[1]))


def _releases_ab(res) -> bool:
    return res.marginals is not None and bool((res.marginals["marginal"] == "a|b").any())


def run_audit(algorithm: str, neighbouring: str, runs: int, seed: int, section: str | None = None):
    """(ε_lo, description): the pre-registered event when the algorithm releases the (a, b) marginal (a
    property of the algorithm, not of the data), else the learned-threshold audit of the feature."""
    cfg = _config(algorithm, neighbouring, section)
    tables = tiny_neighbours(neighbouring)
    event = _event(tables, cfg)
    outputs, marginal_releasing = [], True
    for i, table in enumerate(tables):
        counts = ArrayCounts(encode(table, cfg.domain), cfg.domain)
        rng = np.random.default_rng([seed, i])
        results = [release_from_counts(counts, cfg, rng=rng) for _ in range(runs)]
        marginal_releasing &= all(_releases_ab(r) for r in results)
        outputs.append([(event(r) if _releases_ab(r) else None, _feature(r)) for r in results])
    eps = cfg.privacy.epsilon
    if not marginal_releasing:
        res = audit([f for _, f in outputs[0]], [f for _, f in outputs[1]], claimed_epsilon=eps)
        return res.epsilon_lower, str(res)
    k_d, k_d2 = (sum(e for e, _ in out) for out in outputs)
    bound = float(epsilon_lower_bound(k_d2, runs, k_d, runs))
    return bound, f"epsilon lower bound {bound:.4f} vs claimed {eps:g} (event: {k_d2}/{runs} on D′, {k_d}/{runs} on D)"


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_algorithm_audit_fast(algorithm):
    bound, text = run_audit(algorithm, "replace-one", FAST_RUNS, seed=100)
    assert bound <= 1.0, text


def _divide_noise(monkeypatch, k: float):
    from dpsynth.algorithms import laplace

    original = laplace.geometric_mechanism
    monkeypatch.setattr(laplace, "geometric_mechanism", lambda values, *, sensitivity, **kw: original(
        values, sensitivity=sensitivity / k, **kw))


def test_fast_tier_catches_a_4x_noise_violation(monkeypatch):
    """The laplace algorithm with its noise divided by 4 (true ε = 4): rejected at FAST_RUNS per side."""
    _divide_noise(monkeypatch, 4.0)
    bound, text = run_audit("laplace", "replace-one", FAST_RUNS, seed=101)
    assert bound > 1.0, text


@pytest.mark.slow
@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_algorithm_audit_slow(algorithm, neighbouring):
    bound, text = run_audit(algorithm, neighbouring, SLOW_RUNS, seed=200)
    assert bound <= 1.0, text


@pytest.mark.slow
@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "section"), SECTIONS)
def test_algorithm_audit_slow_workload_sections(algorithm, section, neighbouring):
    bound, text = run_audit(algorithm, neighbouring, SLOW_RUNS, seed=201, section=section)
    assert bound <= 1.0, text


@pytest.mark.slow
def test_slow_tier_catches_a_2x_noise_violation(monkeypatch):
    """The laplace algorithm with its noise divided by 2 (true ε = 2): rejected at SLOW_RUNS per side."""
    _divide_noise(monkeypatch, 2.0)
    bound, text = run_audit("laplace", "replace-one", SLOW_RUNS, seed=102)
    assert bound > 1.0, text
