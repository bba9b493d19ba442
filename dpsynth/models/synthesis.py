"""Synthetic rows from released noisy marginals (post-processing, no privacy cost).

The marginal-releasing algorithms (``laplace``, ``ireduct``, ``twophase``,
``iresamp``) release noisy marginals; the iReduct paper leaves turning them into
records as future work.

``method="pgm"`` (default): the noise-aware graphical model
(:mod:`dpsynth.models.estimation`, McKenna et al. 2019).  Each marginal becomes a
measurement with its noise's standard deviation; the cliques are planned within
``max_cells`` cells (public: shapes only) in order of :func:`signal_priority` (how far
each noisy marginal is from the product of its own 1-way projections beyond what its
noise explains: post-processing of noisy values); a marginal with no signal above its
noise, or one that does not fit, is fitted through its lower-order projections.  Then
``iterations`` steps of mirror descent on the precision-weighted squared error; the
released model is a :class:`~dpsynth.models.graphical.GraphicalModel` whose rows are
drawn i.i.d. or by systematic allocation (``sampling``).  Very noisy marginals count
for little, so the rows stay close to the product of the 1-way marginals when the
higher-order ones carry no signal (docs/estimator.md).

``method="mw"`` / ``"ipf"``: the older product-of-factors distribution
(:class:`dpsynth.models.factored.FactoredModel`, shared with MWEM's ``paper`` variant)
fitted by multiplicative-weights passes (:func:`dpsynth.models.factored.fit_marginals`,
MWEM §2.3.2 / §3.3 update) or iterative proportional fitting:

Method:

1. Order the marginals by relative noise, scale·|M|/n ascending (the most
   informative first), because ``fit_marginals`` merges factors in the given
   order until a factor would exceed ``max_factor_cells``; a marginal that
   cannot be merged is still fitted through its projections onto the existing
   attribute groups (its lower-order information counts).
2. ``method="mw"``: ``fit_marginals`` starts from the average noisy
   1-way projections and runs ``passes`` multiplicative-weights passes at
   MWEM's learning rate, A ∝ A·exp((m − A)/(2n)) per cell.  Noisy counts are
   used as they are (negative ones push mass down).
   ``method="ipf"``: one MW pass for the structure, then ``passes`` passes of
   iterative proportional fitting (rescale each factor by target/current per
   cell; targets clipped at 0, normalised and mixed with weight 10⁻³ with the
   uniform distribution because IPF cannot revive a zero).
3. Sample ``rows`` independent records from the fitted model.

Why MW rather than IPF (Adult, all 105 2-way marginals released by iReduct, mean
total variation distance of the synthetic rows' marginals to the truth):
ε = 1: MW 10 passes 0.087, IPF 10 passes 0.167 (the clipped noisy marginals
themselves: 0.118); ε = 0.1: MW 0.193, IPF 0.595 (noisy: 0.473).  IPF fits each
noisy marginal exactly in turn and overfits the noise; MW's small steps
average the inconsistent marginals and denoise.  On exact marginals IPF is
better (TV 0.050 vs 0.073 for MW with 10 passes): use it for noise-free or
nearly noise-free input.

Error added (docs/ireduct.md, benchmark figures): the model cannot represent
the correlations between attribute groups it could not merge, MW passes stop
before convergence (a bias towards the 1-way product), and sampling adds
multinomial noise (relative standard error about 1/sqrt(n·p) per cell).  The
benchmark reports the overall relative error of the synthetic rows'
marginals next to that of the released marginals, and of rows synthesised
from the exact marginals (synthesis error alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpsynth.models.estimation import LinearMeasurement, estimate
from dpsynth.models.factored import DEFAULT_MAX_FACTOR_CELLS, FactoredModel, fit_marginals

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_MODEL_CELLS",
    "NOISY_DETAILS",
    "fit",
    "fit_model",
    "ipf_pass",
    "signal_priority",
    "synthesis_order",
    "synthesize",
    "to_measurements",
]

DEFAULT_ITERATIONS = 100
"""Mirror-descent iterations of the graphical-model fit (docs/estimator.md: measured on Adult)."""

DEFAULT_MODEL_CELLS = 100_000
"""Bound on the synthesis model's junction tree (about 5 MB of inference memory; docs/estimator.md)."""

NOISY_DETAILS = ("iterations", "model_cells", "model_cliques", "cliques", "measurements_coarsened")
"""Keys of the pgm synthesis details that are functions of the noisy marginals (post-processing of
mechanism outputs, allowed in the report): which cliques the model kept and how long the fit ran."""

_MIX = 1e-3
"""Weight of the uniform distribution mixed into every IPF target."""

_METHODS = {
    "mw": "multiplicative-weights passes at the MWEM learning rate",
    "ipf": "iterative proportional fitting",
}


def synthesis_order(marginals: Sequence, total: float) -> list[int]:
    """Indices of ``marginals`` by relative noise scale·cells/total, ascending (stable)."""
    keys = [float(m.scale) * float(np.size(m.values)) / max(float(total), 1.0) for m in marginals]
    return sorted(range(len(marginals)), key=lambda i: keys[i])


def to_measurements(marginals: Sequence, sizes: Sequence[int]) -> list[LinearMeasurement]:
    """Estimator inputs: each noisy marginal with its noise standard deviation.

    ``scale`` is a Laplace (or geometric) scale b, deviation sqrt(2)·b, unless the marginal says
    ``noise == "gaussian"`` (then ``scale`` is the deviation itself).
    """
    out = []
    for m in marginals:
        sd = float(m.scale) if getattr(m, "noise", "laplace") == "gaussian" else math.sqrt(2.0) * float(m.scale)
        values = np.asarray(m.values, dtype=float).reshape([sizes[a] for a in m.attrs])
        out.append(LinearMeasurement(tuple(int(a) for a in m.attrs), values, max(sd, 1e-9)))
    return out


def signal_priority(measurements: Sequence[LinearMeasurement]) -> list[float]:
    """How far each noisy marginal is from the product of its own 1-way projections, beyond noise.

    L1(y, product of y's normalised projections) − cells·E|noise| (E|noise| = σ·sqrt(2/π) for
    Gaussian noise, a little less for Laplace); 1-way measurements get +inf.  A marginal whose
    priority is ≤ 0 shows no dependence beyond its noise and is fitted through its 1-way
    projections.  (Requiring twice the noise — a marginal alone on its clique is fitted exactly,
    noise included — helped on PUMS at ε = 0.3 but cost Adult 0.17 → 0.21 at ε = 1: not used.)
    A function of noisy values only (post-processing), used to decide which cliques a model keeps.
    """
    out = []
    for m in measurements:
        if len(m.attrs) == 1:
            out.append(math.inf)
            continue
        y = m.values
        indep = np.full(y.shape, max(float(y.sum()), 1.0))
        for pos in range(y.ndim):
            proj = np.clip(y.sum(axis=tuple(i for i in range(y.ndim) if i != pos)), 0, None)
            proj = proj / max(float(proj.sum()), 1e-12)
            indep = indep * proj.reshape([-1 if i == pos else 1 for i in range(y.ndim)])
        out.append(float(np.abs(y - indep).sum()) - y.size * m.sigma * math.sqrt(2.0 / math.pi))
    return out


def fit_model(
    domain,
    marginals: Sequence,
    *,
    total: float,
    passes: int = 10,
    max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
    method: str = "pgm",
    iterations: int = DEFAULT_ITERATIONS,
    max_cells: int = DEFAULT_MODEL_CELLS,
    sampling: str = "iid",
):
    """The released model, with ``(model, details, warnings)``; ``details`` holds facts about the fit
    for the report (public, or functions of the noisy marginals: :data:`NOISY_DETAILS`).

    ``method="pgm"`` (default): a :class:`~dpsynth.models.graphical.GraphicalModel`
    (``iterations`` mirror-descent steps, at most ``max_cells`` cells, ``sampling``
    "iid" or "systematic"); ``"mw"``/``"ipf"``: a product-of-factors model (``passes``,
    ``max_factor_cells``).  No marginals: the uniform model."""
    marginals = list(marginals)
    warnings: list[str] = []
    covered = {a for m in marginals for a in m.attrs}
    uncovered = [domain.names[a] for a in range(len(domain)) if a not in covered]
    if uncovered:
        warnings.append(
            "no workload marginal covers column(s) " + ", ".join(uncovered) + "; they are sampled uniformly"
        )
    if not marginals:
        return FactoredModel(domain.sizes, max(float(total), 1.0)), {"method": "uniform (no marginals)"}, warnings
    if method == "pgm":
        return _fit_pgm(domain, marginals, total=total, iterations=iterations, max_cells=max_cells,
                        sampling=sampling, warnings=warnings)
    model = fit(domain, marginals, total=total, passes=passes, max_factor_cells=max_factor_cells, method=method)
    details = {
        "method": f"product-of-factors model fitted to the noisy marginals ({_METHODS[method]}), then sampling",
        "passes": int(passes),
        "max_factor_cells": int(max_factor_cells),
        "factor_groups": [[domain.names[a] for a in g] for g in model.groups if len(g) > 1],
        "marginals_fitted_by_projection": len(model.unmerged),
    }
    if model.unmerged:
        warnings.append(
            f"{len(model.unmerged)} of {len(marginals)} marginals could not be merged into the model "
            f"(max_factor_cells={max_factor_cells}); they are fitted through their lower-order projections"
        )
    return model, details, warnings


def _fit_pgm(domain, marginals, *, total, iterations, max_cells, sampling, warnings):
    sizes = tuple(domain.sizes)
    measurements = to_measurements(marginals, sizes)
    est = estimate(sizes, measurements, total=max(float(total), 1.0), max_cells=max_cells,
                   priority=signal_priority(measurements), iterations=iterations)
    est.model.sampling = sampling
    details = {
        "method": "noise-aware graphical model fitted to the noisy marginals (precision-weighted least "
                  "squares, mirror descent on a junction tree), then sampling",
        "sampling": sampling,
        **est.details,
        "model_cliques": [[domain.names[a] for a in c] for c in est.model.cliques if len(c) > 1],
    }
    if est.plan.dropped:
        warnings.append(
            f"{est.plan.dropped} of {len(marginals)} marginals do not fit in a model of at most {max_cells} "
            "cells or carry no signal above their noise; they are fitted through their lower-order projections"
        )
    return est.model, details, warnings


def synthesize(domain, marginals: Sequence, rows: int, *, total: float, rng: np.random.Generator,
               **kwargs) -> tuple[np.ndarray, dict, list[str]]:
    """Rows (codes) drawn from the model of :func:`fit_model` (same keywords): ``(codes, details, warnings)``."""
    model, details, warnings = fit_model(domain, marginals, total=total, **kwargs)
    return model.sample(int(rows), rng=rng), details, warnings


def _targets(model: FactoredModel, marginals: Sequence, unmerged: set[int]) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """(attrs, values) pairs to rake: whole marginals, or projections of unmerged ones onto the model's groups."""
    group_of = {a: g for g in model.groups for a in g}
    out = []
    for idx, m in enumerate(marginals):
        attrs = tuple(int(a) for a in m.attrs)
        values = np.asarray(m.values, dtype=float).reshape(tuple(model.sizes[a] for a in attrs))
        if idx not in unmerged:
            out.append((attrs, values))
            continue
        parts: dict[tuple[int, ...], list[int]] = {}
        for pos, a in enumerate(attrs):
            parts.setdefault(group_of[a], []).append(pos)
        for positions in parts.values():
            other = tuple(i for i in range(len(attrs)) if i not in positions)
            out.append((tuple(attrs[i] for i in positions), values.sum(axis=other)))
    return out


def ipf_pass(model: FactoredModel, targets) -> None:
    """One IPF pass: for each (attrs, noisy counts), rescale the factor holding attrs to match them."""
    for attrs, values in targets:
        fi = model.merge(attrs)  # no-op: the attributes already share a factor
        f = model.factors[fi]
        local = tuple(a for a in f.attrs if a in set(attrs))
        target = np.clip(values.transpose([attrs.index(a) for a in local]), 0.0, None)
        total = target.sum()
        target = (1 - _MIX) * target / total + _MIX / target.size if total > 0 else np.full(target.shape, 1 / target.size)
        current = f.marginal(local)
        ratio = np.where(current > 0, target / np.maximum(current, 1e-300), 0.0)
        shape = [model.sizes[a] if a in set(local) else 1 for a in f.attrs]
        f.probs *= ratio.reshape(shape)
        f.probs /= f.probs.sum()
        f.changed()


def fit(domain, marginals: Sequence, *, total: float, passes: int = 10,
        max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS, method: str = "mw") -> FactoredModel:
    """The fitted :class:`FactoredModel` (steps 1–2 of the module docstring)."""
    if method not in _METHODS:
        raise ValueError(f"method must be 'mw' or 'ipf', got {method!r}")
    marginals = list(marginals)
    ordered = [marginals[i] for i in synthesis_order(marginals, total)]
    model = fit_marginals(domain, ordered, total=max(float(total), 1.0), passes=passes if method == "mw" else 1,
                          max_factor_cells=max_factor_cells)
    if method == "mw":
        return model
    targets = _targets(model, ordered, set(model.unmerged))
    for _ in range(int(passes)):
        ipf_pass(model, targets)
    return model
