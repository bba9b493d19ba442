"""Neighbouring relations and the sensitivities they imply.

* ``add-remove``: D and D' differ by adding or removing one row.  A counting
  query changes by at most 1; a histogram (any marginal table) changes in one
  cell by 1, so its L1 sensitivity is 1.  The row count n itself changes, so
  it is private unless the configuration declares it public.
* ``replace-one``: D' is D with one row replaced.  A counting query still
  changes by at most 1, but a histogram loses one in one cell and gains one in
  another: L1 sensitivity 2.  n is the same for all neighbours (public).
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
