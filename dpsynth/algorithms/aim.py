"""``aim``: adaptive and iterative selection of marginals on the noise-aware graphical model.

The ideas are those of AIM (McKenna, Mullins, Sheldon & Miklau 2022, "AIM: An Adaptive and Iterative
Mechanism for Differentially Private Synthetic Data", §3–4), written here in our own terms on
dpsynth's estimator (:mod:`dpsynth.models.estimation`) and mechanisms:

* **start**: every 1-way marginal of the domain is measured, each with the noise of one round;
* **candidates**: the workload marginals and all their subsets (the downward closure), each with a
  *workload weight* w_r = Σ_{s ∈ W} |r ∩ s| (how many workload attributes it touches: a marginal shared by
  many workload marginals is worth more);
* **model-size limit**: a candidate is allowed in a round only while the model with it stays within
  (share of the budget spent so far) × ``model_cells`` cells (upper bound from the current junction tree,
  :func:`~dpsynth.algorithms.mwem_pgm.merged_cells`: public, it depends on the domain and on earlier
  selections), so the model grows as the budget does and the last rounds may afford the largest cliques;
* **quality score** q(r) = w_r · (‖M_r(D) − M_r(p̂)‖₁ − sqrt(2/π)·σ·n_r): the weighted L1 error of the current
  model p̂ on r, minus the error that measuring r with noise of deviation σ over its n_r cells would leave.
  Adding, removing or replacing one row moves ‖M_r(D) − M_r(p̂)‖₁ by at most ``histogram_l1`` (the model is
  public), so the score's sensitivity is max_r w_r · ``histogram_l1`` over the allowed candidates;
* **select** r with the exponential mechanism at that sensitivity, **measure** M_r(D) with Gaussian noise
  (zCDP) or Laplace noise (pure ε), **refit** the model to all measurements so far (warm start);
* **budget annealing**: the nominal number of rounds is ``rounds_per_column`` × d (AIM's 16·d); the first
  round's part is what that many rounds would get.  When the refitted model moved by less than the noise
  on the measured marginal (‖M_r(p̂_new) − M_r(p̂_old)‖₁ ≤ sqrt(2/π)·σ·n_r: both are model outputs), later
  rounds get 4× the ρ (σ halves, the selection's ε doubles) or 2× the ε under pure accounting.  When what
  is left cannot pay for two more rounds, the next round takes all of it, so the budget is used exactly.

Accounting: ``accounting: auto`` is zCDP (Gaussian measurements of ρ each, the exponential mechanism as
bounded range, ρ = ε²/8) when δ > 0, else pure ε-DP (Laplace measurements, ε-DP exponential mechanism,
basic composition).  The per-round parts are handed out by
:class:`~dpsynth.privacy.allocation.RoundBudget`; every draw goes through a mechanism of
:mod:`dpsynth.privacy.mechanisms`, which charges the ledger first.

Every choice of the loop (the candidates allowed, the round's budget, when to stop) is a function of
public information and of mechanism outputs (the model is fitted to noisy measurements only), so the ledger
holds exactly: d initial measurements, then per round one exponential mechanism and one measurement.
Measurements: docs/aim.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal, SelectionLog
from dpsynth.algorithms.compression import bins_from_noisy
from dpsynth.algorithms.mwem_pgm import _label, _log_round, _measure, model_bounds, projections
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.models.base import Model
from dpsynth.models.estimation import LinearMeasurement, estimate
from dpsynth.models.junction import ModelTooLarge
from dpsynth.models.synthesis import signal_priority
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import BasicComposition, ZCDPComposition, zcdp_available, zcdp_to_approx_dp
from dpsynth.privacy.allocation import RoundBudget
from dpsynth.privacy.mechanisms import exponential_mechanism

__all__ = ["SPEC", "Params", "budget_plan", "candidates", "composition", "first_deviation", "parse_params", "run",
           "weights"]

_P = "algorithm.params"
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


@dataclass(frozen=True, kw_only=True)
class Params:
    """AIM settings (module docstring).

    ``rounds_per_column``: the nominal rounds are this × d (the first round's part is 1/that of the budget);
    ``select_fraction``: each round's share of the selection (the rest measures); ``model_cells``: the model's
    bound once the whole budget is spent (earlier rounds: that times the share spent); ``round_iterations`` /
    ``final_iterations``: mirror-descent steps per round and at the end; ``accounting``: ``auto`` (zCDP when
    δ > 0), ``pure`` or ``zcdp``; ``noise``: ``discrete`` (integer noise on the integer counts) or
    ``continuous``; ``sampling``: ``iid`` or ``systematic``; ``compress``: values whose noisy 1-way count is
    below 3 noise deviations share one bin in every later measurement (MST's compression, as ``mwem``'s;
    :mod:`dpsynth.algorithms.compression`).
    """

    rounds_per_column: int = 16
    select_fraction: float = 0.1
    init_fraction: float | None = None
    model_cells: int = 200_000
    round_iterations: int = 30
    final_iterations: int = 200
    accounting: Literal["auto", "pure", "zcdp"] = "auto"
    noise: Literal["discrete", "continuous"] = "discrete"
    sampling: Literal["iid", "systematic"] = "iid"
    compress: bool = False

    def __post_init__(self) -> None:
        for key in ("rounds_per_column", "model_cells", "round_iterations", "final_iterations"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{_P}.{key}: must be >= 1, got {getattr(self, key)!r}")
        if self.init_fraction is not None and not 0 < self.init_fraction < 1:
            raise ConfigError(f"{_P}.init_fraction: must be in (0, 1), got {self.init_fraction!r}")
        if not 0 < self.select_fraction < 1:
            raise ConfigError(f"{_P}.select_fraction: must be in (0, 1), got {self.select_fraction!r}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


def composition(params: Params, privacy):
    """zCDP for ``accounting: zcdp`` (needs δ > 0) and for ``auto`` when δ > 0; basic composition otherwise."""
    if params.accounting == "pure" or (params.accounting == "auto" and not privacy.delta > 0):
        return BasicComposition()
    if not privacy.delta > 0:
        raise ConfigError(f"{_P}.accounting: zcdp needs privacy.delta > 0 (e.g. 1e-6), got {privacy.delta!r}")
    return ZCDPComposition()


def preflight(domain, marginals, params: Params) -> None:
    """Refuse, before any data is read, a ``model_cells`` bound below one cell per value of every column."""
    floor = sum(domain.sizes)
    if floor > params.model_cells:
        raise ModelTooLarge(f"{_P}.model_cells: {params.model_cells} is below the {floor} cells a model needs "
                            "(one per value of every column); raise it")


def candidates(workload) -> list[tuple[int, ...]]:
    """The workload marginals and all their non-empty subsets (sorted tuples, deduplicated, in a fixed order)."""
    out: dict[tuple[int, ...], None] = {}
    for m in workload:
        m = tuple(sorted(m))
        for k in range(1, len(m) + 1):
            for sub in itertools.combinations(m, k):
                out[sub] = None
    return list(out)


def weights(cands, workload) -> np.ndarray:
    """Workload weight of each candidate r: Σ_{s ∈ workload} |r ∩ s| (public)."""
    sets = [set(m) for m in workload]
    return np.array([sum(len(set(r) & s) for s in sets) for r in cands], dtype=float)


def _zcdp(ctx: AlgorithmContext) -> bool:
    return isinstance(ctx.ledger.composition, ZCDPComposition)


def _available(ctx: AlgorithmContext, zcdp: bool) -> float:
    """What the algorithm may spend: ρ left of the configured (ε, δ) (zCDP) or ε left (pure)."""
    avail = zcdp_available(ctx.ledger) if zcdp else ctx.ledger.remaining()
    if avail <= 0:
        raise ConfigError("privacy.epsilon: nothing left for aim after the row count")
    return avail


def _nominal_rounds(params: Params, d: int) -> int:
    return params.rounds_per_column * d


def _budget(params: Params, d: int, total: float, *, zcdp: bool, rounds: bool = True) -> RoundBudget:
    """The round budget: the d initial 1-way measurements get the measurement part of a nominal round each
    (or ``init_fraction``), the nominal rounds share the rest; without candidates (``rounds`` false, an empty
    workload) the 1-way marginals get everything."""
    nominal = _nominal_rounds(params, d)
    init_fraction = params.init_fraction
    if init_fraction is None:
        init_fraction = min(d * (1.0 - params.select_fraction) / nominal, 0.5)
    if not rounds:
        init_fraction = 1.0 - 1e-12
    return RoundBudget(total, init_fraction=init_fraction, iterations=nominal,
                       select_fraction=params.select_fraction, zcdp=zcdp)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`run` charges: the d 1-way marginals at a fixed part each, then rounds whose number and parts
    are chosen at run time (annealing), their selections within ``select_fraction`` of what the rounds share
    and their measurements within the rest.  Under zCDP a stage's ε is bounded from its ρ by Cauchy–Schwarz
    over at most (nominal rounds + 1) rounds (every round but the last takes at least the first round's part)."""
    zcdp = _zcdp(ctx)
    d = len(ctx.domain)
    budget = _budget(params, d, _available(ctx, zcdp), zcdp=zcdp, rounds=bool(ctx.workload))
    delta = ctx.ledger.delta if zcdp else 0.0
    unit = "rho" if zcdp else "epsilon"
    each = budget.init_share(d)
    init_eps = zcdp_to_approx_dp(each, delta) if zcdp else each
    stages = [PlannedStage(stage="aim-init", charges=d, total=init_eps * d, epsilon=(init_eps,) * d, delta=delta,
                           text=f"{unit} {each * d:.4g} over the {d} 1-way marginals ({each:.4g} each)")]
    if not ctx.workload:
        return stages
    first_select, first_measure, _ = _budget(params, d, _available(ctx, zcdp), zcdp=zcdp).take()
    select_total = budget.left * params.select_fraction
    measure_total = budget.left * (1 - params.select_fraction)
    if zcdp:
        most = _nominal_rounds(params, d) + 1
        select_eps = math.sqrt(8.0 * select_total * most)
        measure_eps = measure_total + 2.0 * math.sqrt(measure_total * most * math.log(1.0 / delta))
    else:
        select_eps, measure_eps = select_total, measure_total
    rounds = (f"up to {_nominal_rounds(params, d)} rounds, {unit} {{first:.4g}} each at first, more once the "
              f"model stops improving; {unit} {{total:.4g}} in all")
    selector = "bounded-range exponential mechanism" if zcdp else "exponential mechanism"
    return stages + [
        PlannedStage(stage="aim-select", charges=None, total=select_eps, delta=0.0, per_round=True,
                     text=rounds.format(first=first_select, total=select_total) + f" ({selector})"),
        PlannedStage(stage="aim-measure", charges=None, total=measure_eps, delta=delta, per_round=True,
                     text=rounds.format(first=first_measure, total=measure_total)
                     + (" (Gaussian noise)" if zcdp else " (Laplace noise)")),
    ]


def first_deviation(ctx: AlgorithmContext, params: Params) -> float:
    """Standard deviation of the noise on one cell measured in the first round (histogram sensitivity), from
    the budget a run would have: for ``dpsynth plan``."""
    zcdp = _zcdp(ctx)
    budget = _budget(params, len(ctx.domain), _available(ctx, zcdp), zcdp=zcdp, rounds=bool(ctx.workload))
    nb = ctx.neighbouring
    return budget.deviation(budget.take()[1], nb.histogram_l1, nb.histogram_l2)


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    """The release: initial 1-way marginals, then the adaptive rounds, then a final fit (module docstring)."""
    zcdp = _zcdp(ctx)
    sizes = tuple(ctx.domain.sizes)
    d = len(sizes)
    nb = ctx.neighbouring
    discrete = params.noise == "discrete"
    noise: Literal["gaussian", "laplace"] = "gaussian" if zcdp else "laplace"
    budget = _budget(params, d, _available(ctx, zcdp), zcdp=zcdp, rounds=bool(ctx.workload))
    start = budget.init_part + budget.left  # what the release may spend (public)
    released: list[NoisyMarginal] = []
    measurements: list[LinearMeasurement] = []
    each = budget.init_share(d)
    sd = budget.deviation(each, nb.histogram_l1, nb.histogram_l2)
    for a in range(d):  # loop over columns
        values = np.asarray(_measure(ctx, ctx.counts.marginal((a,)), each, zcdp=zcdp, discrete=discrete, rng=rng,
                                     stage="aim-init", measured=_label(ctx, (a,))), dtype=float)
        released.append(NoisyMarginal((a,), values, sd if zcdp else sd / math.sqrt(2.0), noise))
        measurements.append(LinearMeasurement((a,), values, sd))
    bins = bins_from_noisy([m.values for m in measurements], sd) if params.compress else None  # released only
    measurements.extend(ctx.prior)  # a discovery's released histograms (post-processing)
    model = estimate(sizes, measurements, iterations=params.round_iterations, total=ctx.n,
                     max_cells=params.model_cells).model
    cands = candidates(ctx.workload)
    weight = weights(cands, ctx.workload)
    true = {c: ctx.counts.marginal(c) for c in cands}
    if bins is not None:  # the measured (binned) marginals: rare values share a bin (post-processing of 1-ways)
        true = {c: bins.apply(v, c) for c, v in true.items()}

    def fold(table, c):  # a model's marginal as measured
        return table if bins is None else bins.apply(table, c)
    cells = np.array([true[c].size for c in cands], dtype=float)
    selected: list[str] = []
    grown = t = binned = 0
    limits: list[int] = []
    bounds: dict = {}
    log = SelectionLog()
    while cands:  # loop over rounds (ends when the budget is spent)
        sel_part, meas_part, last = budget.take()
        sd = budget.deviation(meas_part, nb.histogram_l1, nb.histogram_l2)
        spent_share = 1.0 - budget.left / start  # after this round: public
        limit = max(int(spent_share * params.model_cells), model.cells)
        allowed = [i for i, b in enumerate(model_bounds(model, cands, bounds)) if b <= limit]
        limits.append(limit)
        full = projections(model, [cands[i] for i in allowed])
        est = [fold(e, cands[i]) for e, i in zip(full, allowed)]
        w = weight[allowed]
        errors = np.array([np.abs(true[cands[i]] - e).sum() for i, e in zip(allowed, est)])
        scores = w * (errors - _SQRT_2_PI * sd * cells[allowed])
        select_eps = budget.select_epsilon(sel_part)
        pick = exponential_mechanism(scores, sensitivity=float(w.max()) * nb.histogram_l1,
                                     epsilon=select_eps, ledger=ctx.ledger, rng=rng,
                                     stage="aim-select", measured=f"round {t + 1}: one of {scores.size} marginals")
        attrs = cands[allowed[pick]]
        values = np.asarray(_measure(ctx, true[attrs], meas_part, zcdp=zcdp, discrete=discrete, rng=rng,
                                     stage="aim-measure", measured=_label(ctx, attrs)), dtype=float)
        _log_round(log, [cands[i] for i in allowed], est, bins, select_eps, float(w.max()) * nb.histogram_l1,
                   float(np.abs(values - est[pick]).sum()), values.size, noise, sd if zcdp else sd / math.sqrt(2.0),
                   sd, weights=w, chosen_weight=float(w[pick]), full=full)
        query = bins.query(attrs, sizes) if bins is not None and bins.binned(attrs) else None
        if query is None:  # a binned measurement is in the ledger and the model, not a per-value marginal
            released.append(NoisyMarginal(attrs, values, sd if zcdp else sd / math.sqrt(2.0), noise))
        else:
            binned += 1
        measurements.append(LinearMeasurement(attrs, values, sd, query))
        selected.append(_label(ctx, attrs))
        model = estimate(sizes, measurements, iterations=params.round_iterations, warm=model, total=ctx.n,
                         max_cells=params.model_cells).model
        t += 1
        ctx.progress("aim", t, _nominal_rounds(params, d))
        if last:
            break
        if np.abs(fold(model.project(attrs), attrs) - est[pick]).sum() <= _SQRT_2_PI * sd * true[attrs].size:
            budget.grow()
            grown += 1
    final = estimate(sizes, measurements, iterations=params.final_iterations, warm=model, total=ctx.n,
                     max_cells=params.model_cells, priority=signal_priority(measurements))
    final.model.sampling = params.sampling
    details = {
        "accounting": "zcdp" if zcdp else "pure",
        "rounds": len(selected),
        "nominal_rounds": _nominal_rounds(params, d),
        "selected": selected,
        "candidates": len(cands),
        "budget_increases": grown,
        "model_cells_bound": params.model_cells,
        "size_limit_first_last": [limits[0], limits[-1]] if limits else [],
        "score_sensitivity": float(weight.max()) * nb.histogram_l1 if cands else None,
        "binned_values": {} if bins is None else bins.describe(ctx.domain.names),
        "binned_measurements": binned,
        "synthesis": {**final.details, "sampling": params.sampling,
                      "model_cliques": [[ctx.domain.names[a] for a in c] for c in final.model.cliques if len(c) > 1]},
    }
    resolved = params if params.accounting != "auto" else dataclasses.replace(
        params, accounting="zcdp" if zcdp else "pure")
    return AlgorithmOutput(model=cast(Model, final.model), marginals=released, details=details, params=resolved,
                           selection=log)


def attrs_cells(sizes, attrs) -> int:
    """Cells of the marginal over ``attrs`` (public)."""
    return math.prod(sizes[a] for a in attrs)


SPEC = AlgorithmSpec(
    name="aim",
    summary="Adaptive marginal selection on the graphical model, budget annealing (McKenna et al. 2022, AIM)",
    params=Params,
    run=run,
    composition=composition,
    workload=frozenset({"marginals"}),
    audit_params=({}, {"accounting": "zcdp"}, {"accounting": "zcdp", "noise": "continuous"},
                  {"noise": "continuous"}, {"accounting": "zcdp", "compress": True}),
    preflight=preflight,
    needs_delta=lambda raw: raw.get("accounting") == "zcdp",
    budget_plan=budget_plan,
    no_error_bounds=None,
)
