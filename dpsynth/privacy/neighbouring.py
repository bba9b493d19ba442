"""Neighbouring relations and the sensitivities they imply.

* ``add-remove``: D and D' differ by adding or removing one row.  A counting
  query changes by at most 1; a histogram (any marginal table) changes in one
  cell by 1, so its L1 sensitivity is 1.  The row count n itself changes, so
  it is private unless the configuration declares it public.
* ``replace-one``: D' is D with one row replaced.  A counting query still
  changes by at most 1, but a histogram loses one in one cell and gains one in
  another: L1 sensitivity 2.  n is the same for all neighbours (public).
* A linear query with q(x) ∈ [low, high]: max(|low|, |high|) under add-remove,
  high − low under replace-one (:meth:`Neighbouring.linear_sensitivity`).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Neighbouring"]


class Neighbouring(str, Enum):
    ADD_REMOVE = "add-remove"
    REPLACE_ONE = "replace-one"

    @property
    def count_sensitivity(self) -> float:
        """Sensitivity of a single counting query (number of rows satisfying a predicate)."""
        return 1.0

    def linear_sensitivity(self, low: float, high: float) -> float:
        """Sensitivity of a linear query q(B) = Σ_x q(x)·B(x) with low ≤ q(x) ≤ high on every record x
        (MWEM §2: q maps records to [−1, 1]).  Add-remove: one row adds or removes its q(x), so
        max(|low|, |high|) (≤ 1); replace-one: one row's q(x) becomes q(x′), so high − low (≤ 2; 1 for a
        0/1 counting query)."""
        if self is Neighbouring.ADD_REMOVE:
            return max(abs(float(low)), abs(float(high)))
        return float(high) - float(low)

    @property
    def histogram_l1(self) -> float:
        """L1 sensitivity of one marginal (contingency) table."""
        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0

    @property
    def histogram_l2(self) -> float:
        """L2 sensitivity of one marginal table: 1 (add-remove) or sqrt(2) (replace-one)."""
        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0**0.5

    @property
    def description(self) -> str:
        if self is Neighbouring.ADD_REMOVE:
            return "datasets differing by the addition or removal of one row (one individual)"
        return "datasets of the same size differing in the value of one row (one individual)"
