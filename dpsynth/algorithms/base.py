"""What every algorithm receives and returns.

An algorithm is a function ``run(ctx, params, *, rng) -> AlgorithmOutput``.
``ctx`` carries the public domain and workload, the ledger it must charge, and
the private :class:`~dpsynth.data.counts.Counts` (the only access to the data).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dpsynth.data.counts import Counts
from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.models.base import Model
from dpsynth.models.estimation import LinearMeasurement
from dpsynth.models.junction import ModelTooLarge
from dpsynth.models.synthesis import DEFAULT_ITERATIONS, DEFAULT_MODEL_CELLS, fit_model
from dpsynth.privacy.accountant import Ledger
from dpsynth.privacy.neighbouring import Neighbouring
from dpsynth.progress import Progress, no_progress
from dpsynth.workload.spec import Workload

__all__ = [
    "AlgorithmContext",
    "AlgorithmOutput",
    "NoisyMarginal",
    "Progress",
    "SynthesisParams",
    "no_progress",
    "release_marginals",
    "synthesis_preflight",
]

@dataclass(frozen=True)
class AlgorithmContext:
    """Everything an algorithm may use.

    ``n`` is the row count the algorithm may use as public: the true n when the
    configuration declares it public, otherwise a noisy count already charged
    to the ledger.  ``workload`` lists marginals as tuples of attribute indices;
    ``queries`` is the whole typed workload (ranges, conjunctions), already
    validated against the sections the algorithm's spec accepts.  ``notice``
    receives human-readable remarks (from public information only) as soon as
    they are known, e.g. a warning before a long run; warnings for the report
    go in :attr:`AlgorithmOutput.warnings` as well.  ``prior``: noisy linear
    measurements released before the algorithm ran (a private discovery's
    histograms, :mod:`dpsynth.data.discover.evidence`); an estimator may use them
    beside its own, as post-processing.
    """

    domain: Domain
    counts: Counts
    ledger: Ledger
    neighbouring: Neighbouring
    n: float
    rows: int
    workload: tuple[tuple[int, ...], ...]
    queries: Workload | None = None
    progress: Progress = no_progress
    notice: Callable[[str], None] = field(default=lambda msg: None)  # remarks for stderr before a long run
    prior: tuple[LinearMeasurement, ...] = ()  # measurements already released (discovery), post-processing


@dataclass(frozen=True)
class NoisyMarginal:
    """A released (noisy) marginal: attribute indices, noisy counts and their noise scale.

    ``noise``: ``"laplace"`` (``scale`` is a Laplace/geometric scale b, standard deviation
    sqrt(2)·b; also for inverse-variance averages of Laplace draws, with the equivalent scale)
    or ``"gaussian"`` (``scale`` is the standard deviation).
    """

    attrs: tuple[int, ...]
    values: np.ndarray
    scale: float
    noise: Literal["laplace", "gaussian"] = "laplace"


@dataclass(frozen=True)
class SelectionRound:
    """One round of an adaptive selection, as the error bounds of unmeasured marginals need it (all public or
    mechanism outputs; :mod:`dpsynth.algorithms.bounds`).

    ``epsilon``, ``sensitivity``: of the exponential mechanism (weights exp(ε·u/(2Δ))); ``candidates``: how many
    it chose from; ``weight``: the chosen candidate's workload weight w (a score is w·(error − charge); 1 when
    the scores are unweighted); ``residual``: ‖y − M_r(p̂)‖₁ of the chosen marginal r's noisy values y against the model it
    was scored on (both as measured: binned when the measurement is); ``noise``, ``scale``, ``cells``: the
    measurement's noise (as :class:`NoisyMarginal`) and cell count; ``deviation``: the round's noise standard
    deviation σ, which every candidate's score was charged sqrt(2/π)·σ per cell."""

    epsilon: float
    sensitivity: float
    candidates: int
    residual: float
    noise: Literal["laplace", "gaussian"]
    scale: float
    cells: int
    deviation: float
    weight: float = 1.0


@dataclass
class SelectionLog:
    """The rounds of an adaptive selection and, per candidate marginal, the last round it was a candidate in, the
    model's marginal over its full cells then (counts), its weight, the number of cells it was scored on (fewer
    than the full cells when ``compress`` merged rare values into bins) and the model's mass then on its cells
    of merged bins (0 when none)."""

    rounds: list[SelectionRound] = field(default_factory=list)
    last_scored: dict[tuple[int, ...], tuple[int, np.ndarray, float, int, float]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class SynthesisParams:
    """How the marginal-releasing algorithms turn their noisy marginals into a model (post-processing).

    ``synthesis``: ``pgm`` (default: the noise-aware graphical model of
    :mod:`dpsynth.models.estimation`), ``mw`` or ``ipf`` (the product-of-factors model of
    :mod:`dpsynth.models.factored`, ``synthesis_passes`` passes).  ``sampling``: ``iid`` or
    ``systematic`` (low variance).  ``model_cells``: bound on the model's junction tree
    (public; marginals that do not fit are coarsened to lower-order projections).
    ``synthesis_iterations``: mirror-descent steps.
    """

    synthesis: Literal["pgm", "mw", "ipf"] = "pgm"
    sampling: Literal["iid", "systematic"] = "iid"
    model_cells: int = DEFAULT_MODEL_CELLS
    synthesis_iterations: int = DEFAULT_ITERATIONS
    synthesis_passes: int = 10

    def __post_init__(self) -> None:
        for key in ("synthesis_passes", "synthesis_iterations", "model_cells"):
            if getattr(self, key) < 1:
                raise ConfigError(f"algorithm.params.{key}: must be >= 1, got {getattr(self, key)!r}")

    def synthesis_kwargs(self) -> dict:
        return {"passes": self.synthesis_passes, "method": self.synthesis, "sampling": self.sampling,
                "max_cells": self.model_cells, "iterations": self.synthesis_iterations}


def synthesis_preflight(domain, marginals, params) -> None:
    """Refuse, before any data is read, a ``model_cells`` bound below one cell per value of every column."""
    floor = sum(domain.sizes)
    if params.synthesis == "pgm" and floor > params.model_cells:
        raise ModelTooLarge(
            f"algorithm.params.model_cells: {params.model_cells} is below the {floor} cells a model needs "
            "(one per value of every column); raise it"
        )


@dataclass
class AlgorithmOutput:
    """Result of an algorithm: the released model (or rows as codes), and what may go in the report.

    ``model`` is the released model (:class:`dpsynth.models.base.Model`), a
    function of mechanism outputs only; the pipeline draws the ``ctx.rows``
    synthetic rows from it in chunks.  ``codes``, an (rows × d) integer array
    over the domain, is set instead by algorithms whose release *is* a set of
    rows (DualQuery); they still give a ``model`` for later sampling.  ``details`` must
    contain only public values or functions of mechanism outputs (it goes into
    the report verbatim).  ``diagnostics`` holds what must NOT go into the
    report (run times, for benchmarks); it is returned to library callers only.
    ``params``: the parameters the run used after its own resolution (MWEM's variant defaults and
    accounting, DualQuery's solved T, s and eta), recorded by the report and the model file; ``None``:
    the parameters it was given.  ``selection``: an adaptive algorithm's selection rounds, for the error
    bounds of the marginals it did not measure (:class:`SelectionLog`; not in the report).
    """

    model: Model | None = None
    codes: np.ndarray | None = None
    marginals: Sequence[NoisyMarginal] = ()
    details: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)
    params: Any = None
    selection: SelectionLog | None = None


def release_marginals(ctx, params, measure, *, rng: np.random.Generator):
    """``run`` of the marginal-releasing algorithms: ``measure`` (charged), then a model of the result.

    ``measure(ctx, params, rng=rng)`` returns (noisy marginals, details, warnings); the model
    (and the rows drawn from it) is post-processing of those marginals (:func:`fit_model`), so
    it costs no extra privacy.
    """
    marginals, details, warnings = measure(ctx, params, rng=rng)
    model, details["synthesis"], synth_warnings = fit_model(
        ctx.domain, marginals, total=ctx.n, **params.synthesis_kwargs()
    )
    return AlgorithmOutput(model=model, marginals=marginals, details=details, warnings=warnings + synth_warnings)
