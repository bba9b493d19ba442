"""``mwem``: Multiplicative Weights + Exponential Mechanism (Hardt, Ligett & McSherry 2012).

Figure 1 of the paper, T rounds over a public set Q of linear queries,
starting from a model A₀ of total mass n:

1. *select* q_i ∈ Q with the exponential mechanism, score s(B, q) = |q(A_{i−1}) − q(B)|;
2. *measure* m_i = q_i(B) + noise with the Laplace mechanism;
3. *update* A_i(x) ∝ A_{i−1}(x)·exp(q_i(x)(m_i − q_i(A_{i−1}))/(2n)).

Query classes (``Q``):

* ``marginal_queries: cuboids`` (default; §3.3): each workload marginal is one
  candidate; its score is Σ_cells |A_c − B_c| (minus the number of cells with
  ``bias_cells: true``, the paper's heuristic, which costs no privacy); the
  whole marginal is measured at once, one Laplace draw per cell at histogram
  sensitivity, and all its cells are updated together.
* ``marginal_queries: cells``: every cell of every workload marginal is a
  counting query (Figure 1 literally).
* ranges (§3.1): the queries of ``workload.ranges`` (see :mod:`dpsynth.workload.ranges`),
  added to the candidates when configured; ``marginal_queries: none`` keeps only them.
* general linear queries (§2: q maps records to [−1, 1]): the queries of
  ``workload.linear`` (see :mod:`dpsynth.workload.linear`), scored by
  |q(A) − q(B)|, measured one at a time, and fitted by the Figure 1 update
  A(x) ∝ A(x)·exp(q(x)(m − q(A))/(2n)) with the query's own weights q(x).

Sensitivities follow the neighbouring relation: a cuboid's score and its cell
vector change by at most ``histogram_l1`` (1 add-remove, 2 replace-one); a
cell or range count and its score by 1; a linear query with q(x) ∈ [lo, hi]
by max(|lo|, |hi|) (add-remove, ≤ 1) or hi − lo (replace-one, ≤ 2): measured at
its own, scored at the largest over the workload's queries.  The exponential mechanism uses the largest
sensitivity of the candidate classes present.

§2.3.2 improvements, each a parameter: ``output: final`` (default) or
``average`` of A₁ … A_T; ``mw_passes`` extra passes of the MW rule over all
measurements so far after each round (0 = Figure 1); ``init: noisy`` spends
``init_fraction`` of ε on the 1-way marginals and starts from their product
(the paper's "noisy count for each element of the domain" is infeasible on
large domains: see docs/mwem.md); ``init: cells`` is that per-cell
initialisation, for domains within ``max_factor_cells`` (checked before any
data is read).  ``reselect: false`` (default) removes
measured queries from the candidates.

Budget (``accounting: pure``, default): ε after the row count is split into
``init_fraction``·ε for initialisation and T equal rounds; each round gives
``select_fraction`` of its share to selection and the rest to measurement
(the paper: ε/2T each).  ``accounting: zcdp`` does the same split in ρ (the
ρ of the configured (ε, δ)): selection is a bounded-range exponential
mechanism of ρ = ε²/8, measurements are Gaussian at L2 sensitivity.

Scalability (§4): the model is a :class:`~dpsynth.models.factored.FactoredModel`.
Before each selection, candidates whose measurement would create a factor of
more than ``max_factor_cells`` cells are removed; this depends only on the
public domain and on earlier (already private) selections, so it costs no
privacy, and the report says how many were removed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal
from dpsynth.algorithms.mwem_pgm import fit_pgm
from dpsynth.algorithms.spec import AlgorithmSpec
from dpsynth.errors import ConfigError
from dpsynth.models.factored import FactoredModel, Measurement, soft_threshold
from dpsynth.models.mixture import MixtureModel
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import (
    BasicComposition,
    ZCDPComposition,
    bounded_range_epsilon,
    split_budget,
    zcdp_available,
)
from dpsynth.privacy.mechanisms import (
    discrete_gaussian_mechanism,
    exponential_mechanism,
    gaussian_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)

__all__ = ["Params", "candidate_count", "check_workload", "composition", "parse_params", "preflight", "run"]

_P = "algorithm.params"


_VARIANT_DEFAULTS = {
    "paper": {"select_fraction": 0.5, "init_fraction": 0.2},  # iterations: effective_iterations
    "pgm": {"iterations": 20, "select_fraction": 0.1, "init_fraction": 0.1},
}


@dataclass(frozen=True, kw_only=True)
class Params:
    """MWEM settings; defaults chosen by the measurements in docs/mwem.md and docs/estimator.md.

    ``variant``: ``pgm`` (the estimator in the loop, :mod:`dpsynth.algorithms.mwem_pgm`) or
    ``paper`` (Figure 1 + §2.3.2 with the product-of-factors model); unset: ``pgm``, or
    ``paper`` when the workload has ranges or linear queries, ``marginal_queries`` is not ``cuboids`` or
    ``init`` is ``cells``.
    ``iterations``, ``select_fraction`` and ``init_fraction`` unset take the variant's
    default (:data:`_VARIANT_DEFAULTS`).  ``accounting: auto``: zCDP with Gaussian noise
    when δ > 0 and the variant is not ``paper``, else pure ε-DP with Laplace noise.
    ``model_cells``, ``round_iterations``, ``final_iterations``, ``sampling``: the
    ``pgm`` variant's model bound, mirror-descent steps per round and at the end, and
    sampling method.
    """

    variant: Literal["pgm", "paper"] | None = None
    iterations: int | None = None
    mw_passes: int = 20
    select_fraction: float | None = None
    init: Literal["uniform", "noisy", "cells"] = "noisy"
    init_fraction: float | None = None
    max_factor_cells: int = 250_000
    bias_cells: bool = False
    marginal_queries: Literal["cuboids", "cells", "none"] = "cuboids"
    output: Literal["final", "average"] = "final"
    reselect: bool = False
    accounting: Literal["auto", "pure", "zcdp"] = "auto"
    tolerance: float = 0.0
    clip: bool = True
    model_cells: int = 200_000
    round_iterations: int = 30
    final_iterations: int = 200
    sampling: Literal["iid", "systematic"] = "iid"

    def resolved(self, variant: str, accounting: str) -> Params:
        """A copy with the variant, its defaults and the accounting filled in."""
        fill = {k: v for k, v in _VARIANT_DEFAULTS[variant].items() if getattr(self, k) is None}
        return dataclasses.replace(self, variant=variant, accounting=accounting, **fill)
    noise: Literal["discrete", "continuous"] = "discrete"

    def __post_init__(self) -> None:
        for key in ("model_cells", "round_iterations", "final_iterations"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{_P}.{key}: must be >= 1, got {getattr(self, key)}")
        if self.iterations is not None and self.iterations < 1:
            raise ConfigError(f"{_P}.iterations: must be >= 1, got {self.iterations}")
        if self.mw_passes < 0:
            raise ConfigError(f"{_P}.mw_passes: must be >= 0, got {self.mw_passes}")
        if self.select_fraction is not None and not 0 < self.select_fraction < 1:
            raise ConfigError(f"{_P}.select_fraction: must be in (0, 1), got {self.select_fraction!r}")
        if self.init_fraction is not None and not 0 < self.init_fraction < 1:
            raise ConfigError(f"{_P}.init_fraction: must be in (0, 1), got {self.init_fraction!r}")
        if not self.tolerance >= 0:
            raise ConfigError(f"{_P}.tolerance: must be >= 0, got {self.tolerance!r}")
        if self.max_factor_cells < 1:
            raise ConfigError(f"{_P}.max_factor_cells: must be >= 1, got {self.max_factor_cells}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


DEFAULT_ITERATIONS = 20
"""Rounds T when ``iterations`` is not set (and there are at least as many candidate queries)."""


def effective_iterations(params: Params, candidates: int) -> int:
    """The number of rounds T: ``iterations`` when set; by default 20, or the number of candidate
    queries when there are fewer (without ``reselect`` each round measures a new query).  Only an
    explicit ``iterations`` larger than the candidates is refused (in :func:`fit`)."""
    if params.iterations is not None:
        return params.iterations
    return DEFAULT_ITERATIONS if params.reselect else max(1, min(DEFAULT_ITERATIONS, candidates))


def composition(params: Params, privacy):
    """Basic composition for ``accounting: pure``; zCDP (needs δ > 0) for ``accounting: zcdp``;
    ``auto``: zCDP when δ > 0 and the variant is not ``paper``."""
    if params.accounting == "auto":
        use_zcdp = privacy.delta > 0 and params.variant != "paper"
        return ZCDPComposition() if use_zcdp else BasicComposition()
    if params.accounting == "pure":
        return BasicComposition()
    if not privacy.delta > 0:
        raise ConfigError(f"{_P}.accounting: zcdp needs privacy.delta > 0 (e.g. 1e-6), got {privacy.delta!r}")
    return ZCDPComposition()


# ------------------------------------------------------------------ candidate queries
class _Cuboids:
    """One candidate per workload marginal (§3.3)."""

    kind = "cuboid"

    def __init__(self, ctx: AlgorithmContext, bias: bool):
        self.attrs = list(ctx.workload)
        self.true = ctx.counts.marginals(self.attrs)
        self.cells = np.array([t.size for t in self.true], dtype=float)
        self.bias = bias
        self.names = ["marginal(" + ", ".join(ctx.domain.names[a] for a in m) + ")" for m in self.attrs]
        self.l1 = ctx.neighbouring.histogram_l1
        self.l2 = ctx.neighbouring.histogram_l2

    def __len__(self) -> int:
        return len(self.attrs)

    def group_attrs(self) -> list[tuple[int, ...]]:
        return self.attrs

    def group_of(self) -> np.ndarray:
        return np.arange(len(self.attrs))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.attrs))
        for g in np.flatnonzero(groups):  # loop over marginals, vectorized over cells
            out[g] = np.abs(model.project(self.attrs[g]) - self.true[g]).sum()
        return out - self.cells if self.bias else out

    def query(self, i: int):
        return self.attrs[i], self.true[i], None, self.names[i]


class _Cells:
    """Every cell of every workload marginal is a counting query."""

    kind = "cell"

    def __init__(self, ctx: AlgorithmContext):
        self.attrs = list(ctx.workload)
        self.true = ctx.counts.marginals(self.attrs)
        sizes = np.array([t.size for t in self.true])
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.domain = ctx.domain
        self.l1 = self.l2 = ctx.neighbouring.count_sensitivity

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return self.attrs

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.attrs)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):
            lo, hi = self.offsets[g], self.offsets[g + 1]
            out[lo:hi] = np.abs(model.project(self.attrs[g]) - self.true[g]).reshape(-1)
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        attrs, true = self.attrs[g], self.true[g]
        cell = np.unravel_index(i - self.offsets[g], true.shape)
        q = np.zeros((1, *true.shape))
        q[(0, *cell)] = 1.0
        labels = [self.domain.columns[a].labels()[c] for a, c in zip(attrs, cell)]
        name = "cell(" + ", ".join(f"{self.domain.names[a]}={v}" for a, v in zip(attrs, labels)) + ")"
        return attrs, np.array([float(true[cell])]), q, name


class _Ranges:
    """Range queries from ``workload.ranges`` (§3.1)."""

    kind = "range"

    def __init__(self, ctx: AlgorithmContext, sets):
        self.sets = sets
        self.true = [rq.answers(ctx.counts.marginal(rq.attrs)) for rq in sets]
        self.offsets = np.concatenate([[0], np.cumsum([len(rq) for rq in sets])])
        self.domain = ctx.domain
        self.l1 = self.l2 = ctx.neighbouring.count_sensitivity

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return [rq.attrs for rq in self.sets]

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.sets)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):
            rq = self.sets[g]
            out[self.offsets[g] : self.offsets[g + 1]] = np.abs(rq.answers(model.project(rq.attrs)) - self.true[g])
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        rq, j = self.sets[g], i - self.offsets[g]
        q = rq.indicator(j, self.domain.shape(rq.attrs))[None]
        return rq.attrs, np.array([self.true[g][j]]), q, rq.describe(j, self.domain)


class _Linear:
    """General linear queries q: D → [−1, 1] from ``workload.linear`` (§2), grouped by support.

    Score |q(A) − q(B)| (Figure 1 step 1) at the largest sensitivity over the queries
    (:meth:`~dpsynth.privacy.neighbouring.Neighbouring.linear_sensitivity`), one Laplace (or Gaussian)
    draw per selected query at that query's own sensitivity (step 2), and the MW update with the query's weights q(x) (step 3).  Answers
    on a table of counts are integers only when every weight is −1, 0 or 1: otherwise the measurement
    uses continuous noise (integer noise on a non-integer answer would not hide it).
    """

    kind = "linear"

    def __init__(self, ctx: AlgorithmContext, linear):
        self.sets = linear.sets
        self.true = [s.answers(ctx.counts.marginal(s.attrs)) for s in self.sets]
        self.offsets = np.concatenate([[0], np.cumsum([len(s) for s in self.sets])])
        self.domain = ctx.domain
        self.low = np.concatenate([s.low for s in self.sets])
        self.high = np.concatenate([s.high for s in self.sets])
        nb = ctx.neighbouring
        self.sens = np.array([nb.linear_sensitivity(lo, hi) for lo, hi in zip(self.low, self.high)])
        self.l1 = self.l2 = float(self.sens.max())  # the score's sensitivity: the largest over the queries
        self.integral = np.concatenate([np.all(s.weights == np.rint(s.weights), axis=1) for s in self.sets])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return [s.attrs for s in self.sets]

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.sets)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):  # loop over supports, vectorized over their queries
            s = self.sets[g]
            out[self.offsets[g] : self.offsets[g + 1]] = np.abs(s.answers(model.project(s.attrs)) - self.true[g])
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        s, j = self.sets[g], i - self.offsets[g]
        q = s.weights[j].reshape((1, *self.domain.shape(s.attrs)))
        return s.attrs, np.array([self.true[g][j]]), q, f"linear({s.names[j]})"

    def value_range(self, i: int) -> tuple[float, float]:
        """Bounds of q(x) for query i: its answer lies in [n·low, n·high]."""
        return float(self.low[i]), float(self.high[i])

    def sensitivity_at(self, i: int) -> float:
        """Query i's own sensitivity (its measurement; the selection uses the largest, ``l1``)."""
        return float(self.sens[i])

    def integral_at(self, i: int) -> bool:
        """Query i has weights in {−1, 0, 1}: its answer on counts is an integer."""
        return bool(self.integral[i])


def _families(ctx: AlgorithmContext, params: Params) -> list:
    fams = []
    if params.marginal_queries == "cuboids":
        fams.append(_Cuboids(ctx, params.bias_cells))
    elif params.marginal_queries == "cells":
        fams.append(_Cells(ctx))
    sets = list(ctx.queries.ranges) if ctx.queries is not None else []
    if sets:
        fams.append(_Ranges(ctx, sets))
    if ctx.queries is not None and ctx.queries.linear is not None:
        fams.append(_Linear(ctx, ctx.queries.linear))
    if not fams:
        raise ConfigError(_NOTHING_TO_QUERY)
    return fams


def _value_range(fam, i: int) -> tuple[float, float]:
    """Bounds of a query's q(x): [0, 1] for counts (cuboid cells, cells, ranges)."""
    return fam.value_range(i) if hasattr(fam, "value_range") else (0.0, 1.0)


def _sensitivities(fam, i: int) -> tuple[float, float]:
    """(L1, L2) sensitivity of measuring query i: the class's, or a linear query's own (once it is selected,
    which query is measured is public, so its own bound applies)."""
    if hasattr(fam, "sensitivity_at"):
        own = fam.sensitivity_at(i)
        return own, own
    return fam.l1, fam.l2


def _integral(fam, i: int) -> bool:
    """Whether query i's answer on counts is an integer (counts are; linear queries with weights in {−1, 0, 1})."""
    return fam.integral_at(i) if hasattr(fam, "integral_at") else True


# ------------------------------------------------------------------------- budget
def _available(ctx: AlgorithmContext, zcdp: bool) -> float:
    """What the rounds may spend: ε left (pure) or ρ left of the configured (ε, δ) (zCDP)."""
    ledger = ctx.ledger
    if not zcdp:
        return ledger.remaining()
    avail = zcdp_available(ledger)
    if avail <= 0:
        raise ConfigError("privacy.epsilon: nothing left for mwem after the row count")
    return avail


class _Budget:
    """The per-stage privacy parameters: ε under pure accounting, ρ under zCDP."""

    def __init__(self, ctx: AlgorithmContext, params: Params, T: int):
        self.ctx, self.zcdp = ctx, params.accounting == "zcdp"
        self.discrete = params.noise == "discrete"
        d = len(ctx.domain)
        f_init = params.init_fraction if params.init != "uniform" else 0.0
        per_round = (1.0 - f_init) / T
        weights = [f_init] + [per_round * params.select_fraction, per_round * (1 - params.select_fraction)] * T
        if self.zcdp:
            avail = _available(ctx, True)
            parts = [avail * w for w in weights]
        else:
            parts = split_budget(ctx.ledger.remaining(), weights)
        if params.init == "cells":  # one measurement of the full table (§2.3.2)
            self.init = [parts[0]]
        else:
            self.init = split_budget(parts[0], [1.0] * d) if f_init > 0 else []
        self.select = parts[1::2]
        self.measure = parts[2::2]

    def select_epsilon(self, t: int) -> float:
        return bounded_range_epsilon(self.select[t]) if self.zcdp else self.select[t]

    def noisy(self, true, part: float, l1: float, l2: float, *, rng, stage: str, measured: str,
              integral: bool = True):
        """Laplace (pure) or Gaussian (zCDP) measurement; returns (noisy values, noise scale).

        ``noise: discrete`` (default): the true answers are integer counts, measured with integer noise
        (discrete Laplace, or the discrete Gaussian of Canonne, Kamath & Steinke 2020 under zCDP) at the
        same scale and cost; ``continuous``: real-valued Laplace or Gaussian noise.  ``integral: false``
        (answers that need not be integers, e.g. linear queries with fractional weights): continuous noise.
        """
        discrete = self.discrete and integral
        if discrete:
            true = np.rint(np.asarray(true, dtype=float)).astype(np.int64)  # exact integer counts
        if self.zcdp:
            mech = discrete_gaussian_mechanism if discrete else gaussian_mechanism
            noisy = mech(true, l2_sensitivity=l2, rho=part, ledger=self.ctx.ledger, rng=rng, stage=stage,
                         measured=measured)
            return np.asarray(noisy, dtype=float), l2 / math.sqrt(2.0 * part)
        mech = geometric_mechanism if discrete else laplace_mechanism
        noisy = mech(true, sensitivity=l1, epsilon=part, ledger=self.ctx.ledger, rng=rng, stage=stage,
                     measured=measured)
        return np.asarray(noisy, dtype=float), l1 / part

    def describe(self) -> dict:
        key = "rho" if self.zcdp else "epsilon"
        return {
            f"init_{key}_total": float(sum(self.init)),
            f"select_{key}_per_round": self.select[0],
            f"measure_{key}_per_round": self.measure[0],
        }


# ---------------------------------------------------------------------------- run
def _initial_model(ctx, params, budget, *, rng):
    """A₀: uniform, the product of the noisy 1-way marginals, or the noisy full table (charged)."""
    sizes, n = ctx.domain.sizes, ctx.n
    if params.init == "uniform":
        return FactoredModel(sizes, n, max_factor_cells=params.max_factor_cells), [], []
    h1, h2 = ctx.neighbouring.histogram_l1, ctx.neighbouring.histogram_l2
    if params.init == "cells":
        return _cells_model(ctx, params, budget, rng=rng)
    released, measurements, starts = [], [], []
    for a, part in enumerate(budget.init):  # loop over columns
        noisy, scale = budget.noisy(ctx.counts.marginal((a,)), part, h1, h2, rng=rng, stage="mwem-init",
                                    measured=f"marginal({ctx.domain.names[a]})")
        noisy = np.asarray(noisy, dtype=float)
        released.append(NoisyMarginal((a,), noisy, scale, "gaussian" if budget.zcdp else "laplace"))
        m = _measurement((a,), noisy, None, scale, params, n, budget.zcdp)
        measurements.append(m)
        # Deviations from uniform within the tolerance are treated as noise (as in the MW step).
        uniform = n / sizes[a]
        starts.append(uniform + soft_threshold(m.values - uniform, m.tolerance))
    model = FactoredModel.independent(sizes, n, starts, max_factor_cells=params.max_factor_cells)
    return model, released, measurements


def _cells_model(ctx, params, budget, *, rng):
    """§2.3.2's initialisation: "a noisy count for each element of the domain" — one Laplace (or
    Gaussian) measurement of the full contingency table at histogram sensitivity; A₀ is that table,
    clipped at 0, normalised to n and mixed with weight 10⁻³ of uniform (as the 1-way start), as one
    factor over all attributes.  :func:`preflight` guarantees the domain fits ``max_factor_cells``."""
    sizes, n = ctx.domain.sizes, ctx.n
    every = tuple(range(len(sizes)))
    noisy, scale = budget.noisy(ctx.counts.marginal(every), budget.init[0], ctx.neighbouring.histogram_l1,
                                ctx.neighbouring.histogram_l2, rng=rng, stage="mwem-init",
                                measured=f"full table ({ctx.domain.cells()} cells)")
    noisy = np.asarray(noisy, dtype=float)
    m = _measurement(every, noisy, None, scale, params, n, budget.zcdp)
    cells = noisy.size
    start = np.clip(n / cells + soft_threshold(m.values - n / cells, m.tolerance), 0.0, None).reshape(-1)
    p = start / start.sum() if start.sum() > 0 else np.full(cells, 1.0 / cells)
    model = FactoredModel(sizes, n, max_factor_cells=params.max_factor_cells)
    index = model.merge(every)  # merge first: it replaces model.factors
    factor = model.factors[index]
    factor.probs = ((1.0 - _MIX) * p + _MIX / cells).reshape(sizes)
    factor.changed()
    released = [NoisyMarginal(every, noisy, scale, "gaussian" if budget.zcdp else "laplace")]
    return model, released, [m]


def preflight(domain, marginals, params: Params) -> None:
    """``init: cells`` needs the full domain in one factor: refuse it from the schema alone."""
    if params.init == "cells" and domain.cells() > params.max_factor_cells:
        raise ConfigError(
            f"{_P}.init: 'cells' measures every cell of the full domain ({domain.cells()} cells), more than "
            f"max_factor_cells ({params.max_factor_cells}); use init: noisy (the 1-way marginals) or raise "
            "max_factor_cells"
        )


_PGM_MARGINALS_ONLY = (f"{_P}.variant: pgm measures marginals only; use variant: paper with workload.ranges "
                       "or workload.linear")


def check_workload(domain, workload, params: Params) -> None:
    """Refuse, from the configuration alone, what MWEM could never run: ranges or linear queries with
    ``variant: pgm``; more ``iterations`` than candidate queries without ``reselect`` (``paper``); a
    linear query whose support exceeds ``max_factor_cells`` (measuring it would need a factor over all
    its columns)."""
    if params.variant == "pgm" and _has_queries(workload):
        raise ConfigError(_PGM_MARGINALS_ONLY)
    if workload is None:
        return
    if variant_of(params, _has_queries(workload)) == "paper":
        candidates = candidate_count(domain, workload, params)
        if candidates == 0:
            raise ConfigError(_NOTHING_TO_QUERY)
        if params.iterations is not None and not params.reselect and params.iterations > candidates:
            raise ConfigError(_too_many_rounds(params.iterations, candidates))
    if workload.linear is None:
        return
    for s in workload.linear.sets:  # loop over supports (public)
        cells = domain.cells(s.attrs)
        if cells > params.max_factor_cells:
            cols = ", ".join(domain.names[a] for a in s.attrs)
            raise ConfigError(
                f"workload.linear: query {s.names[0]!r} depends on columns ({cols}) with {cells} cells, more than "
                f"{_P}.max_factor_cells ({params.max_factor_cells}); MWEM could never measure it (raise "
                "max_factor_cells or write the query over fewer columns)"
            )


def candidate_count(domain, workload, params: Params) -> int:
    """Candidate queries of the ``paper`` variant, from the configuration: one per workload marginal
    (``cuboids``) or per cell (``cells``), plus the range and linear queries."""
    marginals = {"cuboids": len(workload.marginals), "none": 0}.get(params.marginal_queries)
    if marginals is None:
        marginals = sum(domain.cells(m) for m in workload.marginals)
    linear = len(workload.linear) if workload.linear is not None else 0
    return marginals + sum(len(rq) for rq in workload.ranges) + linear


_NOTHING_TO_QUERY = (f"{_P}.marginal_queries: is 'none' but neither workload.ranges nor workload.linear is set; "
                     "there is nothing to query")


def _too_many_rounds(T: int, candidates: int) -> str:
    return (f"{_P}.iterations: {T} rounds but only {candidates} candidate queries "
            "(lower iterations, leave it unset, or set reselect: true)")


_MIX = 1e-3
"""Weight of the uniform distribution in the full-table start (as the 1-way start's, models.factored)."""


def _measurement(attrs, values, queries, scale, params, n, gaussian, bounds=(0.0, 1.0)) -> Measurement:
    """What the MW step fits: the noisy values clipped to [n·low, n·high] (``clip``; ``bounds`` =
    (low, high) of q(x): [0, n] for counts), with a tolerance of ``tolerance`` noise standard
    deviations (Laplace: sqrt(2)·scale; Gaussian: scale)."""
    if params.clip:
        values = np.clip(values, bounds[0] * n, bounds[1] * n)
    sd = scale if gaussian else math.sqrt(2.0) * scale
    return Measurement(attrs, values, queries, params.tolerance * sd)


def _allowed(fams, model, measured, capped, reselect):
    """Per family: mask of candidates that may be selected this round (public information only)."""
    masks = []
    for fi, f in enumerate(fams):
        fits = np.array([not model.would_exceed(a) for a in f.group_attrs()])[f.group_of()]
        capped[fi] |= ~fits
        masks.append(fits if reselect else fits & ~measured[fi])
    return masks


@dataclass
class Fit:
    """The result of the MWEM rounds before sampling (for benchmarks and library users).

    ``model`` is the final A_T; with ``output: average`` ``snapshots`` holds A₁ … A_T and
    :meth:`project` averages their marginals.  ``released`` are the noisy marginals
    (1-way initialisation and measured cuboids); ``details`` and ``warnings`` go to the report.
    """

    model: FactoredModel
    snapshots: list
    released: list
    details: dict
    warnings: list

    def project(self, attrs) -> np.ndarray:
        """Counts of the output distribution's marginal over ``attrs``."""
        if not self.snapshots:
            return self.model.project(attrs)
        return sum(s.project(attrs) for s in self.snapshots) / len(self.snapshots)

    def sample(self, rows: int, *, rng: np.random.Generator) -> np.ndarray:
        return _sample(self.model, self.snapshots, rows, rng=rng)

    @property
    def output(self):
        """The output distribution as a released model: A_T, or the uniform mixture of A₁ … A_T."""
        return MixtureModel(self.snapshots) if self.snapshots else self.model


def variant_of(params: Params, has_queries: bool) -> str:
    """The variant that runs: ``params.variant``, or ``pgm`` unless ranges, linear or cell queries need
    ``paper`` (``has_queries``: the workload has ranges or linear queries)."""
    if params.variant is not None:
        return params.variant
    return "paper" if has_queries or params.marginal_queries != "cuboids" or params.init == "cells" else "pgm"


def _has_queries(workload) -> bool:
    """The workload has query classes only the ``paper`` variant measures (ranges, linear queries)."""
    return workload is not None and (bool(list(workload.ranges)) or workload.linear is not None)


def resolve(ctx: AlgorithmContext, params: Params) -> Params:
    """The parameters of this run: variant (:func:`variant_of`), its defaults, and the accounting
    the ledger was built with."""
    variant = variant_of(params, _has_queries(ctx.queries))
    if variant == "pgm" and params.marginal_queries != "cuboids":
        raise ConfigError(f"{_P}.marginal_queries: variant pgm measures whole marginals (cuboids); "
                          "use variant: paper for cells or ranges")
    zcdp = isinstance(ctx.ledger.composition, ZCDPComposition)
    return params.resolved(variant, "zcdp" if zcdp else "pure")


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    """MWEM release: :func:`fit` (``paper``) or :func:`~dpsynth.algorithms.mwem_pgm.fit_pgm` (``pgm``);
    the pipeline samples ``ctx.rows`` rows from the released model."""
    params = resolve(ctx, params)
    if params.variant == "pgm":
        if _has_queries(ctx.queries):
            raise ConfigError(_PGM_MARGINALS_ONLY)
        zcdp = params.accounting == "zcdp"
        model, released, details, warnings = fit_pgm(ctx, params, zcdp=zcdp, total_budget=_available(ctx, zcdp),
                                                     rng=rng)
        return AlgorithmOutput(model=model, marginals=released, details=details, warnings=warnings)
    result = fit(ctx, params, rng=rng)
    return AlgorithmOutput(model=result.output, marginals=result.released, details=result.details,
                           warnings=result.warnings)


def fit(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> Fit:
    """The T rounds of select / measure / update (Figure 1 with the §2.3.2 options)."""
    params = resolve(ctx, dataclasses.replace(params, variant="paper"))
    fams = _families(ctx, params)
    total_candidates = sum(len(f) for f in fams)
    T = effective_iterations(params, total_candidates)
    if not params.reselect and T > total_candidates:
        raise ConfigError(_too_many_rounds(T, total_candidates))
    budget = _Budget(ctx, params, T)
    model, released, measurements = _initial_model(ctx, params, budget, rng=rng)
    score_sens = max(f.l1 for f in fams)
    measured = [np.zeros(len(f), dtype=bool) for f in fams]
    capped = [np.zeros(len(f), dtype=bool) for f in fams]
    snapshots, selected, warnings = [], [], []
    for t in range(T):  # loop over rounds
        masks = _allowed(fams, model, measured, capped, params.reselect)
        where = [(fi, np.flatnonzero(m)) for fi, m in enumerate(masks)]
        if sum(len(ix) for _, ix in where) == 0:
            warnings.append(f"mwem stopped after {t} of {T} rounds: no candidate query left "
                            "under max_factor_cells; the rest of the budget was not spent")
            break
        scores = np.concatenate([
            fams[fi].scores(model, _groups_needed(fams[fi], ix))[ix] for fi, ix in where
        ])
        pick = exponential_mechanism(scores, sensitivity=score_sens, epsilon=budget.select_epsilon(t),
                                     ledger=ctx.ledger, rng=rng, stage="mwem-select",
                                     measured=f"round {t + 1}: one of {scores.size} candidate queries")
        fi, i = _locate(where, pick)
        measured[fi][i] = True
        attrs, true, queries, name = fams[fi].query(i)
        l1, l2 = _sensitivities(fams[fi], i)
        noisy, scale = budget.noisy(true, budget.measure[t], l1, l2, rng=rng,
                                    stage="mwem-measure", measured=name,
                                    integral=_integral(fams[fi], i))
        values = np.asarray(noisy, dtype=float).reshape(np.shape(true))
        if queries is None:
            released.append(NoisyMarginal(tuple(attrs), values, scale, "gaussian" if budget.zcdp else "laplace"))
        m = _measurement(attrs, values, queries, scale, params, ctx.n, budget.zcdp, _value_range(fams[fi], i))
        model.mw_update(m)  # Figure 1, step 3
        measurements.append(m)
        model.mw_passes(measurements, params.mw_passes)  # §2.3.2
        selected.append(name)
        if params.output == "average":
            snapshots.append(model.copy())
        ctx.progress("mwem", t + 1, T)
    details = _details(ctx, params, fams, budget, model, selected, capped, score_sens)
    details["iterations"] = T
    if params.iterations is None and T < DEFAULT_ITERATIONS:
        details["iterations_note"] = (
            f"iterations not set: {T} rounds, one per candidate query (fewer than the default {DEFAULT_ITERATIONS})"
        )
    return Fit(model, snapshots, released, details, warnings)


def _groups_needed(fam, ix: np.ndarray) -> np.ndarray:
    need = np.zeros(len(fam.group_attrs()), dtype=bool)
    need[fam.group_of()[ix]] = True
    return need


def _locate(where, pick: int) -> tuple[int, int]:
    for fi, ix in where:
        if pick < len(ix):
            return fi, int(ix[pick])
        pick -= len(ix)
    raise IndexError("selection out of range")  # unreachable: pick < total candidates


def _sample(model: FactoredModel, snapshots: list, rows: int, *, rng) -> np.ndarray:
    """Rows from the final model, or from the uniform mixture of A₁ … A_T (``output: average``)."""
    if not snapshots:
        return model.sample(rows, rng=rng)
    per = rng.multinomial(rows, np.full(len(snapshots), 1.0 / len(snapshots)))
    codes = np.concatenate([s.sample(k, rng=rng) for s, k in zip(snapshots, per)])
    return codes[rng.permutation(rows)]


def _details(ctx, params, fams, budget, model, selected, capped, score_sens) -> dict:
    names = ctx.domain.names
    return {
        "query_classes": {f.kind: len(f) for f in fams},
        "rounds": len(selected),
        "selected": selected,
        "score_sensitivity": score_sens,
        "init": params.init,
        "mw_passes": params.mw_passes,
        "output": params.output,
        "reselect": params.reselect,
        "bias_cells": params.bias_cells,
        "accounting": params.accounting,
        **budget.describe(),
        "max_factor_cells": params.max_factor_cells,
        "candidates_removed_by_factor_cap": int(sum(c.sum() for c in capped)),
        "factor_cap_note": (
            "candidates whose measurement would need a factor larger than max_factor_cells were removed "
            "before selection; this uses only public information (the domain and earlier selections) "
            "and costs no privacy"
        ),
        "factor_groups": [[names[a] for a in g] for g in model.groups if len(g) > 1],
        "largest_factor_cells": model.largest_factor_cells(),
        "synthesis": "rows sampled factor by factor from the " + (
            "final model" if params.output == "final" else "average of the models of all rounds"),
    }


SPEC = AlgorithmSpec(
    name="mwem",
    summary="Multiplicative weights + exponential mechanism (Hardt, Ligett, McSherry 2012)",
    params=Params,
    run=run,
    composition=composition,
    workload=frozenset({"marginals", "ranges", "linear"}),
    audit_params=({}, {"accounting": "zcdp"}, {"variant": "paper"}, {"variant": "paper", "accounting": "zcdp"},
                  {"marginal_queries": "cells"}, {"output": "average", "variant": "paper"},
                  {"init": "cells", "variant": "paper"},
                  {"noise": "continuous"}, {"noise": "continuous", "variant": "paper"},
                  {"noise": "continuous", "accounting": "zcdp", "variant": "paper"}),
    preflight=preflight,
    check_workload=check_workload,
    needs_delta=lambda raw: raw.get("accounting") == "zcdp",
)
