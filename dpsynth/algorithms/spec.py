"""An algorithm as a declared specification, not a duck-typed module.

Each algorithm module ends with ``SPEC = AlgorithmSpec(...)``; the registry
(:mod:`dpsynth.algorithms`) lists them, and the pipeline, the config parser,
the docs tests and the privacy tests iterate over it, so a new algorithm or a
new variant is audited without editing any list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import BasicComposition, Composition

__all__ = ["AlgorithmSpec", "PlannedStage"]

_SECTIONS = frozenset({"marginals", "ranges", "conjunctions", "parities", "linear", "queries"})


@dataclass(frozen=True)
class PlannedStage:
    """One ledger stage as an algorithm will charge it, known from public facts before any data is read.

    ``epsilon``: the ε of each ledger entry of the stage, in order, when fixed by the configuration;
    ``None`` when the entries' ε are chosen at run time from noisy values (iReduct's noise-down, iResamp's
    resampling, TwoPhase's phase 2): then ``total`` is the most the stage may spend and ``charges`` the
    number of entries when that is fixed (else ``None``).  ``text``: the stage in words, for ``dpsynth plan``.

    ``per_round``: the stage is charged once per round, and consecutive ``per_round`` stages alternate in
    the ledger (MWEM: select, measure, select, measure, ...); ``charges`` is then the number of rounds
    (``None`` when the rounds are decided at run time) and ``epsilon`` lists the rounds' ε in order.
    """

    stage: str
    charges: int | None
    total: float
    epsilon: tuple[float, ...] | None = None
    delta: float = 0.0
    text: str = ""
    per_round: bool = False

    @property
    def fixed(self) -> bool:
        return self.epsilon is not None


NO_BOUNDS = ("its noise is not a per-marginal measurement of the counts with a known distribution, so no error "
             "bound follows from its outputs")


def _basic(params: Any, privacy: Any) -> Composition:
    return BasicComposition()


@dataclass(frozen=True, kw_only=True)
class AlgorithmSpec:
    """What the rest of dpsynth may know about an algorithm.

    * ``params``: a frozen keyword-only dataclass of its parameters (validated in
      ``__post_init__``; built from YAML by :func:`dpsynth.params.params_from_mapping`);
    * ``run(ctx, params, *, rng) -> AlgorithmOutput``: the release itself;
    * ``composition(params, privacy) -> Composition``: the ledger's composition rule;
    * ``workload``: the workload sections it measures (others are a config error);
    * ``preflight(domain, marginals, params)``: refuses a configuration from public
      information alone (size guards), before any data is read;
    * ``check_workload(domain, workload, params)``: the same for the other workload
      sections (a :class:`~dpsynth.workload.spec.Workload`), e.g. a query the
      algorithm could never measure with these parameters;
    * ``audit_params``: parameter variants (raw mappings, as in YAML) that the
      privacy tests must exercise: each accounting, query class and option that
      changes which mechanisms run or how they are charged;
    * ``needs_delta``: variants whose accounting needs δ > 0 (the tests give it);
    * ``budget_plan(ctx, params) -> list[PlannedStage]``: the stages ``run`` will charge, computed by the
      same budget functions ``run`` uses, from an :class:`~dpsynth.algorithms.base.AlgorithmContext`
      without data (``counts`` is ``None``; the ledger holds the charges made before the algorithm, e.g.
      the row count; ``n`` is a public figure).  ``dpsynth plan`` prints it; a test checks it against
      the ledger of real releases.
    * ``no_error_bounds``: why the report gives no error bounds for this algorithm, or ``None`` when it
      does (its released marginals are per-marginal measurements with Gaussian or Laplace noise of the
      recorded scale, and its model can be projected: :mod:`dpsynth.algorithms.bounds`).
    """

    name: str
    summary: str
    params: type
    run: Callable[..., Any]
    composition: Callable[[Any, Any], Composition] = _basic
    workload: frozenset[str] = frozenset({"marginals"})
    audit_params: tuple[Mapping[str, Any], ...] = ({},)
    preflight: Callable[[Any, Any, Any], None] | None = None
    check_workload: Callable[[Any, Any, Any], None] | None = None
    needs_delta: Callable[[Mapping[str, Any]], bool] = field(default=lambda raw: False)
    budget_plan: Callable[[Any, Any], list[PlannedStage] | None] | None = None
    no_error_bounds: str | None = NO_BOUNDS

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"algorithm name must be an identifier, got {self.name!r}")
        unknown = set(self.workload) - _SECTIONS
        if unknown or not self.workload:
            raise ValueError(f"{self.name}: workload sections must be a non-empty subset of {sorted(_SECTIONS)}")
        if not self.audit_params:
            raise ValueError(f"{self.name}: audit_params needs at least one variant (use ({{}},) for the defaults)")
        for raw in self.audit_params:  # every declared variant must be a valid configuration
            self.parse_params(raw)

    def parse_params(self, raw: Mapping[str, Any]) -> Any:
        """Validate ``algorithm.params`` (a ConfigError names the key path)."""
        return params_from_mapping(self.params, raw)

    @property
    def Params(self) -> type:
        return self.params
