"""Noise-aware estimation of a graphical model from noisy linear measurements (post-processing).

McKenna, Sheldon & Miklau (2019), "Graphical-model based estimation and
inference for differential privacy" (§3–4): given noisy answers y_i = Q_i·μ_{C_i} + z_i
of linear queries over the cells of marginals μ_{C_i}, each with noise of
standard deviation σ_i, find the distribution that minimises

    L(μ) = Σ_i ½‖(Q_i·μ_{C_i} − y_i)/σ_i‖²     (``loss="l2"``, the default), or
    L(μ) = Σ_i ‖Q_i·μ_{C_i} − y_i‖₁/σ_i          (``loss="l1"``)

over all distributions of mass n.  The minimiser can be taken in the graphical
model whose cliques are the measured attribute sets (their §3, Theorem 1: the
solution of maximum entropy among the minimisers is such a model), so the
search runs over its log-potentials θ with *entropic mirror descent*: for a
gradient g_C = ∂L/∂μ_C, θ_C ← θ_C − η·g_C, then μ = marginals(θ) by belief
propagation (:class:`~dpsynth.models.graphical.GraphicalModel`).  The step size
η adapts by backtracking (halve until the loss drops by at least ½·η·⟨g, μ − μ'⟩,
then start the next iteration from 2η).  The precision weights 1/σ_i make a very
noisy marginal count for little: two measurements of the same cell with σ₁, σ₂
give the inverse-variance weighted mean (the L2 minimiser).

Public API:

``LinearMeasurement(attrs, values, sigma, query=None)``
    ``values``: noisy cells of the marginal over ``attrs`` (``query is None``,
    shape ``sizes[attrs]``) or k noisy answers of ``query`` (k × cells, row-major
    over ``attrs`` in the given order).  ``sigma``: the noise's standard deviation
    (Laplace of scale b: sqrt(2)·b).
``estimate_total(measurements) -> float``
    n when it is not public: the inverse-variance weighted mean of the noisy
    totals of the whole-marginal measurements (each total has variance cells·σ²).
``estimate(sizes, measurements, *, total=None, max_cells, ...) -> Estimate``
    Plans the cliques within the memory bound (:func:`dpsynth.models.junction.plan`,
    before any numerical work; coarsening replaces a clique that does not fit by
    projections of its measurement onto subsets that do, with σ scaled by
    sqrt(cells/cells_sub)), then fits.  The result holds the model and the plan.

No privacy cost: the inputs are mechanism outputs and public facts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpsynth.models.graphical import GraphicalModel, expand
from dpsynth.models.junction import DEFAULT_MAX_CELLS, Plan, plan

__all__ = ["Estimate", "LinearMeasurement", "combine_duplicates", "estimate", "estimate_total", "fit_model", "project_measurement"]


@dataclass(frozen=True)
class LinearMeasurement:
    """Noisy answers to linear queries over the cells of one marginal (see module docstring)."""

    attrs: tuple[int, ...]
    values: np.ndarray
    sigma: float
    query: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", tuple(int(a) for a in self.attrs))
        object.__setattr__(self, "values", np.asarray(self.values, dtype=float))
        if len(set(self.attrs)) != len(self.attrs):
            raise ValueError("LinearMeasurement: attributes must be distinct")
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"LinearMeasurement: sigma must be a finite number > 0, got {self.sigma!r}")
        if self.query is not None:
            q = np.asarray(self.query, dtype=float)
            if q.ndim != 2 or q.shape[0] != self.values.size:
                raise ValueError("LinearMeasurement: query must be (k × cells) with k noisy values")
            object.__setattr__(self, "query", q)


def estimate_total(measurements: Sequence[LinearMeasurement]) -> float:
    """Inverse-variance weighted mean of the whole-marginal measurements' totals (at least 1)."""
    num = den = 0.0
    for m in measurements:
        if m.query is None:
            var = m.values.size * m.sigma**2
            num += float(m.values.sum()) / var
            den += 1.0 / var
    if den == 0.0:
        raise ValueError("estimate_total: no whole-marginal measurement; the total must be given")
    return max(num / den, 1.0)


def combine_duplicates(measurements: Sequence[LinearMeasurement]) -> list[LinearMeasurement]:
    """Whole-marginal measurements of the same attributes merged into their inverse-variance mean.

    Under the L2 loss, Σ_i ½‖μ − y_i‖²/σ_i² = ½‖μ − ȳ‖²/σ̄² + constant with
    ȳ = Σ(y_i/σ_i²)/Σ(1/σ_i²) and σ̄² = 1/Σ(1/σ_i²): the same minimiser, fewer terms.
    """
    groups: dict[tuple[int, ...], list[LinearMeasurement]] = {}
    out: list[LinearMeasurement] = []
    for m in measurements:
        if m.query is None:
            groups.setdefault(m.attrs, []).append(m)
        else:
            out.append(m)
    for attrs, ms in groups.items():
        if len(ms) == 1:
            out.append(ms[0])
            continue
        w = np.array([1.0 / m.sigma**2 for m in ms])
        mean = sum(wi * m.values for wi, m in zip(w, ms)) / w.sum()
        out.append(LinearMeasurement(attrs, mean, float(1.0 / math.sqrt(w.sum()))))
    return out


def project_measurement(m: LinearMeasurement, sub: Sequence[int], sizes: Sequence[int]) -> LinearMeasurement:
    """The measurement of the marginal over ``sub`` ⊂ ``m.attrs`` implied by summing ``m``'s cells.

    The sum of c independent noises of deviation σ has deviation σ·sqrt(c).
    """
    if m.query is not None:
        raise ValueError("only whole-marginal measurements can be projected")
    values = m.values.reshape([sizes[a] for a in m.attrs])
    axes = tuple(i for i, a in enumerate(m.attrs) if a not in sub)
    order = [a for a in m.attrs if a in sub]
    proj = values.sum(axis=axes).transpose([order.index(a) for a in sub])
    merged = values.size // max(proj.size, 1)
    return LinearMeasurement(tuple(sub), proj, m.sigma * math.sqrt(merged))


@dataclass
class Estimate:
    """A fitted model, the clique plan it came from, and facts for the report."""

    model: GraphicalModel
    plan: Plan
    measurements: list[LinearMeasurement]
    iterations: int
    loss: float
    details: dict = field(default_factory=dict)


def _loss_and_grad(model: GraphicalModel, measurements, where, loss: str):
    """L(μ) and ∂L/∂μ_C per clique of the tree (each measurement's gradient broadcast into its clique).

    Each clique's probabilities are exponentiated once; a measurement's marginal is a sum over them.
    """
    probs = [None] * len(model.cliques)
    grads = [None] * len(model.cliques)
    total = 0.0
    for m, idx in zip(measurements, where):  # loop over measurements, vectorised over cells
        c = model.cliques[idx]
        if probs[idx] is None:
            probs[idx] = model.probabilities()[idx]
        keep = sorted(m.attrs)
        axes = tuple(i for i, a in enumerate(c) if a not in keep)
        mu = (probs[idx].sum(axis=axes) if axes else probs[idx]) * model.total  # over sorted attrs
        flat = mu.transpose([keep.index(a) for a in m.attrs]).reshape(-1)
        resid = (flat if m.query is None else m.query @ flat) - m.values.reshape(-1)
        if loss == "l2":
            total += 0.5 * float(resid @ resid) / m.sigma**2
            g = resid / m.sigma**2
        else:
            total += float(np.abs(resid).sum()) / m.sigma
            g = np.sign(resid) / m.sigma
        if m.query is not None:
            g = m.query.T @ g
        g = g.reshape([model.sizes[a] for a in m.attrs]).transpose([m.attrs.index(a) for a in keep])
        g = expand(g, keep, c)
        grads[idx] = g if grads[idx] is None else grads[idx] + g
    grads = [np.zeros([1] * len(c)) if g is None else g for g, c in zip(grads, model.cliques)]
    return total, grads


def fit_model(
    model: GraphicalModel,
    measurements: Sequence[LinearMeasurement],
    *,
    iterations: int = 500,
    loss: str = "l2",
    tol: float = 1e-7,
    callback: Callable[[int, float], None] | None = None,
) -> tuple[int, float]:
    """Entropic mirror descent on ``model``'s log-potentials (in place); returns (iterations, loss).

    Stops after ``iterations`` or when an accepted step improves the loss by less than
    ``tol`` relative.  Starting from the model's current potentials (a warm start).
    """
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' or 'l2', got {loss!r}")
    measurements = list(measurements)
    if not measurements:
        return 0, 0.0
    where = [model.clique_of(m.attrs) for m in measurements]
    precision = max(1.0 / m.sigma**2 for m in measurements) if loss == "l2" else max(
        1.0 / m.sigma for m in measurements)
    step = 1.0 / (model.total * precision) if loss == "l2" else 1.0 / (model.total * precision * 10)
    current, grads = _loss_and_grad(model, measurements, where, loss)
    mu_old = model.clique_marginals()
    done = 0
    for it in range(int(iterations)):  # loop over iterations
        theta = model.log_potentials
        step *= 2.0
        for _ in range(30):  # backtracking
            model.set_potentials([t - step * g for t, g in zip(theta, grads)])
            new_loss, new_grads = _loss_and_grad(model, measurements, where, loss)
            mu_new = model.clique_marginals()
            decrease = sum(float((g * (a - b)).sum()) for g, a, b in zip(grads, mu_old, mu_new))
            if current - new_loss >= 0.5 * decrease:
                break
            step *= 0.5
        else:
            model.set_potentials(theta)
            break
        improved = current - new_loss
        current, grads, mu_old, done = new_loss, new_grads, mu_new, it + 1
        if callback is not None:
            callback(done, current)
        if improved <= tol * max(abs(current), 1e-12):
            break
    return done, current


def estimate(
    sizes: Sequence[int],
    measurements: Sequence[LinearMeasurement],
    *,
    total: float | None = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    priority: Sequence[float] | None = None,
    coarsen: bool = True,
    iterations: int = 500,
    loss: str = "l2",
    warm: GraphicalModel | None = None,
) -> Estimate:
    """Plan the cliques (memory bound first), then fit a model to ``measurements``.

    ``priority`` (one per measurement, higher first) orders the cliques for the plan; by
    default, measurements of fewer cells relative to their noise come first (public:
    shapes and σ).  ``warm``: a previous model whose potentials start the fit where its
    cliques match.  ``total`` None: :func:`estimate_total`.
    """
    sizes = tuple(int(s) for s in sizes)
    measurements = list(measurements)
    if total is None:
        total = estimate_total(measurements)
    cliques = [m.attrs for m in measurements]
    if priority is None:
        priority = [1.0 / (m.sigma * math.sqrt(m.values.size)) for m in measurements]
    chosen = plan(sizes, cliques, max_cells=max_cells, priority=priority, coarsen=coarsen)
    fitted: list[LinearMeasurement] = []
    for m in measurements:
        if m.attrs not in chosen.replaced:
            fitted.append(m)
        elif m.query is None:
            fitted.extend(project_measurement(m, sub, sizes) for sub in chosen.replaced[m.attrs])
    if loss == "l2":
        fitted = combine_duplicates(fitted)
    model = GraphicalModel(sizes, chosen.tree, total=float(total))
    if warm is not None:
        _warm_start(model, warm)
    else:
        _one_way_start(model, fitted)
    done, final = fit_model(model, fitted, iterations=iterations, loss=loss)
    details = {
        "estimator": "graphical model on a junction tree, fitted by mirror descent (McKenna et al. 2019)",
        "loss": loss,
        "iterations": done,
        "model_cells": model.cells,
        "max_cells": int(max_cells),
        "cliques": len(model.cliques),
        "measurements_coarsened": chosen.dropped,
    }
    return Estimate(model, chosen, fitted, done, final, details)


def _one_way_start(model: GraphicalModel, measurements: Sequence[LinearMeasurement], mix: float = 1e-3) -> None:
    """Start from the product of the measured 1-way distributions instead of the uniform one.

    Per attribute: the inverse-variance mean of the 1-way projections of the whole-marginal
    measurements holding it (a projection summing c cells has deviation σ·sqrt(c)), clipped at 0,
    normalised and mixed with weight ``mix`` of the uniform distribution (no value starts at 0).
    Mirror descent moves a cell's mass multiplicatively, so small cells far from their start take
    many steps: starting near the 1-way answer saves most of them.
    """
    sizes = model.sizes
    num = [np.zeros(s) for s in sizes]
    den = np.zeros(len(sizes))
    for m in measurements:  # loop over measurements, vectorised over cells
        if m.query is not None:
            continue
        values = m.values.reshape([sizes[a] for a in m.attrs])
        for pos, a in enumerate(m.attrs):
            proj = values.sum(axis=tuple(i for i in range(values.ndim) if i != pos))
            w = 1.0 / (m.sigma**2 * (values.size // sizes[a]))
            num[a] += w * proj
            den[a] += w
    theta = [t.copy() for t in model.log_potentials]
    for a, s in enumerate(sizes):
        if den[a] == 0:
            continue
        p = np.clip(num[a] / den[a], 0.0, None)
        p = p / p.sum() if p.sum() > 0 else np.full(s, 1.0 / s)
        p = (1.0 - mix) * p + mix / s
        i = next(k for k, c in enumerate(model.cliques) if a in c)
        theta[i] = theta[i] + expand(np.log(p), [a], model.cliques[i])
    model.set_potentials(theta)


def _warm_start(model: GraphicalModel, warm: GraphicalModel) -> None:
    """Copy each old clique's potential into a new clique containing it (the same distribution
    when the old tree's cliques all fit in the new ones)."""
    theta = [np.zeros(model.shape(c)) for c in model.cliques]
    for c, t in zip(warm.cliques, warm.log_potentials):
        try:
            i = model.clique_of(c)
        except ValueError:
            continue
        theta[i] = theta[i] + expand(t, list(c), model.cliques[i])
    model.set_potentials(theta)
