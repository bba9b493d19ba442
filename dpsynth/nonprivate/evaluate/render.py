"""Text rendering of an evaluation result (rich tables, for the CLI)."""

from __future__ import annotations


def summary_tables(result: dict) -> list:
    """Rich tables (and one-line notes) of an :func:`evaluate` result, in a fixed order (for the CLI)."""
    from rich.table import Table

    def fmt(x) -> str:
        return "—" if x is None else f"{x:.4g}"

    tables = _neutral_tables(result, fmt) if "neutral" in result else []
    own = ", in the release's own bins" if "neutral" in result else ""
    cols = [("l1_mean", "L1 mean"), ("l1_max", "L1 max"), ("cell_error_mean", "cell err mean"),
            ("cell_error_max", "cell err max"), ("cuboid_error_mean", "cuboid err mean"),
            ("cuboid_error_max", "cuboid err max"), ("relative_error", "rel. err")]
    for block in result["marginals"]:
        t = Table(title=f"{block['k']}-way marginals: {block['marginals_evaluated']} of {block['marginals_total']}"
                  + (f" ({block['marginals_skipped_too_large']} too large, skipped)" if block["marginals_skipped_too_large"] else "")
                  + own,
                  title_justify="left")
        t.add_column("method")
        for _, label in cols:
            t.add_column(label, justify="right")
        for method in result["methods"]:
            m = (block["metrics"] or {}).get(method, {})
            t.add_row(method, *[fmt(m.get(key)) for key, _ in cols])
        tables.append(t)
    answers = bool(result.get("queries") and "released" in result["queries"]["relative_error_mean"])
    released = bool(result["released_marginals"]) or answers
    source = "the release report's query answers" if answers else "the --marginals file"
    extra = Table(title="other metrics" + own + (f" (the released column: {source})" if released else ""),
                  title_justify="left")
    extra.add_column("metric")
    for method in (("released",) if released else ()) + tuple(result["methods"]):
        extra.add_column(method, justify="right")
    if _extra_rows(extra, result):
        tables.append(extra)
    for label, part in (("relative entropy of the full table", result["relative_entropy"]),
                        ("range queries", result["range_queries"])):
        if part and "skipped" in part:
            tables.append(f"{label}: skipped ({part['skipped']})")
    clf = result["classifier"]
    if clf:
        t = Table(title=f"Naive Bayes predicting '{clf['target']}' on the real table", title_justify="left")
        t.add_column("built from")
        t.add_column("accuracy", justify="right")
        t.add_row("synthetic rows", fmt(clf["synthetic"]))
        if clf["released_marginals"]:
            t.add_row("released marginals", fmt(clf["released_marginals"]["accuracy"]))
        proto = clf.get("release_per_fold")
        if proto:
            t.add_row(f"released marginals, one {proto['algorithm']} release per training fold",
                      fmt(proto["released_marginals_accuracy"]))
            t.add_row(f"synthetic rows, one {proto['algorithm']} release per training fold",
                      fmt(proto["synthetic_accuracy"]))
        t.add_row(f"real table ({clf['folds']}-fold cross-validated)", fmt(clf["real_cross_validated"]))
        t.add_row("majority class (reference)", fmt(clf["majority_class_rate"]))
        tables.append(t)
    return tables


def _extra_rows(t, result: dict) -> int:
    methods = result["methods"]
    rows = 0

    with_released = bool(result["released_marginals"]) or bool(  # released marginals or query answers
        result.get("queries") and "released" in result["queries"]["relative_error_mean"])

    def row(label: str, values: dict, released=None) -> None:
        nonlocal rows
        first = ["—" if released is None else f"{released:.4g}"] if with_released else []
        t.add_row(label, *first, *["inf" if values.get(m) is None else f"{values[m]:.4g}" for m in methods])
        rows += 1

    re_ = result["relative_entropy"]
    if "skipped" not in re_:
        row("relative entropy, full table", re_["relative_entropy"])
        row(f"relative entropy, smoothed α={re_['smoothing']:.2g}", re_["relative_entropy_smoothed"])
    rq = result["range_queries"]
    if rq and "skipped" not in rq:
        row(f"range queries ({rq['queries']}), RMSE", rq["rmse"])
    conj = result["conjunctions"]
    if conj:
        row(f"conjunctions ({conj['queries']}, {conj['k']}-way), mean error", conj["error_mean"])
        row(f"conjunctions ({conj['queries']}, {conj['k']}-way), max error", conj["error_max"])
    par = result.get("parities")
    if par:
        row(f"parities ({par['queries']}, {par['k']}-wise), mean error", par["error_mean"])
        row(f"parities ({par['queries']}, {par['k']}-wise), max error", par["error_max"])
    lin = result.get("linear_queries")
    if lin:
        row(f"linear queries ({lin['queries']}), mean error", lin["error_mean"])
        row(f"linear queries ({lin['queries']}), max error", lin["error_max"])
    cq = result.get("queries")
    if cq:
        for stat in ("mean", "max"):
            values = cq[f"relative_error_{stat}"]
            row(f"counting queries ({cq['queries']}), {stat} relative error", values, values.get("released"))
    rel = result["released_marginals"]
    if rel:
        err = rel["overall_relative_error"]
        row(f"overall rel. err ({rel['marginals']} released marginals)", err, err["released"])
    return rows


def _neutral_tables(result: dict, fmt) -> list:
    """The verdict, the neutral-bin marginals, per-column raw-value figures and the unrepresentable shares."""
    from rich.table import Table

    neutral = result["neutral"]
    out: list = [f"verdict: {result['verdict']['text']}"]
    t = Table(title="marginals in neutral bins (chosen from the real table, not the release's schema): L1 mean / max",
              title_justify="left")
    t.add_column("method")
    blocks = [b for b in neutral["marginals"] if b["metrics"]]
    for b in blocks:
        t.add_column(f"{b['k']}-way ({b['marginals_evaluated']})", justify="right")
    for method in neutral["methods"]:
        t.add_row(method, *[f"{fmt(b['metrics'][method]['l1_mean'])} / {fmt(b['metrics'][method]['l1_max'])}"
                            for b in blocks])
    out.append(t)
    unrep = {c["name"]: c for c in (result.get("unrepresentable") or {}).get("columns", [])}
    c = Table(title="columns: TV in neutral bins; numbers on raw values: W1/std(real), KS; share of rows the "
                    "schema could not represent", title_justify="left")
    for label in ("column", "kind", "TV", "W1/std", "KS", "unrepresentable real", "unrepresentable synthetic"):
        c.add_column(label, justify="left" if label in ("column", "kind") else "right")
    quant = Table(title="quantiles of the numeric columns (raw values)", title_justify="left")
    quant.add_column("column")
    quant.add_column("table")
    numeric = [col for col in neutral["columns"] if col["kind"] != "categorical"]
    for q in (numeric[0]["quantiles"]["q"] if numeric else ()):
        quant.add_column(f"{q:.0%}", justify="right")
    for col in neutral["columns"]:
        u = unrep.get(col["name"])
        bad = [f"{u['real']:.1%}", f"{u['synthetic']:.1%}"] if u else ["", ""]
        c.add_row(col["name"], col["kind"], fmt(col["tv"]), fmt(col.get("w1_over_std")), fmt(col.get("ks")), *bad)
        qs = col.get("quantiles")
        if qs:
            for side in ("real", "synthetic"):
                quant.add_row(col["name"] if side == "real" else "", side, *[fmt(v) for v in qs[side] or [None] * 5])
    out.append(c)
    if numeric:
        out.append(quant)
    if unrep:
        u = result["unrepresentable"]
        out.append(f"share of rows the schema could not represent (counted as error): real {u['rows_real']:.2%}, "
                   f"synthetic {u['rows_synthetic']:.2%} (rows with at least one such value)")
    out.append(f"the sections below are in the release's own bins ({result['release_bins'].split(':', 1)[1].strip()})")
    return out
