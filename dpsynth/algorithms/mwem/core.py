"""MWEM's rounds (``variant: paper``): :func:`fit`, and :func:`run`, which dispatches to it or to
:func:`~dpsynth.algorithms.mwem_pgm.fit_pgm` (``variant: pgm``); the algorithm's :data:`SPEC`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal
from dpsynth.algorithms.mwem.budget import _available, _Budget, budget_plan
from dpsynth.algorithms.mwem.families import _families
from dpsynth.algorithms.mwem.params import (
    _PGM_MARGINALS_ONLY,
    DEFAULT_ITERATIONS,
    Params,
    _has_queries,
    _too_many_rounds,
    check_workload,
    composition,
    effective_iterations,
    preflight,
    resolve,
)
from dpsynth.algorithms.mwem_pgm import fit_pgm
from dpsynth.algorithms.spec import AlgorithmSpec
from dpsynth.errors import ConfigError
from dpsynth.models.factored import FactoredModel, Measurement, soft_threshold
from dpsynth.models.mixture import MixtureModel
from dpsynth.privacy.mechanisms import exponential_mechanism

__all__ = ["SPEC", "Fit", "fit", "run"]


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
    Rows: ``fit.output.sample(rows, rng=rng)`` (what the pipeline samples).
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

    @property
    def output(self):
        """The output distribution as a released model: A_T, or the uniform mixture of A₁ … A_T."""
        return MixtureModel(self.snapshots) if self.snapshots else self.model


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    """MWEM release: :func:`fit` (``paper``) or :func:`~dpsynth.algorithms.mwem_pgm.fit_pgm` (``pgm``);
    the pipeline samples ``ctx.rows`` rows from the released model."""
    params = resolve(ctx, params)
    if params.variant == "pgm":
        if _has_queries(ctx.queries):
            raise ConfigError(_PGM_MARGINALS_ONLY)
        zcdp = params.accounting == "zcdp"
        model, released, details, warnings, log = fit_pgm(ctx, params, zcdp=zcdp,
                                                          total_budget=_available(ctx, zcdp), rng=rng)
        return AlgorithmOutput(model=model, marginals=released, details=details, warnings=warnings, params=params,
                               selection=log)
    result = fit(ctx, params, rng=rng)
    return AlgorithmOutput(model=result.output, marginals=result.released, details=result.details,
                           warnings=result.warnings, params=params)


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
        fam = fams[fi]
        measured[fi][i] = True
        attrs, true, queries, name = fam.query(i)
        l1, l2 = fam.sensitivities(i)
        noisy, scale = budget.noisy(true, budget.measure[t], l1, l2, rng=rng,
                                    stage="mwem-measure", measured=name, integral=fam.integral(i))
        values = np.asarray(noisy, dtype=float).reshape(np.shape(true))
        if queries is None:
            released.append(NoisyMarginal(tuple(attrs), values, scale, "gaussian" if budget.zcdp else "laplace"))
        m = _measurement(attrs, values, queries, scale, params, ctx.n, budget.zcdp, fam.value_range(i))
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
    no_error_bounds=None,
    budget_plan=budget_plan,
)
