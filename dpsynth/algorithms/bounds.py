"""Error bounds users can read (issue 28 §3): per workload marginal, from mechanism outputs and public facts.

**What is bounded.**  For a workload marginal s, the L1 distance ‖M_s(D)/n − p̂_s‖₁ between the true
normalised marginal of the input (n its row count) and the normalised marginal p̂_s of the released model
(the distribution the synthetic rows are drawn from; the same L1 as ``dpsynth evaluate``, in [0, 2]).
The synthetic rows' own sampling error is not included: i.i.d. rows add about sqrt((k − 1)/N) for k cells
and N rows on average; systematic sampling (the default of ``auto``) rounds the model's counts within each
group of rows, which adds less (docs/report.md, "Error bounds").

**The bound** (McKenna, Mullins, Sheldon & Miklau 2022, "AIM", §5, "uncertainty quantification", for a
supported marginal): a released noisy marginal y_r = M_r(D) + z_r over r ⊇ s, summed down to s (y_s =
P_s y_r, noise P_s z_r, each cell a sum of ``merged`` = cells(r)/cells(s) draws), gives by the triangle
inequality

    ‖M_s(D) − ñ·p̂_s‖₁ ≤ ‖y_s − ñ·p̂_s‖₁ + ‖P_s z_r‖₁,

and ‖P_s z_r‖₁ ≤ q with probability ≥ 1 − α (:func:`~dpsynth.privacy.tails.l1_quantile`, from the noise's
public scale).  With ñ the n the algorithm used (the model has mass ñ),
‖M_s(D)/n − p̂_s‖₁ ≤ (‖M_s(D) − ñ·p̂_s‖₁ + |ñ − n|)/n; when n is public ñ = n; when it is a noisy count,
|ñ − n| ≤ t with probability ≥ 1 − α_n (:func:`~dpsynth.privacy.tails.laplace_count_quantile`) and
n ≥ ñ − t, so the bound is (‖y_s − ñ·p̂_s‖₁ + q + t)/(ñ − t), and 2 (the most an L1 distance between
distributions can be) when that is larger or ñ ≤ t.

**Adaptivity and several measurements.**  An adaptive algorithm chooses what to measure from earlier noisy
outputs, and the model p̂ depends on all the noise, but each measurement's noise is drawn fresh after its
marginal was chosen.  The j-th released marginal (in the order measured) that contains s is the j-th for
reasons known before its noise is drawn, so charging it α_z/2^j (α_z = α − α_n) and taking the smallest of
these bounds fails with probability at most Σ_j α_z/2^j + α_n ≤ α: each bound holds with probability at
least ``level`` on its own (the bounds of different marginals are not simultaneous).

**Unmeasured marginals** (AIM §5, "unsupported marginals"; :func:`selection_bound`): an adaptive selection
(``mwem``'s rounds, :class:`~dpsynth.algorithms.base.SelectionLog`) scored every candidate r at round t by
u_r = w_r·(‖M_r(D) − M_r(p̂_t)‖₁ − c_r), c_r = sqrt(2/π)·σ_t·cells(r), against the model p̂_t it had then
(``aim`` weighs a candidate by its workload weight w_r, ``mwem`` by w_r = 1), and the
exponential mechanism (weights exp(ε_t·u/(2Δ)) over C_t candidates) chose r_t with, except with probability
e^(−λ), u_{r_t} ≥ max_r u_r − (2Δ/ε_t)(ln C_t + λ) (each candidate scoring g below the maximum is drawn with
probability at most e^(−ε_t·g/(2Δ)); add over the C_t candidates, McSherry & Talwar 2007).  The chosen marginal was
measured, y = M_{r_t}(D) + z, so u_{r_t} ≤ w_{r_t}·(‖y − M_{r_t}(p̂_t)‖₁ + q_z − c_{r_t}) (q_z the noise's L1
quantile).  Hence, for every candidate r of round t,

    ‖M_r(D) − M_r(p̂_t)‖₁ ≤ c_r + (w_{r_t}·(‖y − M_{r_t}(p̂_t)‖₁ + q_z − c_{r_t}) + (2Δ/ε_t)(ln C_t + λ)) / w_r,

and the released model's error adds ‖M_r(p̂_t) − ñ·p̂_r‖₁ (triangle inequality).  A candidate that ``compress``
scored in bins (rare values merged) is bounded in its bins; over its full cells a bin b holding several cells adds
at most 2·M_b(p̂_t) (Σ_{c∈b} |d_c − p_c| ≤ |d_b − p_b| + 2·min(d_b, p_b)), so its bound adds twice the model's mass
on its merged bins (post-processing of the model).  A workload marginal s ⊆ r
inherits the bound (summing cells out never increases an L1 distance).  Each s uses the last round one of
its supersets was scored (unbinned) in; since that round is picked after the fact, round t (1-based) is
charged α_z·6/(π²t²) (Σ 6/(π²t²) = 1), half for the selection's λ and half for q_z.  These bounds are looser
than a measured marginal's: the selection's slack (2Δ/ε_t)·ln C_t is large at a round's small ε_t.

**No bound**: a workload marginal that no released marginal contains and no selection scored, and every
algorithm whose noise is not a per-marginal measurement of the
counts with a known distribution (``AlgorithmSpec.error_bounds`` false: DualQuery's sampled queries,
the Fourier release's noisy coefficients, iReduct's noise-down chains, whose stopping depends on the noisy
values) or whose model cannot be projected.  Only mechanism outputs (the released marginals, the noisy n),
the released model and public facts are read: no counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from dpsynth.algorithms.base import NoisyMarginal, SelectionLog
from dpsynth.privacy.tails import l1_quantile, laplace_count_quantile

__all__ = ["LEVEL", "MAX_LISTED", "N_SHARE", "error_bounds", "marginal_bound", "no_bounds", "release_bounds",
           "selection_bound"]

LEVEL = 0.95
N_SHARE = 0.1
"""Share of α = 1 − level that pays for the noisy n (when n is not public)."""
MAX_LISTED = 200
"""The report lists bounds per marginal up to this many workload marginals (per class always)."""

STATEMENT = (
    "each bound is an upper bound on the L1 distance between the true normalised marginal of the input and the "
    "released model's marginal (the distribution the synthetic rows are drawn from), holding with probability "
    "at least the level on its own (not simultaneously over marginals); it is computed from the released noisy "
    "marginals, the noise scales, the model and {n} only, and for a marginal measured by none, from the adaptive "
    "selection's rounds (AIM, McKenna et al. 2022, sec. 5); the synthetic rows' "
    "sampling error is not included"
)


def _project_values(m: NoisyMarginal, sub: tuple[int, ...], sizes) -> np.ndarray:
    """The released values of ``m`` summed down to the marginal over ``sub`` (in ``sub``'s order)."""
    values = np.asarray(m.values, dtype=float).reshape([sizes[a] for a in m.attrs])
    axes = tuple(i for i, a in enumerate(m.attrs) if a not in sub)
    order = [a for a in m.attrs if a in sub]
    return values.sum(axis=axes).transpose([order.index(a) for a in sub])


def _model_marginal(model, attrs: tuple[int, ...]) -> np.ndarray | None:
    """The model's normalised marginal over ``attrs`` (None when the model kind cannot project)."""
    project = getattr(model, "project", None)
    if project is None:
        return None
    counts = np.asarray(project(attrs), dtype=float)
    total = counts.sum()
    return counts / total if total > 0 else None


def marginal_bound(s: tuple[int, ...], measured: Sequence[NoisyMarginal], p_hat: np.ndarray, sizes, *,
                   n: float, n_margin: float, alpha: float) -> tuple[float, tuple[int, ...]] | None:
    """(bound, attributes of the released marginal it came from) for workload marginal ``s``, or None.

    ``measured``: released marginals in the order measured; ``p_hat``: the model's normalised marginal over
    ``s``; ``n``: the n the algorithm used; ``n_margin``: t with |ñ − n| ≤ t (0 when n is public);
    ``alpha``: what the measurements may fail with (module docstring)."""
    cells = int(p_hat.size)
    best: tuple[float, tuple[int, ...]] | None = None
    j = 0
    for m in measured:  # loop over released marginals (tens to hundreds)
        if not set(s) <= set(m.attrs):
            continue
        j += 1
        y = _project_values(m, s, sizes)
        merged = round(np.asarray(m.values).size / cells)
        q = l1_quantile(m.noise, float(m.scale), cells, alpha=alpha / 2.0**j, merged=merged)
        residual = float(np.abs(y - n * p_hat).sum())
        low = n - n_margin
        bound = 2.0 if low <= 0 else min(2.0, (residual + q + n_margin) / low)
        if best is None or bound < best[0]:
            best = (bound, tuple(m.attrs))
    return best


def selection_bound(s: tuple[int, ...], log: SelectionLog, model, *, n: float, n_margin: float,
                    alpha: float) -> tuple[float, tuple[int, ...]] | None:
    """(bound, the scored candidate it came from) for workload marginal ``s`` from ``log`` (module docstring,
    "Unmeasured marginals"), or None when no round scored a superset of ``s`` on its full cells."""
    sups = [r for r in log.last_scored if set(s) <= set(r)]
    if not sups:
        return None
    r = max(sups, key=lambda c: (log.last_scored[c][0], -log.last_scored[c][1].size, tuple(-a for a in c)))
    t, scored, weight, scored_cells, merged = log.last_scored[r]
    rd = log.rounds[t]
    share = alpha * 6.0 / (math.pi**2 * (t + 1) ** 2) / 2.0  # half for the selection, half for the noise
    charge = math.sqrt(2.0 / math.pi) * rd.deviation
    q = l1_quantile(rd.noise, rd.scale, rd.cells, alpha=share)
    slack = 2.0 * rd.sensitivity / rd.epsilon * (math.log(rd.candidates) + math.log(1.0 / share))
    then = charge * scored_cells + (rd.weight * (rd.residual + q - charge * rd.cells) + slack) / weight + 2.0 * merged
    final = np.asarray(model.project(r), dtype=float)
    total = final.sum()
    if total <= 0:
        return None
    drift = float(np.abs(np.asarray(scored, dtype=float) - n * final / total).sum())
    low = n - n_margin
    bound = 2.0 if low <= 0 else min(2.0, (then + drift + n_margin) / low)
    return bound, tuple(r)


def _covered(workload, measured: Sequence[NoisyMarginal]) -> set[frozenset[int]]:
    """The attribute sets of the workload marginals that some released marginal contains: only these can get a
    bound, so only these are projected from the model (a wide table's thousands of 3-way workload marginals
    each cost a model projection otherwise; 54 columns: 24,804 projections, ~20 CPU s)."""
    orders = {len(tuple(s)) for s in workload}
    out: set[frozenset[int]] = set()
    for m in measured:  # loop over released marginals (tens to hundreds)
        attrs = tuple(int(a) for a in m.attrs)
        for k in orders:  # loop over workload orders (1 to 3 mostly)
            if k <= len(attrs):
                out.update(frozenset(c) for c in combinations(attrs, k))
    return out


def no_bounds(reason: str, level: float = LEVEL) -> dict:
    """The report section of a release without bounds."""
    return {"available": False, "level": level, "reason": reason}


def error_bounds(workload, names, sizes, measured: Sequence[NoisyMarginal], model, *, n: float,
                 n_epsilon: float | None, level: float = LEVEL, selection: SelectionLog | None = None) -> dict:
    """The report's ``error_bounds`` section (module docstring): per class (marginal order) and, for at most
    :data:`MAX_LISTED` workload marginals, per marginal.

    ``n_epsilon``: None when n is public, else the ε of the noisy row count (sensitivity 1); ``selection``: an
    adaptive algorithm's rounds, which bound the marginals no released marginal contains."""
    alpha = 1.0 - level
    if n_epsilon is None:
        n_margin, alpha_z, n_text = 0.0, alpha, "the public n"
    else:
        alpha_n = alpha * N_SHARE
        n_margin, alpha_z = laplace_count_quantile(1.0 / n_epsilon, alpha=alpha_n), alpha - alpha_n
        n_text = (f"the noisy n (|noisy n - n| <= {n_margin:g} with probability >= {1 - alpha_n:g}, "
                  f"a share {N_SHARE:g} of the failure probability)")
    rows: list[dict[str, Any]] = []
    found_bounds: list[float | None] = []
    covered = _covered(workload, measured)
    scored = _covered(workload, [NoisyMarginal(r, np.zeros(0), 1.0) for r in selection.last_scored]) \
        if selection is not None and hasattr(model, "project") else set()
    for s in workload:  # loop over workload marginals
        s = tuple(int(a) for a in s)
        found, how = None, "no"
        if frozenset(s) in covered:  # the model is projected only where some released marginal contains s
            p_hat = _model_marginal(model, s)
            found = None if p_hat is None else marginal_bound(s, measured, p_hat, sizes, n=n, n_margin=n_margin,
                                                              alpha=alpha_z)
            how = "no" if found is None else ("yes" if set(found[1]) == set(s) else "superset")
        if found is None and frozenset(s) in scored and selection is not None:
            found = selection_bound(s, selection, model, n=n, n_margin=n_margin, alpha=alpha_z)
            how = "no" if found is None else "selection"
        found_bounds.append(None if found is None else round(found[0], 6))
        rows.append({
            "marginal": [names[a] for a in s],
            "bound": found_bounds[-1],
            "measured": how,
            "from": None if found is None else [names[a] for a in found[1]],
        })
    classes = []
    orders = [len(r["marginal"]) for r in rows]
    for order in sorted(set(orders)):  # loop over marginal orders
        got = [b for b, k in zip(found_bounds, orders) if k == order and b is not None]
        classes.append({"class": f"{order}-way", "marginals": orders.count(order), "bounded": len(got),
                        "median_bound": float(np.median(got)) if got else None,
                        "max_bound": max(got) if got else None})
    out = {"available": True, "level": level, "statement": STATEMENT.format(n=n_text), "classes": classes}
    if len(rows) <= MAX_LISTED:
        out["marginals"] = rows
    unbounded = found_bounds.count(None)
    if unbounded:
        out["reason_unbounded"] = (f"{unbounded} workload marginal(s) are contained in no released marginal and in "
                                   "no marginal an adaptive selection scored: no bound is given for them "
                                   "(the model's answer there is an extrapolation)")
    return out



def release_bounds(algorithm: str, out, workload, domain, *, n: float, n_epsilon: float | None,
                   level: float = LEVEL) -> dict:
    """The ``error_bounds`` section of a release by ``algorithm`` (``out``: its
    :class:`~dpsynth.algorithms.base.AlgorithmOutput`; ``auto``: the algorithm it chose), or why there is none.

    ``workload``: the configured workload marginals (index tuples); ``n``: the n the algorithm used (public,
    or the noisy count); ``n_epsilon``: None when n is public, else the ε of the noisy count."""
    from dpsynth.algorithms import get_algorithm

    name = algorithm
    if algorithm == "auto" and "auto" in out.details:
        name = str(out.details["auto"]["chosen"]).partition(":")[0]
    reason = get_algorithm(name).no_error_bounds
    if reason is None and out.details.get("noise") == "snapping":
        reason = "its snapping noise is clamped and rounded Laplace noise, whose L1 tail is not bounded here"
    if reason is None and (out.codes is not None or not hasattr(out.model, "project")):
        reason = "its model cannot give the marginals the bounds are about"
    if reason is not None:
        return no_bounds(f"{name}: {reason}", level)
    return error_bounds(workload, domain.names, domain.sizes, out.marginals, out.model, n=n, n_epsilon=n_epsilon,
                        level=level, selection=getattr(out, "selection", None))
