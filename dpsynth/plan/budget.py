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
from dpsynth.privacy.accountant import Charge, Ledger

__all__ = ["plan_context", "planned_stages", "stage_lines"]


def _row_count_charge(epsilon: float) -> Charge:
    """The pipeline's noisy row count (``pipeline._row_count``: the geometric mechanism at sensitivity 1)."""
    return Charge(stage="row-count", mechanism="discrete-laplace", sensitivity=1.0, epsilon=epsilon,
                  rho=epsilon**2 / 2.0, measured="number of rows n")


def plan_context(config: Config, n: float) -> tuple[AlgorithmContext, list[PlannedStage]]:
    """The context a release of ``config`` gives its algorithm, without data (``counts`` is ``None``), and
    the stages charged before it (the row count when n is private); ``n`` as in :func:`planned_stages`."""
    spec = get_algorithm(config.algorithm)
    privacy = config.privacy
    ledger = Ledger(privacy.epsilon, privacy.delta, spec.composition(config.params, privacy))
    prior = []
    if privacy.n_epsilon is not None:  # n private (not privacy.n_public)
        ledger.charge(_row_count_charge(privacy.n_epsilon))
        prior.append(PlannedStage(stage="row-count", charges=1, total=privacy.n_epsilon,
                                  epsilon=(privacy.n_epsilon,),
                                  text=f"epsilon {privacy.n_epsilon:g} for a noisy row count (privacy.n)"))
    rows = config.output.rows if config.output.rows is not None else max(1, round(n))
    ctx = AlgorithmContext(domain=config.domain, counts=None, ledger=ledger, neighbouring=privacy.neighbouring,
                           n=float(n), rows=rows, workload=config.marginals, queries=config.workload)
    return ctx, prior


def planned_stages(config: Config, n: float) -> list[PlannedStage] | None:
    """Every stage the release of ``config`` will charge, in order, with ``n`` the public row count the
    algorithm is told (the noisy count when n is private); ``None`` when the algorithm cannot say."""
    spec = get_algorithm(config.algorithm)
    if spec.budget_plan is None:
        return None
    ctx, prior = plan_context(config, n)
    stages = spec.budget_plan(ctx, config.params)
    return None if stages is None else prior + list(stages)


def stage_lines(stages: list[PlannedStage]) -> list[tuple[str, str]]:
    """(stage, the budget in words) for ``dpsynth plan``."""
    return [(s.stage, s.text or f"epsilon {s.total:.4g}") for s in stages]
