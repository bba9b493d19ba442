"""MWEM's settings: :class:`Params` (both variants), their variant defaults, the composition rule, and the
checks made from the configuration alone (before any data is read)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.errors import ConfigError
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import BasicComposition, ZCDPComposition

_P = "algorithm.params"


Variant = Literal["pgm", "paper"]

_VARIANT_DEFAULTS: dict[str, dict[str, Any]] = {
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
    sampling method.  ``anneal`` (``pgm``, at least 1): when the model stops improving, later rounds'
    noise deviation is divided by it (ρ × anneal² under zCDP, ε × anneal under pure accounting); 2, the
    default, is AIM's (McKenna et al. 2022, §4).  ``compress`` (``pgm``): values whose noisy 1-way count is
    below 3 noise deviations share one bin in every later measurement (MST's compression;
    :mod:`dpsynth.algorithms.compression`), so its noise is spread over fewer cells.  ``absent`` (``pgm``):
    the released model gives no mass to the values that all measurements together count at zero or below
    (:func:`~dpsynth.algorithms.compression.absent_values`; post-processing of the noisy values).
    ``batch`` (``pgm``): marginals selected (exponential-mechanism draws without replacement) and measured per
    round, each paid 1/``batch`` of the round's selection and measurement parts, with one refit per round.
    ``init_split`` (``pgm``, 0 to 1): the initial 1-way measurements share ``init_fraction`` in proportion to
    (values of the column)**init_split; 0, the default, is equal parts.  A count's noise adds about its
    deviation to a marginal's L1 error per value, so under zCDP (deviation ∝ 1/√ρ) the summed expected error
    Σ sᵢ/√ρᵢ is least for ρᵢ ∝ sᵢ^(2/3) (``auto``'s choice, :data:`~dpsynth.algorithms.auto.INIT_SPLIT`).
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
    noise: Literal["discrete", "continuous"] = "discrete"
    anneal: float = 2.0
    compress: bool = False
    absent: bool = False
    batch: int = 1
    init_split: float = 0.0

    def resolved(self, variant: Variant, accounting: Literal["pure", "zcdp"]) -> Params:
        """A copy with the variant, its defaults and the accounting filled in."""
        fill = {k: v for k, v in _VARIANT_DEFAULTS[variant].items() if getattr(self, k) is None}
        return dataclasses.replace(self, variant=variant, accounting=accounting, **fill)

    def __post_init__(self) -> None:
        for key in ("model_cells", "round_iterations", "final_iterations"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{_P}.{key}: must be >= 1, got {getattr(self, key)}")
        if self.iterations is not None and self.iterations < 1:
            raise ConfigError(f"{_P}.iterations: must be >= 1, got {self.iterations}")
        if self.batch < 1:
            raise ConfigError(f"{_P}.batch: must be >= 1, got {self.batch}")
        if self.mw_passes < 0:
            raise ConfigError(f"{_P}.mw_passes: must be >= 0, got {self.mw_passes}")
        if self.select_fraction is not None and not 0 < self.select_fraction < 1:
            raise ConfigError(f"{_P}.select_fraction: must be in (0, 1), got {self.select_fraction!r}")
        if not 0.0 <= self.init_split <= 1.0:
            raise ConfigError(f"{_P}.init_split: must be in [0, 1], got {self.init_split!r}")
        if self.init_fraction is not None and not 0 < self.init_fraction < 1:
            raise ConfigError(f"{_P}.init_fraction: must be in (0, 1), got {self.init_fraction!r}")
        if not 1.0 <= self.anneal < float("inf"):
            raise ConfigError(f"{_P}.anneal: must be a finite number >= 1 (the noise never grows), got {self.anneal!r}")
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
    return count_candidates(domain, workload.marginals, workload, params)


def count_candidates(domain, marginals, queries, params: Params) -> int:
    """:func:`candidate_count` over the ``marginals`` a run is given (``AlgorithmContext.workload``, which
    ``auto`` may have changed) and the range and linear queries of ``queries`` (a ``Workload`` or ``None``)."""
    count = {"cuboids": len(marginals), "none": 0}.get(params.marginal_queries)
    if count is None:
        count = sum(domain.cells(m) for m in marginals)
    if queries is None:
        return count
    linear = len(queries.linear) if queries.linear is not None else 0
    return count + sum(len(rq) for rq in queries.ranges) + linear


_NOTHING_TO_QUERY = (f"{_P}.marginal_queries: is 'none' but neither workload.ranges nor workload.linear is set; "
                     "there is nothing to query")


def _too_many_rounds(T: int, candidates: int) -> str:
    return (f"{_P}.iterations: {T} rounds but only {candidates} candidate queries "
            "(lower iterations, leave it unset, or set reselect: true)")


def variant_of(params: Params, has_queries: bool) -> Variant:
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
    return resolve_config(params, ctx.queries, zcdp=isinstance(ctx.ledger.composition, ZCDPComposition))


def resolve_config(params: Params, workload, *, zcdp: bool) -> Params:
    """:func:`resolve` from the configuration alone: the typed ``workload`` and whether the release
    composes in zCDP (the composition :func:`composition` picks for the privacy settings)."""
    variant = variant_of(params, _has_queries(workload))
    if variant == "paper" and params.batch != 1:
        raise ConfigError(f"{_P}.batch: {params.batch} marginals per round needs variant pgm (variant paper "
                          "measures one query per round); remove batch or set variant: pgm")
    if variant == "pgm" and params.marginal_queries != "cuboids":
        raise ConfigError(f"{_P}.marginal_queries: variant pgm measures whole marginals (cuboids); "
                          "use variant: paper for cells or ranges")
    return params.resolved(variant, "zcdp" if zcdp else "pure")
