"""``auto``: choose the algorithm and its parameters from public information only.

The inputs of the choice are public: the domain (sizes), the workload, the
privacy parameters (ε, δ, the neighbouring relation) and n — public when the
configuration says so, otherwise the noisy count the pipeline has already
charged.  Nothing else is read from the data, so the choice costs no privacy
and the report can state it with its reasons.

Rules (from the measurements in docs/estimator.md, "``algorithm: auto``"):

0. n·ε < 5·d² (d: columns in the workload): too little signal for 3-way
   marginals — on every table of the grid in this regime the product of the
   noisy 1-way marginals was at least as accurate as any release of 3-way
   marginals.  Only the 1-way marginals of the workload's columns are measured
   (``laplace``; with δ > 0 ``mwem`` measures them with Gaussian noise under
   zCDP), except:
0a. δ > 0 and the pairs still carry signal — n / (mean cells of a pair · σ) ≥ 3, σ the Gaussian noise
   of one of d equal measurements of the zCDP budget (:func:`pair_signal`): ``mwem`` on the PAIRS of
   the workload's columns (no widening) with d rounds.  A wide table has few rows per 3-way cell but
   enough per 2-way cell for a sparse set of strong pairs: on the 54-column loans table (ε = 1,
   signal 3.5, 3-way L1 over a public sample of 500 triples, 3 seeds) 0.214 against 0.264 for the
   1-way release and 0.248 for MST (seed 0); on NLTCS-like Netflix (100 binary columns, 20,000 rows,
   signal 77, seed 0) 0.120 against 0.145.  Below the threshold it lost: loans at ε = 0.5 (signal
   1.8) 0.296 vs 0.286, at ε = 0.3 (1.1) 0.43 vs 0.33; rochdale at ε = 0.3 (2.7, 5 seeds) 0.310 vs
   0.298.  With δ = 0 (Laplace noise) it lost on loans at ε = 1 (0.308 vs 0.277), so δ = 0 keeps 1-way.
1a. δ > 0, marginals of 2 or more columns, and n·ε ≥ 500 × the mean cells of the workload
   marginals (after widening, below): ``aim`` (``rounds_per_column: 6``, :data:`AIM_PARAMS`) under
   zCDP — adaptive selection with budget annealing (McKenna et al. 2022).  With that many rows per
   cell, its many small rounds stay informative: on NLTCS (16 binary columns, 2,697 rows per cell at
   ε = 1) its 3-way L1 was 12 % below mwem's at ε = 1 and 11 % at ε = 0.3; below the threshold it was
   no better (Adult, 32 rows per cell: equal on average with a heavier tail) or worse (czech, 230:
   +9 %; rochdale, 83: +5 %).  docs/aim.md, "Measurements".
1. δ > 0 otherwise: ``mwem`` (default ``pgm`` variant) under zCDP with Gaussian noise — the
   estimator-in-the-loop MWEM was the most accurate release on every table of the
   grid, and Gaussian noise composes more tightly over its rounds.  Rules 1 and 3 run it with
   :func:`mwem_params` (an 80,000-cell model, 15 mirror-descent steps per round): Adult's 3-way L1
   0.151 → 0.120 at ε = 1 and 0.210 → 0.190 at ε = 0.3 (docs/aim.md, "Issue 28").  Under rule 1, where n·ε per cell of a
   workload marginal is at least :data:`ANNEAL_SIGNAL` (10), ``anneal`` is :data:`ZCDP_ANNEAL` (√2):
   held-out ε = 1, 3 seeds, 3-way L1 adult_test 0.1788 → 0.1731, COMPAS 0.1444 → 0.1369
   (docs/aim.md, "Issue 28: annealing").  On a small table (n·√(2ρ/d) under 300, ρ what the release has
   left) more of ρ measures the 1-way marginals first (:data:`INIT_SIGNAL`).
2. δ = 0 and a workload of 1-way marginals only (or none): ``laplace`` on the
   1-way marginals — every marginal is measured once with an equal share; no
   selection is worth paying for.
3. δ = 0 otherwise: ``mwem`` (``pgm`` variant, pure ε-DP with Laplace noise).

Rules 1a, 1 and 3 widen a workload whose widest marginal has 2 columns: the
candidates become the 3-column marginals that contain a workload pair (with
all their subsets, so every workload pair stays a candidate).  A 3-way
measurement constrains three pairs at once; with the default 20 rounds a
2-way workload gets at most 19 of its pairs measured (NLTCS: 19 of 120), and
on every table measured the 3-way candidates gave lower 2-way error
(docs/estimator.md, "``algorithm: auto``").

The composition rule is fixed by δ alone (zCDP when δ > 0, basic composition
otherwise), so it is known before any data is read.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms import aim, laplace, mwem
from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput
from dpsynth.algorithms.spec import AlgorithmSpec
from dpsynth.params import params_from_mapping, params_to_mapping
from dpsynth.privacy.accountant import BasicComposition, ZCDPComposition, approx_dp_to_zcdp, zcdp_available

__all__ = ["INIT_MOST", "INIT_SIGNAL", "INIT_SPLIT", "INIT_VALUES", "SPLIT_SIGNAL", "Params", "budget_plan", "choose", "chosen", "composition",
           "init_fraction", "init_signal", "mwem_params", "pair_signal", "parse_params", "run", "scoped", "widened"]


@dataclass(frozen=True, kw_only=True)
class Params:
    """``sampling``: passed to the chosen algorithm (``systematic``, the default, or ``iid``).

    Systematic (low-variance) sampling draws rows whose marginals are the model's rounded up or down
    within every group of rows sharing a separator value; on the peer benchmark's tables (δ = 10⁻⁹, all
    3-way marginals, ε = 1, mwem) it lowered the rows' 3-way L1 against i.i.d. rows from the same model
    by 2 % on Adult (0.1496 vs 0.1530, 3 seeds), 17 % on NLTCS (0.0205 vs 0.0247) and 21 % on czech
    (0.0542 vs 0.0684, 2 seeds): docs/aim.md, "Measurements"."""

    sampling: Literal["iid", "systematic"] = "systematic"


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


def composition(params: Params, privacy):
    """zCDP when δ > 0, basic composition otherwise (the choice of algorithm follows)."""
    return ZCDPComposition() if privacy.delta > 0 else BasicComposition()


MWEM_PARAMS: dict[str, object] = {"variant": "pgm", "model_cells": 80_000, "round_iterations": 15, "compress": True,
                                  "absent": True}
"""``mwem``'s parameters under rules 0a, 1 and 3: with the routed model-size bound
(:func:`~dpsynth.algorithms.mwem_pgm.merged_cells`) a 20,000-cell model kept Adult's 3-way L1 of a 200,000-cell
one (0.118 vs 0.117, 3 seeds, ε = 1) at a third of its CPU time; on the raw tables of issue 27 (benchmarks/README,
"Session 16") 80,000 cells beat 20,000 wherever the model filled them: hand-written schemas, 12 tables of 28,000-100,000
rows, seeds 0-1, 2-way L1 x0.919 (movies 0.118 → 0.095, nesarc_drinks x0.67, flights x0.80; worst scorecard x1.09),
discovered schemas x0.933 over 21 tables (seeds 2-3; no table worse, the small ones unchanged), same CPU time within
noise (119 s → 105 s for the 12); on six dev tables adult x0.865, star x0.837 (but 18 s → 72 s), wage x1.056,
loans x1.014, pums and kddcup99 unchanged; 200,000 against 80,000 was x0.997 with movies x1.33.  And 15 mirror-descent steps per round
(warm start) lost nothing against 30 (docs/aim.md, "Measurements").  ``compress``: rare values (noisy 1-way
count below 3 noise deviations) share a bin in the rounds' measurements, as MST does: held-out ε = 1, δ = 10⁻⁹,
3-way L1 COMPAS 0.1433 → 0.1319 (6 seeds), adult_test 0.1656 → 0.1605 (3 seeds) (docs/aim.md, "Issue 28:
compression").  ``absent``: values that all measurements together count at ≤ 0 get no mass in the released model
(the fit keeps the positive part of their noise): held-out 3-way L1, COMPAS ε = 1 0.1292 → 0.1273 (6 seeds),
ε = 0.3 0.2860 → 0.2771; adult_test unchanged (0.1581 → 0.1582, 0.2756 → 0.2756; 3 seeds) (docs/aim.md,
"Issue 28: sampling error")."""

ZCDP_ANNEAL = math.sqrt(2.0)
"""``mwem``'s ``anneal`` under rule 1 (zCDP) when n·ε per cell of a workload marginal is at least
:data:`ANNEAL_SIGNAL`: ρ doubles, not quadruples, when the model stops improving.  On the development tables
where the annealing fires it lowered the 3-way L1 (Adult ε = 0.5 −3 %, cps1988 −11 %, nasscds ε = 0.3 −4 %;
unchanged where it never fires), and on the held-out check adult_test 0.1788 → 0.1731, COMPAS
0.1444 → 0.1369 (ε = 1, δ = 10⁻⁹, 3 seeds).  Below the threshold (Adult ε = 0.3: +2 %, wage: +2 %) and under
pure ε-DP (rule 3: mixed, 2 seeds) mwem keeps its default 2 (docs/aim.md, "Issue 28: annealing")."""

ANNEAL_SIGNAL = 10.0
"""Rule 1: n·ε per cell of a workload marginal (after widening) from which ``anneal`` is :data:`ZCDP_ANNEAL`."""


ZCDP_BATCH = 2
"""``mwem``'s ``batch`` under rules 0a and 1 (δ > 0, zCDP): two marginals drawn and measured per round, each
with half the round's selection and measurement parts, one refit per round.  Held-out ε = 1, δ = 10⁻⁹, 3-way
L1 (in-process, paired seeds): COMPAS 0.1303 → 0.1236 (seeds 0–11) and 0.1310 → 0.1249 (seeds 12–23; 19 of
24 seeds lower), loans (rule 0a) 0.2128 → 0.1994 (3 seeds), adult_test 0.1586 → 0.1592 (8 seeds: within
noise); ε = 0.3: COMPAS 0.2720 → 0.2691 (6 seeds), adult_test 0.2756 → 0.2682 (3 seeds).  Pure ε-DP (rule 3)
keeps one per round: half the ε doubles the Laplace deviation, and COMPAS ε = 1, δ = 0 went 0.2524 → 0.2729
(12 seeds) (docs/aim.md, "Issue 28: batches (session 8)")."""


INIT_SIGNAL, INIT_MOST = 60.0, 0.5
"""Rule 1 (δ > 0): ``mwem``'s ``init_fraction`` — the part of its ρ that measures every 1-way marginal before the
rounds — is ``INIT_SIGNAL / v − 0.1``, between the variant's 0.1 and INIT_MOST, where v = n·√(2ρ/d) is n over the
Gaussian deviation of one of d equal 1-way measurements of the whole ρ (:func:`init_signal`; public: n, the ρ
the release has left, d): 0.1 wherever v ≥ 300, 0.2 at v = 200, 0.5 from v = 100.  On a small table the 1-way
marginals are the release's largest error and the 3-way rounds barely correct them: a 3-way measurement spreads
its noise over s² cells per 1-way cell.  Issue 27's raw tables, 2-way L1 under the neutral binning:

* hand-written schemas at ε = 0.7 (what a zero-config release keeps for the release), 7 tables of 2,000-2,982
  rows, seeds 0-1, a fixed init 0.1 → 0.3: x0.847, → 0.5: x0.829 (acs_2012 0.256 → 0.180);
* this rule, 27 tables of 2,000-6,000 rows, seeds 2-3: hand-written schemas x0.953 (ces_abortion x0.868, planes
  x0.870; worse county_jobless x1.030, city_weather x1.029), zero-config x0.972 (infant_pneumonia x0.846,
  kershaw x0.901; worse exam x1.071, wilms_tumor x1.028); 11 zero-config tables of 4,400-6,400 rows where it
  applies: x1.002 (credit x1.064, doctor_visits_aus x0.960);
* ``INIT_SIGNAL / v`` without the − 0.1 (0.1 from v = 600) was x0.940 / x0.968 on the 27 but lost on larger
  tables: 0.3 fixed on hand schemas, world_airfields (v 1,551) x1.29, vietnam_medical x1.13, zip_codes x1.07,
  and zero-config tables of 6,000-13,000 rows mixed (cricketers x1.077, innsbruck_rain x1.083).

benchmarks/README.md, "Changes of session 18"."""


INIT_SPLIT = 2.0 / 3.0
"""Rule 1 (δ > 0), columns of different sizes: ``mwem``'s ``init_split`` — the initial 1-way measurements share
``init_fraction`` in proportion to sᵢ^(2/3), sᵢ the column's values, which minimises their summed expected L1
error Σ sᵢ/√ρᵢ under zCDP (equal parts: (Σ sᵢ)·√d/√ρ; split: (Σ sᵢ^(2/3))^(3/2)/√ρ).  Issue 27's raw tables,
2-way L1 under the neutral binning, seeds 2-3, against equal parts: 27 tables of 2,000-6,000 rows, hand-written
schemas x0.956 (us_airports x0.769, ucla_courses x0.776; worse wilms_tumor x1.070, migraine x1.049), zero-config
x0.991 (worse email x1.040, infant_pneumonia x1.037); 37 zero-config tables of 4,000-42,000 rows x0.999.  Only
where v = :func:`init_signal` is under :data:`SPLIT_SIGNAL`: on hand-written schemas of larger tables, whose
1-way marginals are measured well anyway, it lost a little where a column has hundreds of values (zip_codes, v
3,149, x1.030; vietnam_medical x1.040; world_airfields x1.020; 9 tables of 6,000-43,000 rows x0.997, seeds 0-1);
benchmarks/README.md, "Changes of session 18"."""

SPLIT_SIGNAL = 600.0
"""Rule 1: :data:`INIT_SPLIT` applies where :func:`init_signal` is below this (about 15,000 rows of 10 columns)."""


def init_signal(*, n: float, rho: float, d: int) -> float:
    """v = n·√(2ρ/d): rows per Gaussian deviation of one of d equal 1-way measurements of ρ (public facts)."""
    return float(n * math.sqrt(2.0 * rho / d)) if d > 0 and rho > 0 else math.inf


INIT_VALUES = 4.0
"""Rule 1: :data:`INIT_SIGNAL` applies only when the workload's columns hold at least this many values on average.
A round's 3-way measurement tells a 1-way cell through the s² cells that sum to it (s values per column), so with
binary columns the rounds already measure the 1-way marginals well: czech (1,841 rows, 6 binary columns) and
rochdale (665 rows, 7 binary columns) lost with the rule, 3-way L1 at ε = 1, δ = 10⁻⁹, seeds 0-5: 0.0446 → 0.0636
and 0.129 → 0.155."""


def init_fraction(*, n: float, rho: float, sizes) -> float:
    """:data:`INIT_SIGNAL` / :func:`init_signal` − 0.1, between ``mwem``'s default 0.1 and :data:`INIT_MOST`, for
    columns of at least :data:`INIT_VALUES` values on average; 0.1 otherwise."""
    if not len(sizes) or float(np.mean(sizes)) < INIT_VALUES:
        return 0.1
    return float(min(INIT_MOST, max(0.1, INIT_SIGNAL / init_signal(n=n, rho=rho, d=len(sizes)) - 0.1)))


def mwem_params(sizes, *, delta: float = 0.0, per_cell: float = 0.0, init: float = 0.1) -> dict[str, object]:
    """:data:`MWEM_PARAMS`, with room for twice the 1-way model on a domain of many values (public), at most
    ``mwem``'s default bound; with δ > 0 (zCDP) ``batch`` :data:`ZCDP_BATCH`, with ``per_cell`` (n·ε per cell
    of a workload marginal) at least :data:`ANNEAL_SIGNAL` also ``anneal`` :data:`ZCDP_ANNEAL`, and an ``init``
    above the variant's 0.1 (:func:`init_fraction`) as ``init_fraction``."""
    room = max(int(MWEM_PARAMS["model_cells"]), min(200_000, 2 * int(sum(sizes))))  # type: ignore[call-overload]
    zcdp: dict[str, object] = {"batch": ZCDP_BATCH} if delta > 0 else {}
    if delta > 0 and per_cell >= ANNEAL_SIGNAL:
        zcdp["anneal"] = ZCDP_ANNEAL
    if delta > 0 and init > 0.1:
        zcdp["init_fraction"] = round(init, 4)
    return {**MWEM_PARAMS, "model_cells": room, **zcdp}


AIM_PARAMS: dict[str, object] = {"rounds_per_column": 6}
"""``aim``'s parameters under rule 1 (docs/aim.md, "Measurements")."""

RICH_SIGNAL = 500.0
"""Rule 1a: δ > 0 and n·ε at least this many times the mean cells of a workload marginal (after widening)
runs ``aim``."""


def cells_per_marginal(workload, sizes) -> float:
    """Mean number of cells of the marginals the chosen algorithm will be given (the workload, widened to
    3 columns when its widest marginal has 2 and it spans 3 or more columns), at least 1 (public)."""
    widest = max((len(m) for m in workload), default=0)
    d = len({a for m in workload for a in m})
    marginals = widened(workload) if widest == 2 and d >= 3 else tuple(workload)
    if not marginals:
        return 1.0
    return max(1.0, float(np.mean([np.prod([sizes[a] for a in m], dtype=float) for m in marginals])))


LOW_SIGNAL = 5.0
"""Rule 0: n·ε below this many times d² measures the 1-way marginals only (unless rule 0a)."""

PAIR_SIGNAL = 3.0
"""Rule 0a: δ > 0 and :func:`pair_signal` at least this runs ``mwem`` on the pairs with d rounds."""


def pair_signal(*, n: float, epsilon: float, delta: float, sizes, columns) -> float:
    """n / (mean cells of a pair of ``columns`` · σ), σ = √(d / 2ρ) the Gaussian noise of one of d equal
    measurements of ρ, the zCDP budget of (ε, δ) under the Bun–Steinke conversion ε = ρ + 2√(ρ ln 1/δ) (public:
    n, ε, δ and the domain only).  :data:`PAIR_SIGNAL` was measured on this scale, before the ledger converted
    with the tighter bound of :func:`~dpsynth.privacy.accountant.approx_dp_to_zcdp` (27 % more ρ at ε = 1,
    δ = 10⁻⁹), so the rule keeps it: a signal, not the noise a run draws."""
    cols = sorted(columns)
    d = len(cols)
    if d < 2 or delta <= 0:
        return 0.0
    s = np.asarray([sizes[a] for a in cols], dtype=float)
    cells = (s.sum() ** 2 - (s * s).sum()) / (d * (d - 1))  # the mean of s_i·s_j over the pairs i < j
    log_inv = math.log(1.0 / delta)
    rho = (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2  # the Bun–Steinke inverse (docstring)
    sigma = np.sqrt(d / (2.0 * rho))
    return float(n / (cells * sigma))


def choose(*, workload, delta: float, n: float, epsilon: float, sizes,
           rho: float | None = None) -> tuple[str, dict, list[str]]:
    """(algorithm name, its raw params, reasons) from public facts only (module docstring).

    A name ending in ``:1-way`` means: that algorithm on the 1-way marginals of the workload's columns;
    ``:2-way`` on all pairs of them; ``:3-way`` on :func:`widened`.  ``rho``: the zCDP budget the release has
    left (after a discovery on the same ledger); by default all of (ε, δ)'s.
    """
    widest = max((len(m) for m in workload), default=0)
    d = len({a for m in workload for a in m})
    facts = (f"n = {n:.0f}, epsilon = {epsilon:g}, delta = {delta:g}, {len(sizes)} columns, "
             f"{len(workload)} workload marginals of up to {widest} columns")
    if widest > 1 and n * epsilon < LOW_SIGNAL * d * d:
        signal = pair_signal(n=n, epsilon=epsilon, delta=delta, sizes=sizes,
                             columns={a for m in workload for a in m})
        if delta > 0 and signal >= PAIR_SIGNAL:
            why = (f"n*epsilon = {n * epsilon:.0f} < {LOW_SIGNAL:g}*d^2 = {LOW_SIGNAL * d * d:.0f} (d = {d} columns): "
                   f"too little signal for 3-way marginals, but n / (mean cells of a pair x noise of one of d "
                   f"measurements) = {signal:.1f} >= {PAIR_SIGNAL:g}: mwem on the pairs of the workload's columns "
                   f"with d = {d} rounds under zCDP (beat the 1-way release on the wide tables measured)")
            return "mwem:2-way", {**mwem_params(sizes, delta=delta), "iterations": d}, [facts, why]
        why = (f"n*epsilon = {n * epsilon:.0f} < {LOW_SIGNAL:g}*d^2 = {LOW_SIGNAL * d * d:.0f} (d = {d} columns): "
               "too little signal for higher-order marginals; only the 1-way marginals are measured "
               "(the independence release was the most accurate in this regime)")
        return ("mwem:1-way", {"variant": "pgm"}, [facts, why]) if delta > 0 else ("laplace:1-way", {}, [facts, why])
    if delta <= 0 and widest <= 1:
        why = "only 1-way marginals requested: each is measured once (laplace), selection would cost budget for nothing"
        return "laplace", {}, [facts, why]
    per_cell = n * epsilon / cells_per_marginal(workload, sizes)
    raw: dict[str, object]
    if delta > 0 and widest > 1 and per_cell >= RICH_SIGNAL:
        why = (f"delta > 0 and n*epsilon per cell of a workload marginal = {per_cell:.0f} >= {RICH_SIGNAL:g}: aim "
               "(adaptive selection on the graphical model, budget annealing) under zCDP with Gaussian noise; with "
               "this many rows per cell its many small rounds stay informative (lower 3-way error than mwem where "
               "measured)")
        name, raw = "aim", dict(AIM_PARAMS)
    elif delta > 0:
        left = approx_dp_to_zcdp(epsilon, delta) if rho is None else rho
        cols = sorted({a for m in workload for a in m})
        init = init_fraction(n=n, rho=left, sizes=[sizes[a] for a in cols])
        raw = mwem_params(sizes, delta=delta, per_cell=per_cell, init=init)
        if len({sizes[a] for a in cols}) > 1 and init_signal(n=n, rho=left, d=d) < SPLIT_SIGNAL:
            raw["init_split"] = round(INIT_SPLIT, 4)
        anneal = (f"; n*epsilon per cell = {per_cell:.0f} >= {ANNEAL_SIGNAL:g}: rho doubles (not quadruples) when "
                  "the model stops improving" if "anneal" in raw else "")
        first = (f"; n*sqrt(2 rho/d) = {init_signal(n=n, rho=left, d=d):.0f} < {INIT_SIGNAL / 0.2:.0f} "
                 f"(rho = {left:.4g}, what the release has left): "
                 f"{raw['init_fraction']:g} of rho measures the 1-way marginals first (the largest error of a "
                 "small table)" if "init_fraction" in raw else "")
        split = ("; the 1-way measurements share it by (column values)^(2/3), the least summed error"
                 if "init_split" in raw else "")
        why = ("delta > 0: mwem (estimator in the loop) under zCDP with Gaussian noise, "
               f"the most accurate release measured, {ZCDP_BATCH} marginals per round" + anneal + first + split)
        name = "mwem"
    else:
        why = ("marginals of 2 or more columns: mwem (estimator in the loop), the most accurate release measured, "
               "pure epsilon-DP")
        name, raw = "mwem", mwem_params(sizes)
    if widest == 2 and d >= 3:
        widen = (f"widest workload marginal has 2 columns: {name}'s candidates are the 3-column marginals containing "
                 "a workload pair (a 3-way measurement constrains three pairs; lower 2-way error on every table "
                 "measured)")
        return f"{name}:3-way", raw, [facts, why, widen]
    return name, raw, [facts, why]


def widened(workload) -> tuple[tuple[int, ...], ...]:
    """The 3-column marginals that contain a pair of ``workload`` (columns of the workload only), sorted.

    Every pair of the workload lies in at least one of them when the workload spans 3 or more columns,
    so MWEM's candidates (these and all their subsets) keep every workload marginal."""
    cols = sorted({a for m in workload for a in m})
    pairs = {tuple(sorted(m)) for m in workload if len(m) == 2}
    out = {tuple(sorted((*p, c))) for p in pairs for c in cols if c not in p}
    return tuple(sorted(out))


def scoped(scope: str, workload) -> tuple[tuple[int, ...], ...]:
    """The workload the chosen algorithm is given, by the scope after the ``:`` of its name (:func:`choose`)."""
    cols = sorted({a for m in workload for a in m})
    if scope == "1-way":
        return tuple((a,) for a in cols)
    if scope == "2-way":
        return tuple(itertools.combinations(cols, 2))
    if scope == "3-way":
        return widened(workload)
    return tuple(workload)


def chosen(ctx: AlgorithmContext, params: Params):
    """(the chosen algorithm's spec, its params, the context it runs with, name, raw params, reasons)."""
    rho = zcdp_available(ctx.ledger) if ctx.ledger.delta > 0 else None  # what a discovery on the ledger left
    name, raw, why = choose(workload=ctx.workload, delta=ctx.ledger.delta, n=ctx.n, epsilon=ctx.ledger.epsilon,
                            sizes=ctx.domain.sizes, rho=rho)
    base, _, scope = name.partition(":")
    module = {"mwem": mwem, "laplace": laplace, "aim": aim}[base]
    chosen_params = module.SPEC.parse_params({**raw, "sampling": params.sampling})
    ctx = dataclasses.replace(ctx, workload=scoped(scope, ctx.workload))
    return module.SPEC, chosen_params, ctx, name, raw, why


def budget_plan(ctx: AlgorithmContext, params: Params):
    """The chosen algorithm's plan (``None`` while that algorithm has no ``budget_plan``)."""
    spec, chosen_params, ctx, _, _, _ = chosen(ctx, params)
    return spec.budget_plan(ctx, chosen_params) if spec.budget_plan is not None else None


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    spec, chosen_params, ctx, name, _, why = chosen(ctx, params)
    out = spec.run(ctx, chosen_params, rng=rng)
    used = out.params if out.params is not None else chosen_params  # after the chosen algorithm's resolution
    out.details = {"auto": {"chosen": name, "params": params_to_mapping(used), "why": why}, **out.details}
    out.params = params
    return out


SPEC = AlgorithmSpec(
    name="auto",
    summary="Chooses the algorithm and its parameters from public information (n, epsilon, delta, domain, workload)",
    params=Params,
    run=run,
    composition=composition,
    workload=frozenset({"marginals"}),
    audit_params=({},),
    budget_plan=budget_plan,
    no_error_bounds=None,
)
