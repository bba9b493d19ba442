"""The privacy-budget report (JSON, ``schema_version`` 1; schema in ``report.schema.json``).

The report contains only public facts (configuration, schema, workload, tool
version) and outputs of mechanisms (noisy counts, choices, their costs).  It
never holds the true row count (unless the configuration declares n public and
the output size equals it), an input hash, null counts or run times.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

from dpsynth._version import __version__
from dpsynth.algorithms import get_algorithm
from dpsynth.config import Config, large_epsilon_warning
from dpsynth.params import params_to_mapping
from dpsynth.privacy.accountant import Ledger, exact_sum

__all__ = ["RANDOMNESS", "SCHEMA_VERSION", "build_report", "report_schema", "summarize", "validate_report"]

SCHEMA_VERSION = 1
_MAX_LISTED_VALUES = 200
RANDOMNESS = {True: "seeded", False: "os-entropy", None: "caller-supplied generator"}


def report_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the report."""
    text = resources.files("dpsynth").joinpath("report.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def validate_report(report: dict) -> None:
    """Raise ``jsonschema.ValidationError`` if ``report`` does not match the schema."""
    import jsonschema

    jsonschema.validate(report, report_schema())


def _n_statement(config: Config) -> dict:
    p = config.privacy
    if p.neighbouring.value == "replace-one":
        return {
            "mode": "public",
            "statement": "under replace-one neighbours every neighbouring dataset has the same "
            "number of rows, so n is public; the synthetic row count may equal it",
        }
    if p.n_public:
        return {
            "mode": "public",
            "statement": "n (the number of input rows) is treated as public information, as "
            "declared by the configuration (privacy.n: public); it is used without noise and "
            "the synthetic row count may equal it. The guarantee therefore holds between "
            "datasets that differ by one row and whose size n is known; set privacy.n to "
            "{epsilon: ...} to protect n as well",
        }
    return {
        "mode": "noisy",
        "epsilon": p.n_epsilon,
        "statement": "n is private: a noisy count (discrete Laplace, sensitivity 1) was released "
        "and charged to the ledger; the algorithm used only the noisy count",
    }


def _basic_note(ledger_dict: dict) -> str:
    if ledger_dict["epsilon_spent_basic"] == ledger_dict["epsilon_spent"]:
        return "the guarantee is basic sequential composition: epsilon_spent is the sum of the ledger"
    return (
        "epsilon_spent_basic is a LOOSE upper bound (the plain sum of the ledger's charges, basic composition), "
        f"shown for auditing only; the guarantee is epsilon_spent = {ledger_dict['epsilon_spent']:.4g} "
        f"under {ledger_dict['composition']} composition"
    )


def _replace_one(config: Config, ledger: Ledger) -> dict:
    """The guarantee between equal-size datasets differing in one row's value (issue 13 §2)."""
    declared = config.privacy.neighbouring.value
    eps, delta = ledger.replace_one_equivalent(declared)
    if declared == "replace-one":
        why = "the declared relation is replace-one: this is the guarantee itself"
    else:
        n = "n is public (the release is eps-DP under add-remove for every fixed n)" if config.privacy.n_public \
            else "n is private (a noisy count was charged)"
        if ledger.composition.name == "zcdp":
            rule = "group privacy for two rows in zCDP (4 rho, Bun & Steinke 2016 Prop. 1.9), same delta"
        else:
            rule = "group privacy for two rows: (2 eps, (1 + e^eps) delta)"
        why = (f"declared add-remove and {n}; replacing one row is removing it and adding another, so "
               f"by {rule}. Between two datasets of the same size that differ in one row the guarantee is "
               f"epsilon={eps:.6g}, delta={delta:.3g}, not the add-remove figure")
    return {"epsilon": eps, "delta": delta, "statement": why}


def _domain(config: Config) -> list[dict]:
    out = []
    for col in config.domain.to_dict():
        if len(col["values"]) > _MAX_LISTED_VALUES:
            col = {**col, "values": None}
        out.append(col)
    return out


def build_report(
    config: Config,
    ledger: Ledger,
    *,
    details: dict,
    warnings: list[str],
    rows: int,
    seeded: bool | None,
    marginals_released: int,
) -> dict[str, Any]:
    """Assemble the report dictionary (see ``report.schema.json``).

    ``seeded``: True (a fixed seed), False (the CLI's generator from OS
    entropy) or None (a generator supplied by a library caller: unknown).
    """
    ledger_dict = ledger.to_dict()
    names = config.domain.names
    warnings = list(warnings)
    large = large_epsilon_warning(config.privacy.epsilon)
    if large is not None:
        warnings.insert(0, large)
    if seeded:
        warnings.insert(
            0,
            "this release was produced with a fixed seed: its noise can be reproduced by anyone "
            "who knows the seed; seeded runs are for testing only, never publish them",
        )
    elif seeded is None:
        warnings.insert(
            0,
            "the randomness came from a generator supplied by the caller (Python API); dpsynth cannot "
            "tell whether it was seeded: publish only releases made with np.random.default_rng() (OS entropy)",
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "dpsynth", "version": __version__},
        "algorithm": {
            "name": config.algorithm,
            "params": params_to_mapping(config.params),
            "details": details,
        },
        "privacy": {
            "epsilon_requested": config.privacy.epsilon,
            "delta_requested": config.privacy.delta,
            "epsilon_spent": ledger_dict["epsilon_spent"],
            "delta_spent": ledger_dict["delta_spent"],
            "neighbouring": config.privacy.neighbouring.value,
            "neighbouring_description": config.privacy.neighbouring.description,
            "privacy_unit": "one row of the input table",
            "n": _n_statement(config),
            "replace_one": _replace_one(config, ledger),
            "composition": {
                "theorem": ledger_dict["composition"],
                "description": ledger_dict["composition_description"],
                "epsilon_spent_basic": ledger_dict["epsilon_spent_basic"],
                "delta_spent_basic": ledger_dict["delta_spent_basic"],
                "basic_note": _basic_note(ledger_dict),
            },
            "public_information": [
                "the configuration: schema (columns, bins, categories), workload, algorithm parameters",
                "the number of input rows n" if _n_statement(config)["mode"] == "public" else "nothing about n",
            ],
        },
        "ledger": ledger_dict["charges"],
        "workload": config.workload.describe(config.domain, get_algorithm(config.algorithm).workload),
        "domain": _domain(config),
        "randomness": {"source": RANDOMNESS[seeded]},
        "output": {
            "rows": int(rows),
            "columns": list(names),
            "numeric_decoding": config.output.numeric,
            "noisy_marginals_released": int(marginals_released),
        },
        "warnings": warnings,
    }


# ------------------------------------------------------------------- schema discovery
def build_discovery_report(discovery, ledger: Ledger, *, neighbouring, seeded: bool, settings: dict) -> dict[str, Any]:
    """Report of ``dpsynth schema discover``: ledger, what each column learned, what was public.

    ``discovery`` is a :class:`dpsynth.data.discover.Discovery`; ``settings`` the public discovery
    settings (max_categories, bins, edges).
    """
    ledger_dict = ledger.to_dict()
    warnings = []
    if seeded:
        warnings.append("this discovery was produced with a fixed seed: its noise can be reproduced by anyone "
                        "who knows the seed; seeded runs are for testing only, never publish them")
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "schema-discovery",
        "tool": {"name": "dpsynth", "version": __version__},
        "privacy": {
            "epsilon_requested": ledger.epsilon,
            "delta_requested": ledger.delta,
            "epsilon_spent": ledger_dict["epsilon_spent"],
            "delta_spent": ledger_dict["delta_spent"],
            "neighbouring": neighbouring.value,
            "neighbouring_description": neighbouring.description,
            "privacy_unit": "one row of the input table",
            "composition": {"theorem": ledger_dict["composition"],
                            "description": ledger_dict["composition_description"]},
            "public_information": list(discovery.public),
        },
        "settings": dict(settings),
        "ledger": ledger_dict["charges"],
        "columns": discovery.columns,
        "schema": discovery.schema,
        "randomness": {"source": "seeded" if seeded else "os-entropy"},
        "warnings": warnings,
    }


def add_discovery(report: dict[str, Any], discovery, discovery_ledger: Ledger, *, epsilon: float,
                  delta: float, shared: bool = False) -> dict[str, Any]:
    """A release report that covers the schema discovery run before it in the same budget.

    ``shared``: the discovery charged the release's own (zCDP) ledger, so the report's ledger and totals already
    include it; ``discovery_ledger`` then holds just the discovery's charges (for its own figures).  Otherwise the
    discovery had its own ledger: its charges come first in the ledger, and ``epsilon_spent``/``delta_spent``,
    the replace-one figure and the basic-composition figure compose the two phases sequentially.
    ``epsilon_requested``/``delta_requested`` are the whole budget (``epsilon``, ``delta``).
    """
    rel = report["privacy"]
    if shared:
        out = dict(report)
        d_eps, d_delta = discovery_ledger.spent()
        out["privacy"] = {**rel, "discovery": {"epsilon_spent": d_eps, "delta_spent": d_delta}}
        statement = ("the schema was learned from the data by private discovery (schema.discover) in the same "
                     "zCDP ledger as the release: its charges are the first ledger entries (stage 'discover', "
                     "discrete Gaussian noise), and every total above includes them; epsilon_spent/delta_spent "
                     "here are what the discovery alone would spend")
    else:
        out = _with_discovery(report, discovery_ledger.spent(),
                              discovery_ledger.replace_one_equivalent(rel["neighbouring"]),
                              charges=[c.to_dict() for c in discovery_ledger.charges])
        statement = ("the schema was learned from the data by private discovery (schema.discover) before the "
                     "release; its charges are the first ledger entries (stage 'discover'), and the totals compose "
                     "the discovery and the release sequentially (their epsilons and deltas add up)")
    out["privacy"].update(epsilon_requested=epsilon, delta_requested=delta)
    out["privacy"]["discovery"].update(
        release_epsilon_budget=rel["epsilon_requested"],
        release_delta_budget=rel["delta_requested"],
        statement=statement,
        columns=discovery.columns,
    )
    out["privacy"]["public_information"] = [
        ("the configuration: discovery hints and settings, workload, algorithm parameters; the schema "
        "itself is the output of the discovery mechanisms"),
        *rel["public_information"][1:],
        *discovery.public,
    ]
    dropped = {k: v["dropped"] for k, v in discovery.columns.items() if "dropped" in v}
    out["warnings"] = [*report["warnings"], *(f"column '{k}' is not in the release: {why}" for k, why in dropped.items())]
    return out


def _with_discovery(report: dict[str, Any], spent: tuple[float, float], replace_one: tuple[float, float], *,
                    charges: list[dict]) -> dict[str, Any]:
    """The report with a discovery phase composed before it (basic composition of the phases' totals)."""
    from dpsynth.privacy.accountant import sequential_spent

    rel = report["privacy"]
    ledger = charges + list(report["ledger"])
    if rel["composition"]["theorem"] == "basic":  # one exact sum over both phases' charges
        eps, dlt = sequential_spent([(c["epsilon"], c["delta"]) for c in ledger]) if charges else \
            sequential_spent([spent, (rel["epsilon_spent"], rel["delta_spent"])])
    else:
        eps, dlt = sequential_spent([spent, (rel["epsilon_spent"], rel["delta_spent"])])
    ro_eps, ro_delta = sequential_spent([replace_one, (rel["replace_one"]["epsilon"], rel["replace_one"]["delta"])])
    b_eps, b_delta = sequential_spent([spent, (rel["composition"]["epsilon_spent_basic"],
                                               rel["composition"]["delta_spent_basic"])])
    out = dict(report)
    out["ledger"] = ledger
    out["privacy"] = {
        **rel,
        "epsilon_spent": eps,
        "delta_spent": dlt,
        "replace_one": {"epsilon": ro_eps, "delta": ro_delta,
                        "statement": rel["replace_one"]["statement"].split(". Between")[0]
                        + f"; the schema discovery adds its own replace-one figure (epsilon={replace_one[0]:.6g}, "
                        f"delta={replace_one[1]:.3g}). Between two datasets of the same size that differ in one row "
                        f"the guarantee is epsilon={ro_eps:.6g}, delta={ro_delta:.3g}"},
        "composition": {**rel["composition"], "epsilon_spent_basic": b_eps, "delta_spent_basic": b_delta},
        "discovery": {"epsilon_spent": spent[0], "delta_spent": spent[1]},
    }
    return out


# ------------------------------------------------------------------- for people
def _guarantee_lines(p: dict) -> list[str]:
    """The guarantee under both neighbouring relations (from the report's own figures when present)."""
    eps, delta = p["epsilon_spent"], p["delta_spent"]
    both = p.get("guarantees") or p.get("by_neighbouring")
    if isinstance(both, dict):
        return [f"- {rel}: {val}" for rel, val in both.items()]
    d = f", delta {delta:.3g}" if delta else ""
    if p["neighbouring"] == "add-remove":
        ro = p.get("replace_one") or {"epsilon": 2 * eps, "delta": delta * (1 + math.exp(eps))}
        return [
            f"- add-remove (adding or removing one row), as configured: epsilon {eps:.4g}{d}",
            f"- replace-one (changing one row): at most epsilon {ro['epsilon']:.4g}"
            + (f", delta {ro['delta']:.3g}" if ro["delta"] else "")
            + " (a replacement is a removal plus an addition: group privacy for 2 rows)",
        ]
    return [
        f"- replace-one (changing one row), as configured: epsilon {eps:.4g}{d}",
        "- add-remove: no guarantee follows (under replace-one the row count n is public and unprotected)",
    ]


_MAX_SHOWN = 30
"""``report show`` prints bounds per marginal up to this many workload marginals, per class beyond."""


def _fmt(bound) -> str:
    if bound is None:
        return "no bound"
    return "2 (vacuous)" if bound >= 2 else f"{bound:.4f}"


def _bound_lines(bounds: dict | None) -> list[str]:
    """The error-bounds section: per marginal (up to :data:`_MAX_SHOWN`) or per class (marginal order)."""
    if bounds is None:
        return []
    level = f"{bounds['level']:.0%}"
    if not bounds["available"]:
        return ["", "## Error bounds", f"- no bound: {bounds['reason']}"]
    lines = ["", "## Error bounds",
             (f"L1 distance between the true and the model's normalised marginal is at most the bound with "
              f"probability >= {level} for each marginal (computed from mechanism outputs only; rows' sampling "
              "error not included).")]
    listed = bounds.get("marginals")
    if listed is not None and len(listed) <= _MAX_SHOWN:
        lines += ["| marginal | bound | level | measured |", "|---|---|---|---|"]
        lines += [f"| {', '.join(m['marginal'])} | {_fmt(m['bound'])} | {level} | {m['measured']} |" for m in listed]
    else:
        lines += ["| class | marginals | bounded | median bound | max bound | level |", "|---|---|---|---|---|---|"]
        lines += [f"| {c['class']} | {c['marginals']} | {c['bounded']} | {_fmt(c['median_bound'])} | "
                  f"{_fmt(c['max_bound'])} | {level} |" for c in bounds["classes"]]
    if "reason_unbounded" in bounds:
        lines.append(f"- {bounds['reason_unbounded']}")
    return lines


def summarize(report: dict) -> str:
    """A Markdown summary of a report for a privacy officer: what, guarantee, budget, public, warnings."""
    p, alg, out = report["privacy"], report["algorithm"], report["output"]
    lines = [
        f"# dpsynth release report (dpsynth {report['tool']['version']})",
        "",
        "## What was released",
        f"- {out['rows']:,} synthetic rows with columns: {', '.join(out['columns'])}",
        f"- algorithm: {alg['name']}",
        f"- noisy marginals released: {out['noisy_marginals_released']}",
        f"- workload: {len(report['workload']['marginals'])} marginals",
        f"- randomness: {report['randomness']['source']}",
        "",
        "## Guarantee",
        (f"Unit of privacy: {p['privacy_unit']}. Spent epsilon {p['epsilon_spent']:.4g} of {p['epsilon_requested']:.4g}, "
        f"delta {p['delta_spent']:.3g} of {p['delta_requested']:.3g}, by {p['composition']['theorem']} composition."),
        *_guarantee_lines(p),
    ]
    basic = p["composition"]["epsilon_spent_basic"]
    if basic != p["epsilon_spent"]:
        lines.append(f"- basic composition would give epsilon {basic:.4g}: a loose upper bound, not the guarantee")
    lines += ["", "## Budget per stage", "| stage | mechanism | calls | noisy values | epsilon |", "|---|---|---|---|---|"]
    stages: dict[tuple[str, str], list] = {}
    for c in report["ledger"]:
        stages.setdefault((c["stage"], c["mechanism"]), []).append(c)
    for (stage, mech), charges in stages.items():
        total = exact_sum([c["epsilon"] for c in charges])
        lines.append(f"| {stage} | {mech} | {len(charges)} | {sum(c['count'] for c in charges):,} | {float(total):.4g} |")
    lines += _bound_lines(report.get("error_bounds"))
    lines += ["", "## Public (not protected)", *[f"- {x}" for x in p["public_information"]],
              f"- n: {p['n']['statement']}", "", "## Warnings"]
    lines += [f"- {w}" for w in report["warnings"]] or ["- none"]
    return "\n".join(lines) + "\n"
