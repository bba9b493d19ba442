"""A reusable empirical ε audit: Clopper–Pearson lower bounds from two samples of outputs.

Given outputs of a randomised algorithm M on neighbouring datasets D and D′,
the audit

1. splits each sample into halves;
2. on the *first* halves, picks the output event E (a threshold on a scalar
   feature, or on a score learned for discrete outputs) and the direction
   (D over D′ or D′ over D) whose empirical lower bound on ε is largest;
3. on the *second* halves, which played no part in the choice, computes the
   one-sided Clopper–Pearson bounds p₁ ≥ p₁_lo (for Pr[M(D) ∈ E]) and
   p₂ ≤ p₂_hi (for Pr[M(D′) ∈ E]), each at level α/2, and reports
   ε_lo = ln((p₁_lo − δ)/p₂_hi).

If M is (ε, δ)-DP then p₁ ≤ e^ε·p₂ + δ for every event, so ε_lo > ε needs
p₁_lo > p₁ or p₂_hi < p₂: the probability of a false alarm is at most α
(1e-3 by default) whatever E was chosen, because E depends only on the first
halves.  A violation is detected when the true ratio of some threshold event
is large enough for the sample size (e.g. a Laplace count at ε = 1 with half
its noise, true ε = 2, needs about 400 draws per side in the second half).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "ALONE",
    "ALPHA",
    "TINY_PARAMS",
    "AuditResult",
    "audit",
    "cp_lower",
    "cp_upper",
    "epsilon_lower_bound",
    "sample_outputs",
    "tiny_neighbours",
    "tiny_raw_config",
    "with_section",
]

ALPHA = 1e-3
"""False-alarm probability of one audit (a correct mechanism fails it with probability ≤ ALPHA)."""


def cp_lower(k, n, alpha: float):
    """One-sided Clopper–Pearson lower bound for a binomial proportion (exact, level 1 − alpha)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, lo)


def cp_upper(k, n, alpha: float):
    """One-sided Clopper–Pearson upper bound for a binomial proportion (exact, level 1 − alpha)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, hi)


def epsilon_lower_bound(k1, n1: int, k2, n2: int, *, alpha: float = ALPHA, delta: float = 0.0):
    """ln((p₁_lo − δ)/p₂_hi): a lower confidence bound on ε valid with probability ≥ 1 − alpha."""
    num = cp_lower(k1, n1, alpha / 2) - delta
    den = cp_upper(k2, n2, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(num > 0, num, np.nan) / den)
    return np.where(np.isfinite(out), out, -np.inf)


@dataclass(frozen=True)
class AuditResult:
    """The held-out lower bound on ε and the event it came from."""

    epsilon_lower: float
    event: str
    counts: tuple[int, int, int, int]  # (k in the favoured sample, n, k in the other sample, n)
    claimed: float

    @property
    def passed(self) -> bool:
        return self.epsilon_lower <= self.claimed

    def __str__(self) -> str:
        k1, n1, k2, n2 = self.counts
        return (f"epsilon lower bound {self.epsilon_lower:.4f} vs claimed {self.claimed:g} "
                f"(event {self.event}: {k1}/{n1} vs {k2}/{n2})")


def _scores_from_keys(first_a: Sequence, first_b: Sequence) -> Callable[[Sequence], np.ndarray]:
    """For discrete outputs: score each key by its smoothed log frequency ratio on the first halves."""
    ca, cb = Counter(first_a), Counter(first_b)
    na, nb = max(1, len(first_a)), max(1, len(first_b))
    table = {k: math.log((ca[k] + 0.5) / na) - math.log((cb[k] + 0.5) / nb) for k in set(ca) | set(cb)}

    def score(keys: Sequence) -> np.ndarray:
        return np.array([table.get(k, 0.0) for k in keys], dtype=float)

    return score


def _threshold_events(xa: np.ndarray, xb: np.ndarray, thresholds: np.ndarray):
    """Counts of {x >= t} and {x < t} in both samples for every threshold."""
    sa, sb = np.sort(xa), np.sort(xb)
    ge_a = len(sa) - np.searchsorted(sa, thresholds, side="left")
    ge_b = len(sb) - np.searchsorted(sb, thresholds, side="left")
    return ge_a, ge_b, len(sa) - ge_a, len(sb) - ge_b


def _best_event(xa, xb, *, alpha: float, delta: float, grid: int):
    pooled = np.concatenate([xa, xb])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0, 1, grid)))
    thresholds = np.unique(np.concatenate([thresholds, np.nextafter(thresholds, np.inf)]))
    ge_a, ge_b, lt_a, lt_b = _threshold_events(xa, xb, thresholds)
    na, nb = len(xa), len(xb)
    candidates = [
        ("x >= t, D over D'", epsilon_lower_bound(ge_a, na, ge_b, nb, alpha=alpha, delta=delta)),
        ("x < t, D over D'", epsilon_lower_bound(lt_a, na, lt_b, nb, alpha=alpha, delta=delta)),
        ("x >= t, D' over D", epsilon_lower_bound(ge_b, nb, ge_a, na, alpha=alpha, delta=delta)),
        ("x < t, D' over D", epsilon_lower_bound(lt_b, nb, lt_a, na, alpha=alpha, delta=delta)),
    ]
    best = max(((float(b.max()), name, thresholds[int(np.argmax(b))]) for name, b in candidates))
    return best[1], best[2]


def audit(
    outputs_d: Sequence,
    outputs_d2: Sequence,
    *,
    claimed_epsilon: float,
    delta: float = 0.0,
    alpha: float = ALPHA,
    discrete: bool = False,
    grid: int = 400,
) -> AuditResult:
    """Empirical lower bound on ε from outputs of M(D) and M(D′) (see the module docstring).

    ``outputs_*`` are scalar features (floats), or hashable keys with
    ``discrete=True`` (keys are scored by their log frequency ratio on the
    first halves, and thresholds are taken on that score).
    """
    a, b = list(outputs_d), list(outputs_d2)
    ha, hb = len(a) // 2, len(b) // 2
    if discrete:
        score = _scores_from_keys(a[:ha], b[:hb])
        xa1, xb1, xa2, xb2 = score(a[:ha]), score(b[:hb]), score(a[ha:]), score(b[hb:])
    else:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        xa1, xb1, xa2, xb2 = a[:ha], b[:hb], a[ha:], b[hb:]
    name, t = _best_event(xa1, xb1, alpha=alpha, delta=delta, grid=grid)
    ge_a, ge_b, lt_a, lt_b = (int(v[0]) for v in _threshold_events(xa2, xb2, np.array([t])))
    na, nb = len(xa2), len(xb2)
    k1, n1, k2, n2 = {
        "x >= t, D over D'": (ge_a, na, ge_b, nb),
        "x < t, D over D'": (lt_a, na, lt_b, nb),
        "x >= t, D' over D": (ge_b, nb, ge_a, na),
        "x < t, D' over D": (lt_b, nb, lt_a, na),
    }[name]
    bound = float(epsilon_lower_bound(k1, n1, k2, n2, alpha=alpha, delta=delta))
    return AuditResult(bound, f"{name} with t = {t:.6g}", (k1, n1, k2, n2), float(claimed_epsilon))


def sample_outputs(run: Callable[[np.random.Generator], object], draws: int, *, seed: int) -> list:
    """``draws`` outputs of ``run(rng)`` from one seeded generator (one stream per side)."""
    rng = np.random.default_rng(seed)
    return [run(rng) for _ in range(draws)]


# ------------------------------------------------------------- tiny end-to-end setups
TINY_PARAMS: dict[str, dict] = {
    "laplace": {},
    "mwem": {"iterations": 2, "mw_passes": 2},
    "ireduct": {"lambda_max": 40.0, "lambda_delta": 2.0, "refresh": 0.0, "synthesis_passes": 2},
    "twophase": {"synthesis_passes": 2},
    "iresamp": {"lambda_max": 40.0, "synthesis_passes": 2},
    "dualquery": {"T": 3, "s": 4, "best_response": "local", "local_search": {"restarts": 1, "kicks": 2}},
    "fourier": {},
    "aim": {"rounds_per_column": 2},
}
"""Small, fast parameters per algorithm (a release on 30 rows takes milliseconds); an algorithm missing here
runs with its defaults, so a new algorithm is audited without editing this table."""


TINY_WORKLOADS: dict[str, dict] = {
    # Two linear queries over the tiny schema (MWEM §2, q(x) ∈ [−1, 1]); each is tight on the worst-case pair
    # (q(x, x) = −1, q(z, z) = +1: replace-one moves q(B) by 2, add-remove by 1).  The first has fractional
    # weights (continuous noise), the second weights in {−1, 0, 1} (integer noise); the third is a 0/1 count,
    # measured at its own sensitivity 1 while the selection uses 2 under replace-one.
    "linear": {"queries": [
        {"name": "xx to zz", "columns": ["a", "b"], "weights": [-1, 0.5, -0.25, 0.5, 0, 0.75, -0.25, 0.75, 1]},
        {"name": "a is z minus a is x", "columns": ["a"], "weights": [-1, 0, 1]},
        {"name": "b is z", "columns": ["b"], "weights": [0, 0, 1]},  # a count: sensitivity 1 under both
    ]},
    # DualQuery's parities (§6) over the one-hot bits of the two 3-valued columns: 9 queries
    "parities": {"k": 2},
    # iReduct's counting queries (cell sets); the changed row (x, x) → (z, z) leaves two queries and joins three
    "queries": [{"where": {"a": "x"}}, {"where": {"b": ["x", "y"]}}, {"where": {"a": "z", "b": "z"}},
                {"where": {"b": "z"}}, {"where": {"a": ["y", "z"]}, "sanity_bound": 2}],
}
"""A tiny instance of each optional workload section (beyond marginals), in YAML terms over the schema of
:func:`tiny_raw_config`; the privacy tests run every algorithm that accepts a section with it."""

ALONE = frozenset({"queries"})
"""Sections released on their own: the tiny config's marginals are dropped when one of them is added."""


def with_section(workload: dict, section: str) -> dict:
    """``workload`` (a raw ``workload:`` mapping) with the tiny instance of ``section`` added (or alone)."""
    if section in ALONE:
        return {section: TINY_WORKLOADS[section]}
    return {**workload, section: TINY_WORKLOADS[section]}

SECTION_RUNS: dict[tuple[str, str], dict] = {
    ("ireduct", "queries"): {"params": {"lambda_delta": 0.1}, "kinds": {"laplace-chain", "noise-down"}},
    ("mwem", "linear"): {"params": {"marginal_queries": "none", "iterations": 3},
                         "kinds": {"laplace", "discrete-laplace", "exponential"}},
    ("dualquery", "parities"): {"params": {}, "kinds": {"exponential-samples"}},
}
"""Per (algorithm, section): the parameters that make the tiny run measure that section's queries, and the
mechanism kinds it must then use.  Every algorithm accepting a section of :data:`TINY_WORKLOADS` needs one."""


def section_variants() -> list[tuple[str, str]]:
    """(algorithm, section) for every registered algorithm and every section of :data:`TINY_WORKLOADS` it
    accepts (from its spec, so a new algorithm or section is audited without editing a list)."""
    from dpsynth.algorithms import algorithm_names, get_algorithm

    return [(name, section) for name in algorithm_names() for section in sorted(get_algorithm(name).workload)
            if section in TINY_WORKLOADS]


def tiny_raw_config(algorithm: str, neighbouring: str = "replace-one", *, epsilon: float = 1.0,
                    n_epsilon: float = 0.2) -> dict:
    """Two categorical columns × three values; n public under replace-one, noisy under add-remove."""
    privacy: dict = {"epsilon": epsilon, "neighbouring": neighbouring}
    if neighbouring == "add-remove":
        privacy["n"] = {"epsilon": n_epsilon}
    marginals = [["a", "b"]] if algorithm == "dualquery" else [["a"], ["b"], ["a", "b"]]
    return {
        "schema": {"columns": {c: {"type": "categorical", "categories": ["x", "y", "z"]} for c in ("a", "b")}},
        "privacy": privacy,
        "algorithm": {"name": algorithm, "params": copy.deepcopy(TINY_PARAMS.get(algorithm, {}))},
        "workload": {"marginals": marginals},
    }


def tiny_neighbours(neighbouring: str = "replace-one", n: int = 30):
    """A worst-case pair (D, D′) as DataFrames: replace-one moves a row from (x, x) to (z, z); add-remove
    adds a (z, z) row.  D has no (z, z) row, so the changed cells are as far from each other as possible."""
    import pandas as pd

    a = np.array(["x", "y", "x", "y", "z", "x"] * (n // 6 + 1))[:n]
    b = np.array(["x", "x", "y", "y", "x", "z"] * (n // 6 + 1))[:n]
    d = pd.DataFrame({"a": a, "b": b})
    if neighbouring == "replace-one":
        d2 = d.copy()
        d2.loc[0, ["a", "b"]] = ["z", "z"]
    else:
        d2 = pd.concat([d, pd.DataFrame({"a": ["z"], "b": ["z"]})], ignore_index=True)
    return d, d2
