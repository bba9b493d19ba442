"""``fourier``: noisy Fourier coefficients of the workload marginals, then a consistent table.

Barak, Chaudhuri, Dwork, Kale, McSherry & Talwar (PODS 2007), as described in
Dwork's survey (2008) §4.2 ("Move to the Fourier Domain", Theorems 2–4 and the
procedure **Marginals**(A)); MWEM (Hardt et al. 2012) §3.2 uses it as the
baseline of Figures 3–4.

**Basis.**  Binary attributes are the survey's setting: a record x ∈ {0,1}^d and
the characters χ_u(x) = (−1)^{⟨u, x⟩}.  For an attribute of m values we use its
binary-attribute view (:class:`~dpsynth.data.schema.Domain`: one bit per value)
without the bit of value 0, which the others imply: a frequency u gives each
attribute i a value u_i ∈ {0, …, m_i − 1} (0: attribute absent) and

    χ_u(x) = Π_{i: u_i ≠ 0} s(x_i, u_i),   s(c, v) = −1 if c = v else +1.

For m = 2 this is exactly the Hadamard character.  Per attribute the m × m
matrix Ĥ (row 0 all ones, row v = 1 − 2·e_v) is invertible, so the
coefficients θ_u = Σ_records χ_u(x) with support(u) ⊆ S are an invertible
transform (⊗_{i∈S} Ĥ_i) of the marginal over S (survey eq. (4): the marginal
over S needs exactly the coefficients u ⪯ S).  We use the unnormalised
characters (±1); the survey's orthonormal f^u = χ_u/2^{d/2} only rescales.

**Measurement** (survey Theorem 3).  B is the downward closure of the workload:
every u whose support lies inside some workload marginal.  The constant
coefficient θ_0 = n is not measured: it is the public n or the pipeline's
noisy count, already charged.  Adding or removing a record moves every other
θ_u by exactly 1, so the |B′| = |B| − 1 measured coefficients have L1
sensitivity |B′| (the survey's |B|/2^{d/2} in its normalisation); replacing a
record moves each by at most 2: 2·|B′|.  One Laplace (or, by default,
two-sided geometric: the θ_u are integers) mechanism call with ε = what is
left in the ledger releases all of them: scale |B′|·Δ/ε.

**Consistent table** (post-processing, survey step 3).  ``fit: lp`` solves

    minimise b  subject to  w ≥ 0,  |φ_u − Σ_x w_x χ_u(x)| ≤ b  for u ∈ B

over every cell x of the full domain (PuLP/CBC, configured only in
:mod:`dpsynth.algorithms.solvers`), then rounds w to ``rows``
integer records by largest remainders.  ``fit: mw`` is MWEM §3.2's
"modification of Barak et al. which combines its observations using
multiplicative weights": from the uniform table, passes of the MW rule
A(x) ← A(x)·exp(χ_u(x)(φ_u − ⟨χ_u, A⟩)/(2n)) over the measured coefficients;
its table has no zeros, which relative entropy needs (MWEM Figure 3).

Both need the full domain (N cells) and a |B| × N character matrix.  The LP
holds one Python term per entry (about 200 bytes), MW one byte, so ``fit:
auto`` (the default) takes the LP when N·|B| ≤ ``max_entries`` and MW
otherwise (:func:`resolve_fit`, from public facts: the domain and the
workload); a guard computed from the configuration alone (:func:`preflight`)
refuses, before any data is read, an LP over ``max_entries`` or an MW fit
over ``mw_max_entries``.

Accuracy (survey Theorem 4): with probability 1 − δ, for every workload
marginal α, ‖C^α x − C^α w′‖₁ ≤ 2^{|α|}·2|B|·ln(|B|/δ)/ε + |B| (binary
attributes); :func:`theorem4_bound` computes the LP part of that bound for
any domain (see docs/fourier.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.models.mixture import RecordsModel
from dpsynth.params import params_from_mapping
from dpsynth.privacy.mechanisms import geometric_mechanism, laplace_mechanism
from dpsynth.privacy.neighbouring import Neighbouring

__all__ = [
    "Basis",
    "FourierFit",
    "Params",
    "budget_plan",
    "coefficient_sensitivity",
    "fit",
    "parse_params",
    "preflight",
    "resolve_fit",
    "run",
    "theorem4_bound",
]

_P = "algorithm.params"


@dataclass(frozen=True, kw_only=True)
class Params:
    """Fourier release settings (docs/fourier.md)."""

    noise: Literal["discrete", "continuous"] = "discrete"
    fit: Literal["auto", "lp", "mw"] = "auto"
    mw_passes: int = 1
    max_entries: int = 2_000_000  # the LP's limit on N·|B| (fit: auto switches to MW above it)
    mw_max_entries: int = 200_000_000  # the MW fit's limit on N·|B| (one byte each)
    lp_time_limit: float = 600.0

    def __post_init__(self) -> None:
        if self.mw_passes < 1:
            raise ConfigError(f"{_P}.mw_passes: must be >= 1, got {self.mw_passes}")
        for key in ("max_entries", "mw_max_entries"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{_P}.{key}: must be >= 1, got {getattr(self, key)}")
        if not self.lp_time_limit > 0:
            raise ConfigError(f"{_P}.lp_time_limit: must be > 0 seconds, got {self.lp_time_limit!r}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


# ----------------------------------------------------------------------------- the basis
def attribute_transform(m: int) -> np.ndarray:
    """Ĥ for one attribute of m values: row 0 all ones (absent), row v: +1 except −1 at column v."""
    h = np.ones((m, m), dtype=np.int64)
    h[np.arange(1, m), np.arange(1, m)] = -1
    return h


@dataclass(frozen=True)
class Basis:
    """The downward closure B of a workload, as blocks: one block per support T (a sorted attribute tuple).

    Block T holds the Π_{i∈T}(m_i − 1) frequencies with support exactly T, in C order of their
    values (1 … m_i − 1 per attribute).  Block () is the constant coefficient θ_0 = n.
    """

    domain: Domain
    supports: tuple[tuple[int, ...], ...]

    @classmethod
    def closure(cls, domain: Domain, workload: Sequence[Sequence[int]]) -> Basis:
        supports = {()}
        for attrs in workload:
            s = tuple(sorted(int(a) for a in attrs))
            for r in range(1, len(s) + 1):
                supports.update(itertools.combinations(s, r))
        return cls(domain, tuple(sorted(supports, key=lambda t: (len(t), t))))

    def block_size(self, support: Sequence[int]) -> int:
        return math.prod(self.domain.sizes[a] - 1 for a in support)

    @property
    def size(self) -> int:
        """|B|, the constant coefficient included."""
        return sum(self.block_size(t) for t in self.supports)

    def block(self, support: Sequence[int], marginal: np.ndarray) -> np.ndarray:
        """Block T's coefficients from the counts over T (axes in T's order): H_i applied along every axis,
        H_i = Ĥ_i without row 0 (the tensor form of ⊗_{i∈T} H_i, never materialised)."""
        out = np.asarray(marginal)
        for axis, a in enumerate(support):  # loop over the block's attributes
            h = attribute_transform(self.domain.sizes[a])[1:]
            out = np.moveaxis(np.tensordot(h, out, axes=(1, axis)), 0, axis)
        return out.reshape(-1)

    def coefficients(self, marginal_of) -> list[np.ndarray]:
        """Block coefficients from ``marginal_of(T)``, the counts over T (the () block: the total)."""
        return [self.block(t, marginal_of(t)) for t in self.supports]

    def characters(self) -> np.ndarray:
        """The |B| × N matrix χ_u(x) over every cell x of the full domain (int8, C order of cells)."""
        sizes = self.domain.sizes
        cells = np.indices(sizes).reshape(len(sizes), -1)
        rows = []
        for t in self.supports:  # loop over supports and their attributes, vectorized over cells
            acc = np.ones((1, cells.shape[1]), dtype=np.int8)
            for a in t:
                signs = attribute_transform(sizes[a])[1:, cells[a]].astype(np.int8)
                acc = (acc[:, None, :] * signs[None, :, :]).reshape(-1, cells.shape[1])
            rows.append(acc)
        return np.concatenate(rows, axis=0)


def marginal_from_coefficients(domain: Domain, attrs: Sequence[int], coeffs: Mapping) -> np.ndarray:
    """Survey eq. (4): the marginal over ``attrs`` (in that order) from the coefficients u ⪯ attrs.

    ``coeffs`` maps each sorted support T ⊆ attrs to its block (as :meth:`Basis.coefficients`).
    The full Kronecker transform over S = attrs is ⊗ Ĥ_i; we assemble its coefficient tensor and
    apply ⊗ Ĥ_i⁻¹ axis by axis.
    """
    attrs = tuple(int(a) for a in attrs)
    shape = domain.shape(attrs)
    tensor = np.zeros(shape)
    for r in range(len(attrs) + 1):
        for pos in itertools.combinations(range(len(attrs)), r):  # subsets of the marginal's attributes
            t = tuple(sorted(attrs[p] for p in pos))
            order = [t.index(attrs[p]) for p in pos]  # block axes in the marginal's order
            block = np.asarray(coeffs[t], dtype=float).reshape([domain.sizes[a] - 1 for a in t])
            block = np.transpose(block, order) if pos else block
            index = tuple(slice(1, None) if i in pos else 0 for i in range(len(attrs)))
            tensor[index] = block
    for axis, a in enumerate(attrs):
        inv = np.linalg.inv(attribute_transform(domain.sizes[a]).astype(float))
        tensor = np.moveaxis(np.tensordot(inv, tensor, axes=(1, axis)), 0, axis)
    return tensor


# ---------------------------------------------------------------------------- sensitivity
def coefficient_sensitivity(measured: int, neighbouring: Neighbouring) -> float:
    """L1 sensitivity of ``measured`` non-constant coefficients θ_u = Σ_records χ_u(x), χ ∈ {±1}.

    Survey Theorem 3 (proof: each record contributes ±1, here unnormalised): add-remove moves each
    coefficient by exactly 1, replace-one by at most 2.
    """
    per = 1.0 if neighbouring is Neighbouring.ADD_REMOVE else 2.0
    return per * measured


def lp_entries(domain: Domain, workload: Sequence[Sequence[int]]) -> tuple[int, int, int]:
    """(N cells, |B| coefficients, N·|B|) from public information only."""
    cells = domain.cells()
    size = Basis.closure(domain, workload).size
    return cells, size, cells * size


def resolve_fit(domain: Domain, workload: Sequence[Sequence[int]], params: Params) -> tuple[str, str]:
    """(the fit a release uses, why) from public facts only: N cells × |B| coefficients against the limits.

    ``fit: auto`` takes the LP (sparse, the survey's step 3) when N·|B| ≤ ``max_entries`` and the MW fit
    otherwise; an explicit ``lp`` or ``mw`` is kept.  Raises ConfigError (exit 64) when the chosen fit is
    over its limit: that is :func:`preflight`, before any data is read.
    """
    cells, size, entries = lp_entries(domain, workload)
    need = f"{cells:,} domain cells x {size:,} coefficients = {entries:,} entries"
    chosen = params.fit
    if chosen == "auto":
        chosen = "lp" if entries <= params.max_entries else "mw"
    if chosen == "lp" and entries > params.max_entries:
        raise ConfigError(
            f"{_P}.max_entries: the fourier LP table fit needs {cells} domain cells x {size} coefficients = "
            f"{entries} entries, more than the limit of {params.max_entries} (use fit: mw or fit: auto, fewer "
            "or coarser columns, lower-order marginals, or raise max_entries)"
        )
    if chosen == "mw" and entries > params.mw_max_entries:
        raise ConfigError(
            f"{_P}.mw_max_entries: the fourier MW table fit needs {cells} domain cells x {size} coefficients = "
            f"{entries} entries, more than the limit of {params.mw_max_entries} (use fewer or coarser columns, "
            "lower-order marginals, or raise mw_max_entries)"
        )
    if params.fit != "auto":
        return chosen, f"fit: {chosen} as configured ({need})"
    if chosen == "lp":
        return chosen, f"fit: auto chose lp: {need}, within max_entries = {params.max_entries:,}"
    return chosen, (f"fit: auto chose mw (multiplicative weights, MWEM §3.2) instead of the linear program: {need}, "
                    f"more than the LP's max_entries = {params.max_entries:,}; computed from the public domain "
                    "and workload, no privacy cost")


def preflight(domain: Domain, workload: Sequence[Sequence[int]], params: Params) -> None:
    """Refuse, before any data is read, a domain whose table fit would be too large (exit 64)."""
    resolve_fit(domain, workload, params)


def theorem4_bound(domain: Domain, attrs: Sequence[int], basis: Basis, scale: float, delta: float) -> float:
    """L1 bound on ‖C^α x − C^α w‖ for the LP table w (before rounding), with probability 1 − δ.

    Survey Theorem 4's argument with continuous Laplace noise of ``scale`` on the |B′| measured
    coefficients: all noise terms are ≤ t = scale·ln(|B′|/δ) with probability ≥ 1 − δ; the true
    table is then feasible with b = t, so the LP's w has |⟨χ_u, x − w⟩| ≤ 2t for every u ∈ B, and
    the marginal error is at most 2t·Σ_{cells, u ⪯ α} |G[c, u]| with G = ⊗ Ĥ_i⁻¹ (= 2^{|α|}·2t for
    binary attributes, the survey's first term).  Rounding adds at most 1 per cell of the support.
    """
    measured = basis.size - 1
    t = scale * math.log(max(measured, 1) / delta)
    weight = math.prod(float(np.abs(np.linalg.inv(attribute_transform(domain.sizes[a]).astype(float))).sum())
                       for a in attrs)
    return 2.0 * t * weight


# --------------------------------------------------------------------------------- release
@dataclass
class FourierFit:
    """The measured coefficients and the fitted table (for benchmarks and library users).

    ``table`` is the non-negative table over the full domain (C order of cells) before rounding;
    ``phi`` the noisy coefficients (the constant first: the public or noisy n).
    """

    basis: Basis
    phi: np.ndarray
    scale: float
    table: np.ndarray
    details: dict
    warnings: list

    def project(self, attrs: Sequence[int]) -> np.ndarray:
        """Counts of the fitted table's marginal over ``attrs`` (in that order)."""
        return _project(self.basis.domain, self.table, attrs)


def _project(domain: Domain, table: np.ndarray, attrs: Sequence[int]) -> np.ndarray:
    full = np.asarray(table, dtype=float).reshape(domain.sizes)
    attrs = [int(a) for a in attrs]
    other = tuple(i for i in range(len(domain)) if i not in attrs)
    summed = full.sum(axis=other) if other else full
    kept = [a for a in range(len(domain)) if a in attrs]
    return np.transpose(summed, [kept.index(a) for a in attrs]) if attrs else summed


def _true_coefficients(ctx: AlgorithmContext, basis: Basis) -> np.ndarray:
    """θ_u for u ∈ B′ (the non-constant ones): each support's counts from a workload marginal containing it."""
    parents = [tuple(int(a) for a in m) for m in ctx.workload]
    cache: dict[tuple[int, ...], np.ndarray] = {}

    def marginal_of(t):
        parent = next(p for p in parents if set(t) <= set(p))
        if parent not in cache:
            cache[parent] = ctx.counts.marginal(parent)
        return _project_counts(cache[parent], parent, t)

    blocks = basis.coefficients(marginal_of) if len(basis.supports) > 1 else []
    return np.concatenate(blocks[1:]) if len(blocks) > 1 else np.zeros(0, dtype=np.int64)


def _project_counts(counts: np.ndarray, parent: tuple[int, ...], t: tuple[int, ...]) -> np.ndarray:
    if not t:
        return np.asarray(counts.sum())
    other = tuple(i for i, a in enumerate(parent) if a not in t)
    summed = counts.sum(axis=other) if other else counts
    kept = [a for a in parent if a in t]
    return np.transpose(summed, [kept.index(a) for a in t])


def fit(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> FourierFit:
    """Measure the coefficients of B′ (one charged mechanism call), then fit the table (post-processing)."""
    chosen, why = resolve_fit(ctx.domain, ctx.workload, params)
    basis = Basis.closure(ctx.domain, ctx.workload)
    measured = basis.size - 1
    if measured == 0:
        raise ConfigError("workload.marginals: every column of the workload has a single value; there is no "
                          "Fourier coefficient to measure")
    sens = coefficient_sensitivity(measured, ctx.neighbouring)
    eps = ctx.ledger.remaining()
    true = _true_coefficients(ctx, basis)
    mech = geometric_mechanism if params.noise == "discrete" else laplace_mechanism
    noisy = mech(true, sensitivity=sens, epsilon=eps, ledger=ctx.ledger, rng=rng, stage="fourier",
                 measured=f"{measured} Fourier coefficients of the workload's downward closure")
    phi = np.concatenate([[float(ctx.n)], np.asarray(noisy, dtype=float)])
    ctx.progress("fourier", 1, 2)
    chars = basis.characters()
    warnings: list[str] = [why] if params.fit == "auto" and chosen == "mw" else []
    table, lp, table_from_lp = None, {}, False
    if chosen == "lp":
        table, lp = _fit_lp(chars, phi, params.lp_time_limit)
        table_from_lp = table is not None
        if table is None:
            warnings.append(f"the linear program was not solved ({lp['lp_status']}); the table was fitted by "
                            "multiplicative weights instead (post-processing, no privacy cost)")
    if chosen == "mw" or table is None:
        table = _fit_mw(chars, phi, float(ctx.n), params.mw_passes)
    ctx.progress("fourier", 2, 2)
    scale = sens / eps
    details = {
        "coefficients": basis.size,
        "coefficients_measured": measured,
        "supports": len(basis.supports),
        "sensitivity_l1": sens,
        "noise": params.noise,
        "noise_scale_per_coefficient": scale,
        "fit": "lp" if chosen == "lp" and table_from_lp else "mw",
        "fit_choice": why,
        "domain_cells": int(chars.shape[1]),
        **lp,
    }
    return FourierFit(basis, phi, scale, table, details, warnings)


def _fit_lp(chars: np.ndarray, phi: np.ndarray, time_limit: float):
    """Survey step 3: min b s.t. w ≥ 0, |φ − χ·w| ≤ b, with CBC.  Returns (w or None, report details)."""
    import pulp

    from dpsynth.algorithms.solvers import lp_solver

    prob = pulp.LpProblem("fourier_consistent_table", pulp.LpMinimize)
    w = [prob.add_variable(f"w_{j}", lowBound=0) for j in range(chars.shape[1])]
    b = prob.add_variable("b", lowBound=0)
    prob += b
    for i, (row, target) in enumerate(zip(chars.tolist(), phi.tolist())):  # one pair of rows per coefficient
        expr = pulp.LpAffineExpression(list(zip(w, row)))
        prob += expr + b >= target, f"lo_{i}"
        prob += expr - b <= target, f"hi_{i}"
    prob.solve(lp_solver(time_limit=time_limit))
    status = pulp.LpStatus.get(prob.status, "unknown").lower()
    if prob.status != pulp.LpStatusOptimal:
        return None, {"lp_status": status}
    table = np.clip(np.array([v.varValue or 0.0 for v in w], dtype=float), 0.0, None)
    return table, {"lp_status": status, "lp_max_deviation": float(pulp.value(b))}


def _fit_mw(chars: np.ndarray, phi: np.ndarray, n: float, passes: int) -> np.ndarray:
    """MWEM §3.2's variant: MW passes over the measured coefficients from the uniform table of mass n."""
    n = max(n, 1.0)
    cells = chars.shape[1]
    table = np.full(cells, n / cells)
    target = np.clip(phi[1:], -n, n)
    for _ in range(passes):  # passes × coefficients sequential MW steps, each vectorized over cells
        for signs, m in zip(chars[1:], target):  # int8 rows: no float copy of the whole matrix
            row = signs.astype(float)
            table *= np.exp(row * (m - row @ table) / (2.0 * n))
            table *= n / table.sum()
    return table


def _round_rows(table: np.ndarray, rows: int) -> np.ndarray:
    """Integer cell counts summing to ``rows``, proportional to ``table`` (largest remainders)."""
    total = float(table.sum())
    share = table * (rows / total) if total > 0 else np.full(table.size, rows / table.size)
    counts = np.floor(share).astype(np.int64)
    short = rows - int(counts.sum())
    if short > 0:
        order = np.argsort(-(share - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    """Fourier release: :func:`fit`, then ``ctx.rows`` records, the integer table's cells in random order."""
    result = fit(ctx, params, rng=rng)
    counts = _round_rows(result.table, ctx.rows)
    cells = np.repeat(np.arange(counts.size), counts)
    codes = np.stack(np.unravel_index(cells, ctx.domain.sizes), axis=1).astype(np.int64)
    codes = codes[rng.permutation(len(codes))]
    marginals = [NoisyMarginal(tuple(m), _project(ctx.domain, counts, m).astype(float), result.scale) for m in ctx.workload]
    how = "linear program (survey §4.2 step 3)" if result.details["fit"] == "lp" else "multiplicative weights"
    details = {**result.details, "synthesis": f"the table fitted by {how}, rounded to the output row count by "
               "largest remainders, its records in random order"}
    used = dataclasses.replace(params, fit=result.details["fit"])  # the report records the fit used
    weights = np.clip(result.table, 0.0, None)
    cells_all = np.stack(np.unravel_index(np.arange(weights.size), ctx.domain.sizes), axis=1)
    model = RecordsModel(cells_all, ctx.domain.sizes, weights if weights.sum() > 0 else None)  # the fitted table
    return AlgorithmOutput(model=model, codes=codes, marginals=marginals, details=details, warnings=result.warnings,
                           params=used)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`fit` charges: the ε left, once, on every measured coefficient of the downward closure."""
    measured = Basis.closure(ctx.domain, ctx.workload).size - 1
    eps = ctx.ledger.remaining()
    sens = coefficient_sensitivity(measured, ctx.neighbouring)
    return [PlannedStage(stage="fourier", charges=1, total=eps, epsilon=(eps,),
                         text=f"epsilon {eps:.4g} on {measured:,} Fourier coefficients at once (L1 sensitivity {sens:g})")]


SPEC = AlgorithmSpec(
    name="fourier",
    summary="Barak et al. Fourier release (Dwork survey §4.2): noisy Fourier coefficients, consistent table",
    params=Params,
    run=run,
    workload=frozenset({"marginals"}),
    audit_params=({}, {"noise": "continuous", "fit": "mw"}),
    preflight=preflight,
    budget_plan=budget_plan,
    no_error_bounds=("its noise is on Fourier coefficients shared by all marginals, made consistent by a solver: "
                    "no per-marginal measurement, so no error bound is given"),
)
