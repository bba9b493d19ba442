"""The typed workload: every query class a release may measure, validated when the config is parsed.

A :class:`Workload` holds the marginals (tuples of column indices), the range
queries (:class:`~dpsynth.workload.ranges.RangeQueries`), the conjunctions
(:class:`~dpsynth.workload.conjunctions.Conjunctions`), the parities
(:class:`~dpsynth.workload.parities.Parities`) and the general linear
queries (:class:`~dpsynth.workload.linear.LinearWorkload`, read from a file)
named by the config's ``workload:`` section.  All of it is public: built from the schema and the
config's own seeds, never from the data, so it is checked (and its errors
reported, exit 64) before any row is read.  Each algorithm declares which
sections it accepts (:class:`dpsynth.algorithms.spec.AlgorithmSpec`); any other
section the user wrote is a config error, not silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_mapping, no_extra_keys
from dpsynth.workload.cellsets import CellSetQueries, parse_queries
from dpsynth.workload.conjunctions import Conjunctions, conjunction_workload
from dpsynth.workload.linear import LinearWorkload, parse_linear
from dpsynth.workload.marginals import SanityBounds, parse_marginals, parse_sanity_bounds
from dpsynth.workload.parities import Parities, parity_workload
from dpsynth.workload.ranges import RangeQueries, parse_ranges

__all__ = ["KEYS", "SECTIONS", "Workload", "parse_workload"]

SECTIONS = ("marginals", "ranges", "conjunctions", "parities", "linear", "queries")
KEYS = (*SECTIONS, "sanity_bounds")
"""Keys of ``workload:``: the query classes, and the sanity bounds of relative errors (every algorithm)."""


@dataclass(frozen=True)
class Workload:
    """The public query classes of a release.

    ``given`` names the sections the user wrote (``marginals`` defaults to all
    2-way marginals when absent); ``conjunctions`` is ``None`` when the section
    is absent (DualQuery then uses every cell of the marginals).
    """

    marginals: tuple[tuple[int, ...], ...]
    ranges: tuple[RangeQueries, ...] = ()
    conjunctions: Conjunctions | None = None
    conjunctions_spec: dict | None = None
    parities: Parities | None = None
    parities_spec: dict | None = None
    ranges_spec: Any = None
    given: frozenset[str] = frozenset()
    linear: LinearWorkload | None = None
    sanity_bounds: SanityBounds = field(default_factory=SanityBounds)
    queries: CellSetQueries | None = None

    def to_raw(self, domain: Domain) -> dict:
        """The ``workload:`` config section that parses back to this workload (marginals listed explicitly)."""
        raw: dict[str, Any] = {"marginals": [[domain.names[a] for a in m] for m in self.marginals]}
        if self.queries is not None:
            raw = {"queries": list(self.queries.spec)}
        if self.ranges_spec is not None:
            raw["ranges"] = self.ranges_spec
        if self.conjunctions_spec is not None:
            raw["conjunctions"] = dict(self.conjunctions_spec)
        if self.parities_spec is not None:
            raw["parities"] = dict(self.parities_spec)
        if self.linear is not None:  # inline, so a saved model does not depend on the query file
            raw["linear"] = self.linear.spec
        bounds = self.sanity_bounds.to_raw(domain)
        if bounds:
            raw["sanity_bounds"] = bounds
        return raw

    def describe(self, domain: Domain, sections: frozenset[str]) -> dict:
        """The report's ``workload`` entry: what the algorithm measured, by section, in column names."""
        names = domain.names
        out: dict[str, Any] = {}
        if self.queries is not None:
            out["queries"] = {"count": len(self.queries), "columns": [names[a] for a in self.queries.attrs]}
            return out
        if "marginals" in sections and "conjunctions" not in sections:  # DualQuery measures conjunctions only
            out["marginals"] = [[names[a] for a in m] for m in self.marginals]
        if "ranges" in sections and self.ranges:
            out["ranges"] = {"spec": self.ranges_spec,
                             "sets": [{"columns": [names[a] for a in q.attrs], "queries": len(q)} for q in self.ranges]}
        if "parities" in sections and self.parities is not None:  # DualQuery measures the parities instead
            out["parities"] = {"spec": self.parities_spec, "queries": len(self.parities), "k": self.parities.k,
                               "answer": "fraction of rows with an even number of the literals on (0/1 form of "
                                         "Definition 6.1; the +-1 answer is 2p-1)"}
        elif "conjunctions" in sections:
            if self.conjunctions_spec is not None:
                out["conjunctions"] = {"spec": self.conjunctions_spec, "queries": len(self.conjunctions)}
            else:
                out["conjunctions"] = {"spec": "every cell of the marginals",
                                       "marginals": [[names[a] for a in m] for m in self.marginals]}
        if "linear" in sections and self.linear is not None:
            out["linear"] = self.linear.describe(domain)
        return out


def parse_workload(raw: Any, domain: Domain, *, accepted: frozenset[str], algorithm: str) -> Workload:
    """Validate the ``workload:`` section against the schema and the algorithm's accepted sections."""
    raw = as_mapping(raw, "workload")
    no_extra_keys(raw, set(KEYS), "workload")
    for section in SECTIONS:
        if section in raw and section not in accepted:
            raise ConfigError(
                f"workload.{section}: not used by algorithm '{algorithm}', which measures "
                f"{', '.join(s for s in SECTIONS if s in accepted)}; remove the section or choose another algorithm"
            )
    queries = parse_queries(raw["queries"], domain) if raw.get("queries") is not None else None
    if queries is not None and "marginals" in raw:
        raise ConfigError("workload.marginals: a workload of counting queries (workload.queries) is released "
                          "on its own; remove workload.marginals or workload.queries")
    marginals = parse_marginals(raw.get("marginals"), domain) if queries is None else ()
    ranges = tuple(parse_ranges(raw.get("ranges"), domain))
    conj_raw = raw.get("conjunctions")
    conjunctions = conjunction_workload(conj_raw, domain, marginals) if conj_raw is not None else None
    par_raw = raw.get("parities")
    if par_raw is not None and conj_raw is not None:
        raise ConfigError("workload.parities: give either conjunctions or parities (DualQuery plays one query "
                          "class at a time)")
    parities = parity_workload(par_raw, domain) if par_raw is not None else None
    return Workload(
        marginals=marginals,
        ranges=ranges,
        conjunctions=conjunctions,
        conjunctions_spec=dict(conj_raw) if conj_raw is not None else None,
        parities=parities,
        parities_spec=dict(par_raw) if par_raw is not None else None,
        ranges_spec=raw.get("ranges"),
        given=frozenset(k for k in raw if k in SECTIONS),
        linear=parse_linear(raw.get("linear"), domain),
        sanity_bounds=parse_sanity_bounds(raw.get("sanity_bounds"), domain, marginals),
        queries=queries,
    )
