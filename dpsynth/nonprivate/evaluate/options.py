"""What ``dpsynth evaluate`` computes: the methods compared, size limits and :class:`EvalOptions`."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.errors import UsageError

NOT_PRIVATE = (
    "NOT PRIVATE: this evaluation reads the real table; its numbers are not differentially private "
    "and must not be published"
)
METHODS = ("synthetic", "uniform", "zeros", "independent")
FULL_TABLE_MAX_CELLS = 2**20
"""Relative entropy of the full contingency table is reported for domains up to this many cells."""
RANGE_MAX_CELLS = 10_000_000
"""Range queries are answered on the joint table of the ordered columns up to this many cells."""


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """What to evaluate.  ``sanity_bound=None`` means 10⁻⁴·n (iReduct §6)."""

    ks: tuple[int, ...] = (1, 2, 3)
    sample_marginals: int | None = None
    sanity_bound: float | None = None
    ranges: int = 1000
    target: str | None = None
    folds: int = 10
    max_cells: int = 10_000_000
    workload: bool = False
    release_per_fold: bool = False

    def __post_init__(self) -> None:
        if not self.ks or any(k < 1 for k in self.ks) or len(set(self.ks)) != len(self.ks):
            raise UsageError(f"--k must list distinct integers >= 1, got {','.join(map(str, self.ks))}")
        if self.sample_marginals is not None and self.sample_marginals < 1:
            raise UsageError(f"--sample-marginals must be >= 1, got {self.sample_marginals}")
        if self.sanity_bound is not None and not self.sanity_bound > 0:
            raise UsageError(f"--sanity-bound must be > 0, got {self.sanity_bound}")
        if self.ranges < 0:
            raise UsageError(f"--ranges must be >= 0, got {self.ranges}")
        if self.workload and self.sample_marginals is not None:
            raise UsageError("--workload scores the configuration's own marginals; drop --sample-marginals")
        if self.folds < 2:
            raise UsageError(f"folds must be >= 2, got {self.folds}")
        if self.release_per_fold and self.target is None:
            raise UsageError("--release-per-fold needs --target (the class column of the Naive Bayes protocol)")
