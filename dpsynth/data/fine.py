"""The fine view: each number's distribution inside its schema bin, measured privately, used to decode.

A model knows a numeric column by its schema bins; without more, a value is drawn uniformly inside its bin,
and a coarse public bin (``lower: 0, upper: 3000000, bins: 10``) then gives numbers nothing like the real
ones.  The fine view is one noisy histogram per numeric column on a fine *public* grid: every schema bin cut
into ``cells`` equal sub-cells (whole units for ``integer: true`` and datetime columns: one sub-cell per
integer when the bin holds no more than ``cells`` of them).  It is its own ledger stage (``fine-decode``):
one histogram per column (L1 sensitivity 1 under add-remove, 2 under replace-one; L2 1 or √2), each with an
equal part of ``share`` of the budget the release has left, geometric noise under basic composition,
discrete Gaussian noise under zCDP.

Decoding is post-processing: P(value | bin) is piecewise uniform, proportional to the sub-cells' noisy counts,
those below one standard deviation of the noise set to 0 (uniform over the bin where nothing is left).
:class:`FineColumn` (sub-cell edges and nonnegative weights) is all the decoder needs, so any DP source of a
column's fine histogram can fill it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpsynth.data.schema import ColumnSpec, DatetimeColumn, Domain, NumericColumn
from dpsynth.data.timestamps import resolution
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import Charge, Ledger, ZCDPComposition, split_budget, zcdp_available, zcdp_to_approx_dp
from dpsynth.privacy.mechanisms import discrete_gaussian_mechanism, geometric_mechanism
from dpsynth.privacy.neighbouring import Neighbouring

__all__ = [
    "DEFAULT_CELLS",
    "DEFAULT_SHARE",
    "STAGE",
    "FineColumn",
    "FineDecision",
    "FineSettings",
    "FineView",
    "decide",
    "draw_in_bins",
    "fine_counts",
    "fine_grid",
    "floor_noise",
    "measure_fine",
    "planned_charges",
]

STAGE = "fine-decode"
DEFAULT_SHARE = 0.1
"""Share of the release's budget (ε under basic composition, ρ under zCDP) the fine view takes when it is on."""
DEFAULT_CELLS = 16
"""Sub-cells per schema bin (``decode.cells``); ``auto`` chooses up to :data:`MAX_AUTO_CELLS` from n and the noise."""
MAX_AUTO_CELLS = 32
FLOOR = 1.0
"""Noisy sub-cell counts below FLOOR standard deviations of the noise weigh 0 (:func:`floor_noise`)."""
SIGNAL = 6.0
"""``auto``: a bin holding a third of the rows must give each of its K sub-cells at least twice the noise's
standard deviation: K ≤ n / (SIGNAL·σ)."""


@dataclass(frozen=True)
class FineSettings:
    """The configuration's ``decode`` section: ``fine`` (auto, on, off), ``share`` in (0, 1), ``cells`` (≥ 2 or
    None for auto)."""

    fine: str = "auto"
    share: float = DEFAULT_SHARE
    cells: int | None = None

    def __post_init__(self) -> None:
        if self.fine not in ("auto", "on", "off"):
            raise ConfigError(f"decode.fine: expected one of auto, on, off, got {self.fine!r}")
        if not (isinstance(self.share, float) and 0 < self.share < 1):
            raise ConfigError(f"decode.share: must be a number in (0, 1), got {self.share!r}")
        if self.cells is not None and (isinstance(self.cells, bool) or not isinstance(self.cells, int)
                                       or not 2 <= self.cells <= 1024):
            raise ConfigError(f"decode.cells: expected 'auto' or an integer in [2, 1024], got {self.cells!r}")

    def to_raw(self) -> dict:
        return {"fine": self.fine, "share": self.share, "cells": "auto" if self.cells is None else self.cells}


@dataclass(frozen=True)
class FineColumn:
    """One column's within-bin distribution: sub-cell ``edges`` (ascending, in the column's values: seconds for
    a datetime column) and one nonnegative ``weight`` per sub-cell.  The sub-cells need not nest in the schema
    bins: a sub-cell cut by a bin edge gives each part a weight in proportion to its length."""

    edges: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        e, w = np.asarray(self.edges, dtype=float), np.asarray(self.weights, dtype=float)
        if e.ndim != 1 or len(e) < 2 or w.shape != (len(e) - 1,) or not np.all(np.isfinite(e)) \
                or np.any(np.diff(e) <= 0) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("a fine column needs ascending finite edges and one finite weight >= 0 per sub-cell")
        object.__setattr__(self, "edges", e)
        object.__setattr__(self, "weights", w)


@dataclass(frozen=True)
class FineView:
    """The released fine view: per column name a :class:`FineColumn`; ``noise``: how it was measured (public)."""

    columns: Mapping[str, FineColumn]
    noise: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class FineDecision:
    """Whether a release measures the fine view, from public facts only, and why."""

    on: bool
    reason: str
    columns: tuple[str, ...] = ()
    cells: int = 0
    setting: str = "auto"

    def to_dict(self) -> dict:
        return {"fine": "on" if self.on else "off", "setting": self.setting, "reason": self.reason,
                "columns": list(self.columns), "cells_per_bin": self.cells}


# --------------------------------------------------------------------------- the public grid
def _unit(spec: NumericColumn) -> float | None:
    """Whole units of a column's decoded values: 1 for integers, the format's resolution for datetimes,
    None for real numbers."""
    if isinstance(spec, DatetimeColumn):
        return resolution(spec.output_format)
    if spec.step is not None:  # values on a lattice: whole multiples of the step
        return spec.step
    return 1.0 if spec.integral else None


def _ratio(x: np.ndarray, r: float) -> np.ndarray:
    """x / r, a ratio within 1e-9 of a whole number being that number (a step such as 0.1 is inexact)."""
    q = np.asarray(x, dtype=float) / r
    return np.where(np.abs(q - np.round(q)) < 1e-9, np.round(q), q)


def unit_bins(spec: NumericColumn) -> tuple[np.ndarray, np.ndarray]:
    """Each bin's decoded range [lo, hi) in decoding space: values for real columns, whole units for integral
    and datetime columns (integers ⌈lo⌉ … ⌈hi⌉ − 1; the last bin of an integral column also holds ⌊upper⌋)."""
    edges = np.asarray(spec.edges, dtype=float)
    r = _unit(spec)
    if r is None:
        return edges[:-1], edges[1:]
    after = np.concatenate([[False], (np.diff(edges) == 0)[:-1]])  # the bin after a point bin is open on the left
    a, b = _ratio(edges[:-1], r), _ratio(edges[1:], r)
    lo, hi = np.ceil(np.where(after, np.nextafter(a, np.inf), a)), np.ceil(b)
    if (spec.integral or spec.step is not None) and not isinstance(spec, DatetimeColumn):
        hi[-1] = np.floor(b[-1]) + 1  # the last bin is closed
    return lo, np.maximum(hi, lo)


def fine_grid(spec: ColumnSpec, cells: int) -> np.ndarray | None:
    """The public sub-cell edges of a numeric column in decoding space, or None when no bin is cut (every bin
    holds at most one whole unit).  Every bin range is cut into min(cells, its whole units) parts."""
    if not isinstance(spec, NumericColumn):
        return None
    lo, hi = unit_bins(spec)
    j = np.arange(cells + 1)
    if _unit(spec) is None:
        grid = lo[:, None] + (hi - lo)[:, None] * (j / cells)[None, :]
        grid[:, -1] = hi
        parts = np.full(len(lo), cells)
    else:
        width = hi - lo
        parts = np.minimum(cells, width).astype(np.int64)
        k = np.maximum(parts, 1)[:, None]
        grid = lo[:, None] + np.round(width[:, None] * np.minimum(j[None, :], k) / k)
    if not np.any(parts >= 2):
        return None
    out = np.unique(grid.ravel())
    return out if len(out) >= 2 else None


def fine_counts(values: np.ndarray, isnull: np.ndarray, spec: NumericColumn, edges: np.ndarray) -> np.ndarray:
    """Exact counts of a column's values in its sub-cells (null rows in none): PRIVATE, for the mechanism only."""
    v = np.asarray(values, dtype=float)[~np.asarray(isnull, dtype=bool)]
    if spec.points:  # a value in a point bin decodes to itself: it is no part of P(value | bin) of any bin
        v = v[~np.isin(v, spec.points)]
    r = _unit(spec)
    if r is not None:  # a value off a step column's lattice counts at its nearest multiple
        v = np.round(v / r) if spec.step is not None and not isinstance(spec, DatetimeColumn) else np.floor(v / r)
    v = np.clip(np.nan_to_num(v, nan=edges[0], posinf=edges[-1], neginf=edges[0]), edges[0], edges[-1])
    idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, len(edges) - 2)
    return np.bincount(idx, minlength=len(edges) - 1).astype(np.int64)


# --------------------------------------------------------------------------- budget and decision
def _budget(ledger: Ledger, share: float, columns: int) -> tuple[bool, list[float]]:
    """(zcdp?, the per-column ε or ρ): ``share`` of what the ledger has left, split equally."""
    if isinstance(ledger.composition, ZCDPComposition):
        total = share * zcdp_available(ledger)
        return True, [total / columns] * columns if total > 0 else []
    total = share * ledger.remaining()
    return False, split_budget(total, [1.0] * columns) if total > 0 else []


def _sd(zcdp: bool, part: float, neighbouring: Neighbouring) -> float:
    if zcdp:
        return neighbouring.histogram_l2 / math.sqrt(2.0 * part)
    return math.sqrt(2.0) * neighbouring.histogram_l1 / part


def decide(domain: Domain, settings: FineSettings, *, n: float, ledger: Ledger, neighbouring: Neighbouring,
           available: bool = True) -> FineDecision:
    """Whether to measure the fine view, from public facts only: the schema, ``n`` (public or already noisy),
    the budget left in ``ledger`` and the settings.  ``available``: the counts engine can read raw values."""
    setting = settings.fine
    if setting == "off":
        return FineDecision(False, "decode.fine is off", setting=setting)
    probe = settings.cells or 2
    names = tuple(c.name for c in domain.columns if fine_grid(c, probe) is not None)
    if not names:
        return FineDecision(False, "no numeric column has a bin wider than one whole unit", setting=setting)
    if not available:
        if setting == "on":
            raise ConfigError("decode.fine: the fine view reads the raw numbers, which only the numpy engine "
                              "holds; use --engine numpy or set decode.fine: off")
        return FineDecision(False, "this counts engine does not read raw numbers (numpy engine only)",
                            setting=setting)
    zcdp, parts = _budget(ledger, settings.share, len(names))
    if not parts:
        return FineDecision(False, "no budget is left for it", setting=setting)
    sd = _sd(zcdp, parts[0], neighbouring)
    cells = settings.cells if settings.cells is not None else int(min(MAX_AUTO_CELLS, n // (SIGNAL * sd)))
    why = (f"{len(names)} numeric column(s) with bins to refine; noise sd {sd:.3g} per sub-cell at n={n:g} "
           f"({'rho' if zcdp else 'epsilon'} {parts[0]:.3g} per column)")
    if setting == "on":
        return FineDecision(True, f"decode.fine is on: {why}", names, cells, setting)
    if cells < 2:
        return FineDecision(False, f"too little signal: {why}, so fewer than 2 sub-cells per bin would stand "
                                   f"{SIGNAL / 3:g} sd above the noise", setting=setting)
    return FineDecision(True, f"{why}: {cells} sub-cells per bin stand {SIGNAL / 3:g} sd above the noise in a bin "
                              "holding a third of the rows", names, cells, setting)


def _column_grid(domain: Domain, name: str, cells: int) -> tuple[NumericColumn, np.ndarray]:
    spec = domain.columns[domain.index(name)]
    grid = fine_grid(spec, cells)
    assert isinstance(spec, NumericColumn) and grid is not None, f"{name}: a decided column has a fine grid"
    return spec, grid


def planned_charges(decision: FineDecision, domain: Domain, settings: FineSettings, *, ledger: Ledger,
                    neighbouring: Neighbouring) -> list[Charge]:
    """The ledger entries :func:`measure_fine` will make (the same as its mechanisms charge): for ``plan``."""
    if not decision.on:
        return []
    zcdp, parts = _budget(ledger, settings.share, len(decision.columns))
    out = []
    for name, part in zip(decision.columns, parts):
        cells = len(_column_grid(domain, name, decision.cells)[1]) - 1
        measured = f"fine histogram({name})"
        if zcdp:
            l2 = neighbouring.histogram_l2
            out.append(Charge(stage=STAGE, mechanism="discrete-gaussian", sensitivity=l2,
                              epsilon=zcdp_to_approx_dp(part, ledger.delta), delta=ledger.delta,
                              scale=l2 / math.sqrt(2.0 * part), rho=part, measured=measured, count=cells))
        else:
            l1 = neighbouring.histogram_l1
            out.append(Charge(stage=STAGE, mechanism="discrete-laplace", sensitivity=l1, epsilon=part,
                              scale=l1 / part, rho=part**2 / 2.0, measured=measured, count=cells))
    return out


def measure_fine(columns: Mapping[str, tuple[np.ndarray, np.ndarray]], decision: FineDecision, domain: Domain,
                 settings: FineSettings, *, ledger: Ledger, neighbouring: Neighbouring,
                 rng: np.random.Generator) -> FineView | None:
    """The fine view of the decided columns from their (values, isnull) (PRIVATE), charged to ``ledger``."""
    if not decision.on:
        return None
    zcdp, parts = _budget(ledger, settings.share, len(decision.columns))
    out, scale = {}, 0.0
    for name, part in zip(decision.columns, parts):  # loop over (public) columns
        spec, edges = _column_grid(domain, name, decision.cells)
        true = fine_counts(*columns[name], spec, edges)
        kw: dict[str, Any] = {"ledger": ledger, "rng": rng, "stage": STAGE, "measured": f"fine histogram({name})"}
        if zcdp:
            noisy = discrete_gaussian_mechanism(true, l2_sensitivity=neighbouring.histogram_l2, rho=part, **kw)
            scale = neighbouring.histogram_l2 / math.sqrt(2.0 * part)
        else:
            noisy = geometric_mechanism(true, sensitivity=neighbouring.histogram_l1, epsilon=part, **kw)
            scale = neighbouring.histogram_l1 / part
        r = _unit(spec)
        out[name] = FineColumn(edges * (r or 1.0), floor_noise(noisy, _noise_sd(zcdp, scale)))
    noise = {"mechanism": "discrete-gaussian" if zcdp else "discrete-laplace", "scale": scale,
             "cells_per_bin": decision.cells, "floor_sd": FLOOR}
    return FineView(out, noise)


def _noise_sd(zcdp: bool, scale: float) -> float:
    return scale if zcdp else math.sqrt(2.0) * scale


def floor_noise(noisy, sd: float) -> np.ndarray:
    """Post-processing of noisy sub-cell counts into weights: a count below :data:`FLOOR` standard deviations
    of the noise is 0 (an empty sub-cell passes with probability about 16 %, instead of half the time with
    clipping at 0, so rare values are less spread over a bin mostly held by one of them).  Loans, coarse bins
    (benchmarks/bench_decode.py): median W1/std 0.122 clipping at 0, 0.119 at one sd, 0.131 at two."""
    noisy = np.asarray(noisy, dtype=float)
    return np.where(noisy >= FLOOR * sd, noisy, 0.0)


# --------------------------------------------------------------------------- decoding
def draw_in_bins(b: np.ndarray, spec: NumericColumn, fine: FineColumn, rng: np.random.Generator,
                 limit: Sequence[float] | None = None) -> np.ndarray:
    """A value for each bin index in ``b`` drawn from P(value | bin) of ``fine``, vectorised: whole units (then
    scaled back) for integral and datetime columns, reals otherwise; always inside the bin (and ``limit``).

    The sub-cells and bin ranges are merged into pieces, each inside one bin; a piece's mass is its sub-cell's
    weight times the share of the sub-cell's length it covers.  A bin whose pieces weigh 0 draws uniformly."""
    r = _unit(spec)
    lo, hi = unit_bins(spec)
    sub, weights = fine.edges / (r or 1.0), fine.weights
    if spec.step is not None and not isinstance(spec, DatetimeColumn):  # a sub-cell holds the multiples inside it
        sub = np.ceil(_ratio(fine.edges, spec.step))
        keep = np.diff(sub) > 0  # (a sub-cell holding no multiple has no mass to give)
        sub, weights = np.append(sub[:-1][keep], sub[-1]), weights[keep]
    cuts = [lo, hi[-1:], sub[(sub > lo[0]) & (sub < hi[-1])]]
    if limit is not None:
        lim = (np.ceil(limit[0] / r), np.floor(limit[1] / r) + 1) if r is not None else (limit[0], limit[1])
        cuts.append(np.clip(np.asarray(lim, dtype=float), lo[0], hi[-1]))
    grid = np.unique(np.concatenate(cuts))
    a, z = grid[:-1], grid[1:]
    mid = (a + z) / 2.0
    owner = np.clip(np.searchsorted(lo, mid, side="right") - 1, 0, len(lo) - 1)
    inside = mid < hi[owner]  # a piece between empty (zero-width) bins belongs to none
    cell = np.clip(np.searchsorted(sub, mid, side="right") - 1, 0, len(sub) - 2)
    covered = (mid > sub[0]) & (mid < sub[-1])
    length = (z - a) * inside
    if limit is not None:
        length = length * ((a >= lim[0]) & (z <= lim[1]))
    mass = np.where(covered, weights[cell] * length / (sub[cell + 1] - sub[cell]), 0.0)
    nbins = len(lo)
    total = np.bincount(owner, weights=mass, minlength=nbins)
    mass = np.where(total[owner] > 0, mass, length)  # no noisy mass in the bin: uniform
    norm = np.bincount(owner, weights=mass, minlength=nbins)
    share = np.divide(mass, norm[owner], out=np.zeros_like(mass), where=norm[owner] > 0)
    per_bin = np.bincount(owner, weights=share, minlength=nbins)
    within = np.cumsum(share) - (np.cumsum(per_bin) - per_bin)[owner]
    key = owner + np.minimum(within, 1.0)  # ascending: bin index + cumulative share inside the bin
    u = rng.random(len(b))
    piece = np.clip(np.searchsorted(key, b + u, side="right"), 0, len(a) - 1)
    piece = np.where(owner[piece] == b, piece, np.maximum(piece - 1, 0))  # past the bin's end by rounding
    pa, pz = a[piece], z[piece]
    v = rng.random(len(b))
    empty = norm[b] <= 0  # the bin holds no whole unit (or none in ``limit``): its rounded midpoint
    if r is None:
        vals = np.minimum(pa + v * (pz - pa), np.nextafter(pz, pa))
        return np.where(empty, (lo[b] + hi[b]) / 2.0, vals)
    edges = np.asarray(spec.edges, dtype=float) / r
    whole = np.minimum(pa + np.floor(v * (pz - pa)), pz - 1)
    return np.where(empty, np.round((edges[b] + edges[b + 1]) / 2.0), whole) * r
