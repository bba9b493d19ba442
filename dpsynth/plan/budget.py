"""The budget of a release as the ledger will record it, from the algorithms' own ``budget_plan``.

``plan`` does no budget arithmetic of its own: it builds the ledger a release starts with (the
algorithm's composition rule, the row count's charge when n is private) and an
:class:`~dpsynth.algorithms.base.AlgorithmContext` without data, and asks the algorithm's spec which
stages it will charge (:class:`~dpsynth.algorithms.spec.PlannedStage`).
"""

from __future__ import annotations

from dpsynth.algorithms import AlgorithmContext, get_algorithm
from dpsynth.algorithms.spec import PlannedStage
from dpsynth.config import Config
from dpsynth.data.fine import STAGE, decide, planned_charges
from dpsynth.privacy.accountant import Charge, Ledger

__all__ = ["plan_context", "planned_stages", "stage_lines"]


def _row_count_charge(epsilon: float) -> Charge:
    """The pipeline's noisy row count (``pipeline._row_count``: the geometric mechanism at sensitivity 1)."""
    return Charge(stage="row-count", mechanism="discrete-laplace", sensitivity=1.0, epsilon=epsilon,
                  rho=epsilon**2 / 2.0, measured="number of rows n")


def _fine_stage(config: Config, n: float, ledger: Ledger, available: bool) -> PlannedStage | None:
    """The fine view's stage (``pipeline``: :func:`~dpsynth.data.fine.decide` then
    :func:`~dpsynth.data.fine.measure_fine`), charged to ``ledger`` as the release will; None when it is off."""
    nb = config.privacy.neighbouring
    decision = decide(config.domain, config.decode, n=n, ledger=ledger, neighbouring=nb, available=available)
    charges = planned_charges(decision, config.domain, config.decode, ledger=ledger, neighbouring=nb)
    if not charges:
        return None
    for c in charges:
        ledger.charge(c)
    eps = tuple(c.epsilon for c in charges)
    noise = (f"discrete Gaussian sd {charges[0].scale:.3g}" if charges[0].mechanism == "discrete-gaussian"
             else f"discrete Laplace scale {charges[0].scale:.3g}")
    return PlannedStage(stage=STAGE, charges=len(charges), total=sum(eps), epsilon=eps, delta=charges[0].delta,
                        text=f"{config.decode.share:g} of the budget for fine histograms of {len(charges)} numeric "
                             f"column(s), {decision.cells} sub-cells per bin, {noise} per sub-cell (decode.fine)")


def plan_context(config: Config, n: float, *, fine_available: bool = True
                 ) -> tuple[AlgorithmContext, list[PlannedStage]]:
    """The context a release of ``config`` gives its algorithm, without data (``counts`` is ``None``), and
    the stages charged before it (the row count when n is private, the fine view when it is on); ``n`` as in
    :func:`planned_stages`; ``fine_available``: the counts engine reads raw numbers (numpy)."""
    spec = get_algorithm(config.algorithm)
    privacy = config.privacy
    ledger = Ledger(privacy.epsilon, privacy.delta, spec.composition(config.params, privacy))
    prior = []
    if privacy.n_epsilon is not None:  # n private (not privacy.n_public)
        ledger.charge(_row_count_charge(privacy.n_epsilon))
        prior.append(PlannedStage(stage="row-count", charges=1, total=privacy.n_epsilon,
                                  epsilon=(privacy.n_epsilon,),
                                  text=f"epsilon {privacy.n_epsilon:g} for a noisy row count (privacy.n)"))
    fine = _fine_stage(config, float(n), ledger, fine_available)
    if fine is not None:
        prior.append(fine)
    rows = config.output.rows if config.output.rows is not None else max(1, round(n))
    ctx = AlgorithmContext(domain=config.domain, counts=None, ledger=ledger, neighbouring=privacy.neighbouring,
                           n=float(n), rows=rows, workload=config.marginals, queries=config.workload)
    return ctx, prior


def planned_stages(config: Config, n: float, *, fine_available: bool = True) -> list[PlannedStage] | None:
    """Every stage the release of ``config`` will charge, in order, with ``n`` the public row count the
    algorithm is told (the noisy count when n is private); ``None`` when the algorithm cannot say."""
    spec = get_algorithm(config.algorithm)
    if spec.budget_plan is None:
        return None
    ctx, prior = plan_context(config, n, fine_available=fine_available)
    stages = spec.budget_plan(ctx, config.params)
    return None if stages is None else prior + list(stages)


def stage_lines(stages: list[PlannedStage]) -> list[tuple[str, str]]:
    """(stage, the budget in words) for ``dpsynth plan``."""
    return [(s.stage, s.text or f"epsilon {s.total:.4g}") for s in stages]
