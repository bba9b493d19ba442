"""NOT PRIVATE: Oracle (Xiao et al. 2011, §5.2), the iReduct paper's yardstick.

Oracle sets each marginal's Laplace scale from the TRUE counts (the allocation
TwoPhase estimates from noisy ones), so its output is not differentially
private.  It serves benchmarks and ``dpsynth oracle``, which prints figures and writes nothing.
"""

from __future__ import annotations

import numpy as np

from dpsynth.algorithms.ireduct.twophase import oracle_scales, rescale_weights
from dpsynth.errors import ConfigError
from dpsynth.nonprivate.metrics import overall_relative_error
from dpsynth.workload.marginals import default_sanity_bound

__all__ = ["oracle_figures", "oracle_marginals", "oracle_table_figures"]


def oracle_marginals(true: list[np.ndarray], *, sensitivity: float, epsilon: float, sanity_bound,
                     rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    """NOT PRIVATE (benchmark only): Oracle noise scales from the true counts, then Laplace noise.

    ``sanity_bound``: one δ or one per marginal."""
    scales = oracle_scales(rescale_weights(true, sanity_bound), sensitivity, epsilon)
    noisy = [np.asarray(t, dtype=float) + rng.laplace(0.0, s, size=np.shape(t)) for t, s in zip(true, scales)]
    return noisy, scales


def oracle_figures(counts, workload, *, sensitivity: float, epsilon: float, sanity_bound,
                   rng: np.random.Generator) -> dict:
    """NOT PRIVATE: evaluation figures of Oracle on ``workload`` (overall error, Definition 6; scales).

    Used by ``dpsynth oracle``; the figures describe the real data and must
    never be published as a release.
    """
    true = counts.marginals(workload)
    noisy, scales = oracle_marginals(true, sensitivity=sensitivity, epsilon=epsilon, sanity_bound=sanity_bound,
                                     rng=rng)
    return {
        "method": "oracle (iReduct paper 5.2): NOT differentially private, true counts set the noise scales",
        "marginals": len(workload),
        "epsilon": epsilon,
        "sensitivity_per_marginal": sensitivity,
        "sanity_bound": float(sanity_bound) if np.ndim(sanity_bound) == 0 else [float(d) for d in sanity_bound],
        "overall_error": overall_relative_error(noisy, true, sanity_bound),
        "scale_min": float(np.min(scales)),
        "scale_max": float(np.max(scales)),
    }


def oracle_table_figures(table, config, *, rng: np.random.Generator) -> dict:
    """NOT PRIVATE, benchmarking only: :func:`oracle_figures` on ``table``'s configured marginal workload.

    The true counts choose the noise scales, so nothing computed here may be
    released; the CLI prints the figures and writes no file.
    """
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.discretize import encode
    from dpsynth.pipeline import preflight

    if config.workload.queries is not None:
        raise ConfigError("workload.queries: Oracle (iReduct §5.2) sets one noise scale per marginal; "
                          "give workload.marginals to compare with it")
    preflight(config)
    counts = ArrayCounts(encode(table, config.domain, unknown=config.unknown), config.domain)
    bounds = config.workload.sanity_bounds
    default = bounds.default or getattr(config.params, "sanity_bound", None) or default_sanity_bound(counts.n)
    delta = bounds.for_marginals(config.marginals, fallback=default) if bounds.per_marginal else default
    return oracle_figures(counts, config.marginals, sensitivity=config.privacy.neighbouring.histogram_l1,
                          epsilon=config.privacy.epsilon, sanity_bound=delta, rng=rng)
