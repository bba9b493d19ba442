"""Same seed, D and D plus one row: every output field not produced by a mechanism is identical.

A release's outputs are the report JSON, the model file, the marginals file, the stderr summary and the
exit status (and, for ``schema discover``, the schema file and its report).  With the same seed the
mechanisms draw the same noise on D and on D′ = D + one row (add-remove, n private), so their outputs
differ (the noisy n by exactly one, noisy counts by the row's contribution), and so may anything computed
from them; everything else is a function of the public configuration and must not change.  A field that
reads the data directly (a true count, the observed values, the input's size) differs here on every run.

Unlike the coupled replay (tests/privacy/test_replay.py), nothing is patched: this runs the CLI end to
end, so it also covers the writers (report, model file, marginals file, summary) the replay never sees.
Excluded fields are listed in ``NOISY`` with the mechanism they come from; nothing else may differ.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
import yaml

from dpsynth.cli import app

SEED = "5"
PARAMS = {  # small and fast; dualquery with the local-search best response (no CBC)
    "laplace": {},
    "mwem": {"iterations": 2},
    "auto": {},
    "dualquery": {"T": 3, "s": 4, "best_response": "local", "local_search": {"restarts": 1, "kicks": 2}},
    "ireduct": {"lambda_max": 40.0, "lambda_delta": 2.0},
}
NOISY = {  # report paths (regex on "/a/b/0") that are mechanism outputs or post-processing of them, and why
    r"/output/rows": "the noisy n (row-count discrete Laplace): the number of synthetic rows",
    r"/model/sha256": "hash of the released model, which holds the noisy measurements and the model fitted to them",
    r"/algorithm/details/synthesis/iterations": "mirror-descent iterations until convergence on the noisy marginals",
    r"/algorithm/details/sanity_bound": "iReduct's default sanity bound 1e-4 × the noisy n",
    r"/algorithm/details/n_used": "DualQuery's n: the noisy n",
    r"/algorithm/details/eta": "DualQuery's η, set in proportion to the noisy n",
    r"/algorithm/params/eta": "the resolved parameters the run used: DualQuery's η (above)",
    r"/algorithm/details/outlook/theorem_alpha": "DualQuery's accuracy bound α at the noisy n",
    r"/algorithm/details/rounds/\d+/(local_objective|objective)":
        "DualQuery's best-response objective over the round's sampled queries (exponential-mechanism outputs)",
    r"/ledger/\d+/sensitivity": "DualQuery's sensitivity 1/ñ of normalised answers: checked to be ∝ 1/ñ below",
}


def _tables():
    rng = np.random.default_rng(0)
    n = 60
    d = pd.DataFrame({"a": rng.choice(["x", "y"], n), "b": rng.choice(["x", "y", "z"], n),
                      "c": rng.uniform(0, 8, n).round(2)})
    extra = pd.DataFrame({"a": ["z"], "b": ["z"], "c": [9.9]})  # a cell, a category and a bin D leaves empty
    return d, pd.concat([d, extra], ignore_index=True)


def _config(algorithm: str) -> dict:
    cat = {"type": "categorical", "categories": ["x", "y", "z"]}
    return {"schema": {"columns": {"a": cat, "b": cat, "c": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5}}},
            "privacy": {"epsilon": 1.0, "neighbouring": "add-remove", "n": {"epsilon": 0.2}},
            "algorithm": {"name": algorithm, "params": PARAMS[algorithm]},
            "workload": {"marginals": [["a", "b"], ["b", "c"], ["a", "c"]]}}


def _differences(a, b, path=""):
    """Paths where two JSON values differ (a missing key or a list of another length is a difference)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k in a and k in b:
                yield from _differences(a[k], b[k], f"{path}/{k}")
            else:
                yield f"{path}/{k}"
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _differences(x, y, f"{path}/{i}")
    elif a != b or type(a) is not type(b):
        yield path


def _mask_n(obj, n: int):
    """Each run's own noisy n in free text ("n = 66", "n=66") replaced by a placeholder: a text that
    quotes the true n (60 or 61) keeps it and differs."""
    if isinstance(obj, dict):
        return {k: _mask_n(v, n) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask_n(v, n) for v in obj]
    if isinstance(obj, str):
        return re.sub(rf"\b{n} rows\b", "<noisy n> rows", re.sub(rf"\bn ?= ?{n}\b", "n=<noisy n>", obj))
    return obj


def _summary(stderr: str, n: int) -> str:
    """The stderr summary without wall-clock times (the table's time row, progress elapsed/ETA) and with the
    run's noisy n masked (the synthetic-rows row, notices quoting n)."""
    lines, out, in_time = stderr.splitlines(), [], False
    for line in lines:
        in_time = (in_time or "time (s)" in line) and not line.startswith("└")
        if in_time:
            line = re.sub(r"\d+(\.\d+)?", "<t>", line)
        line = re.sub(r"elapsed [\d:]+, ETA ([\d:]+|unknown)", "elapsed <t>, ETA <t>", line)
        line = re.sub(rf"(synthetic rows\s*│\s*){n}\b", r"\1<noisy n>", line)
        out.append(re.sub(rf"\bn ?= ?{n}\b", "n=<noisy n>", line))
    return "\n".join(out)


def _model(path) -> dict:
    """The model file's entries: manifest and JSON documents parsed, arrays as (dtype, shape)."""
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            blob = zf.read(name)
            if name.endswith(".json"):
                out[name] = json.loads(blob)
            else:
                arr = np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)
                out[name] = (str(arr.dtype), list(arr.shape))
    return out


def _release(runner, tmp_path, name: str, table: pd.DataFrame, algorithm: str) -> dict:
    src, cfg = tmp_path / f"{name}.csv", tmp_path / "config.yaml"
    table.to_csv(src, index=False)
    cfg.write_text(yaml.safe_dump(_config(algorithm)))
    out = tmp_path / f"{name}.out.csv"
    marginals = [] if algorithm == "dualquery" else ["--marginals", str(tmp_path / f"{name}.marginals.csv")]
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(out), "--model",
                              str(tmp_path / f"{name}.model"), *marginals, "--seed", SEED])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / f"{name}.out.csv.report.json").read_text())
    n = report["output"]["rows"]
    return {"exit": res.exit_code, "report": report, "n": n, "summary": _summary(res.stderr, n),
            "model": _model(tmp_path / f"{name}.model"),
            "marginals": pd.read_csv(marginals[1], keep_default_na=False) if marginals else None}


@pytest.mark.parametrize("algorithm", list(PARAMS))
def test_release_outputs_are_the_same_on_d_and_d_plus_one_row(runner, tmp_path, algorithm):
    d, d2 = _tables()
    first, second = (_release(runner, tmp_path, name, t, algorithm) for name, t in (("d", d), ("d2", d2)))
    assert first["exit"] == second["exit"] == 0
    # the noise is coupled: the noisy n moves by exactly the added row (so the test sees a real change)
    assert second["n"] == first["n"] + 1

    # report: every field equal but the mechanism outputs of NOISY
    diff = list(_differences(_mask_n(first["report"], first["n"]), _mask_n(second["report"], second["n"])))
    unexplained = [p for p in diff if not any(re.fullmatch(pattern, p) for pattern in NOISY)]
    assert not unexplained, f"{algorithm}: report fields that depend on the data: {unexplained}"
    for p in diff:
        if p.startswith("/ledger/"):
            i = int(p.split("/")[2])
            c1, c2 = first["report"]["ledger"][i], second["report"]["ledger"][i]
            assert c1["stage"] == "dualquery" and c1["sensitivity"] * first["n"] == \
                pytest.approx(c2["sensitivity"] * second["n"], rel=1e-12), (c1, c2)

    # model file: same entries; the public config.json identical (and its digest, but for DualQuery's
    # resolved η); release.json's
    # privacy and ledger those of the report; the rest equal but the model's total (the noisy n); arrays of
    # the same dtype and shape (their values are noisy measurements and the model fitted to them)
    m1, m2 = first["model"], second["model"]
    assert sorted(m1) == sorted(m2)
    man1, man2 = m1.pop("manifest.json"), m2.pop("manifest.json")
    assert {k: v for k, v in man1.items() if k not in ("entries", "model_sha256", "report_sha256")} == \
        {k: v for k, v in man2.items() if k not in ("entries", "model_sha256", "report_sha256")}
    c1, c2 = m1.pop("config.json"), m2.pop("config.json")  # the resolved parameters: η is DualQuery's, ∝ ñ
    eta1, eta2 = (c["algorithm"]["params"].pop("eta", None) for c in (c1, c2))
    assert c1 == c2 and (eta1 == eta2 or algorithm == "dualquery")
    if eta1 == eta2:
        assert man1["entries"]["config.json"] == man2["entries"]["config.json"]
    for run, m in ((first, m1), (second, m2)):  # the report's sections, compared above
        assert m["release.json"].pop("privacy") == run["report"]["privacy"]
        assert m["release.json"].pop("ledger") == run["report"]["ledger"]
        meta = m["release.json"]["model"]["meta"]
        assert meta.pop("total", run["n"]) == run["n"]  # a graphical model's total: the noisy n
    assert list(_differences(m1, m2)) == [], algorithm

    # marginals file: same columns, rows and every column but the noisy counts
    if first["marginals"] is not None:
        a, b = first["marginals"], second["marginals"]
        assert list(a.columns) == list(b.columns) and a.shape == b.shape and "noisy_count" in a.columns
        pd.testing.assert_frame_equal(a.drop(columns="noisy_count"), b.drop(columns="noisy_count"))

    # stderr summary, modulo wall-clock times and the noisy n
    assert first["summary"] == second["summary"]


def test_the_comparison_has_power(runner, tmp_path, monkeypatch):
    """A report field computed from the data (here: a warning quoting the true number of rows) is caught."""
    from dpsynth import pipeline

    original = pipeline.build_report

    def leaky(*args, **kwargs):
        out = original(*args, **kwargs)
        out["warnings"].append(f"read {leaky.rows} rows")
        return out

    monkeypatch.setattr(pipeline, "build_report", leaky)
    d, d2 = _tables()
    runs = []
    for name, table in (("d", d), ("d2", d2)):
        leaky.rows = len(table)
        runs.append(_release(runner, tmp_path, name, table, "laplace"))
    assert [p for p in _differences(runs[0]["report"], runs[1]["report"]) if p.startswith("/warnings")]


# ------------------------------------------------------------------------------------ schema discovery
DISCOVERY_NOISY = {  # discovery outputs that are mechanism outputs or post-processing of them
    r"/schema/columns/\w+/(categories|edges|lower|upper)": "partition selection / noisy quantiles",
    r"/columns/\w+/learned/\d+": "text quoting the noisy bounds and the number of distinct noisy quantile edges",
}


def _discover(runner, tmp_path, name, table):
    src, out = tmp_path / f"{name}.csv", tmp_path / f"{name}.schema.yaml"
    table.to_csv(src, index=False)
    res = runner.invoke(app, ["schema", "discover", "-i", str(src), "-o", str(out), "--epsilon", "2",
                              "--delta", "1e-6", "--seed", SEED])
    text = re.sub(r"\d{4}-\d\d-\d\d", "<date>", out.read_text()) if res.exit_code == 0 else ""
    report = json.loads((tmp_path / f"{name}.schema.yaml.report.json").read_text()) if res.exit_code == 0 else {}
    return res.exit_code, res.stderr, text, report


@pytest.mark.parametrize("new_value", [False, True])  # True: issue 24 defect 1 (the observed-value count)
def test_discovered_schema_is_the_same_on_d_and_d_plus_one_row(runner, tmp_path, new_value):
    """The schema file's structure (columns, types, keys; not the learned values), its comment header
    (modulo the date), the discovery report outside the learned values, the summary and the exit status.
    ``new_value``: the added row holds a value of ``a`` that D does not have."""
    d, _ = _tables()
    extra = pd.DataFrame({"a": ["z" if new_value else "x"], "b": ["z"], "c": [9.9]})
    runs = [_discover(runner, tmp_path, name, t) for name, t in (("d", d), ("d2", pd.concat([d, extra])))]
    (code1, err1, text1, rep1), (code2, err2, text2, rep2) = runs
    assert code1 == code2 == 0 and err1 == err2
    header1 = [line for line in text1.splitlines() if line.startswith("#")]
    assert header1 and header1 == [line for line in text2.splitlines() if line.startswith("#")]
    s1, s2 = yaml.safe_load(text1)["schema"], yaml.safe_load(text2)["schema"]
    assert {c: sorted(v) for c, v in s1["columns"].items()} == {c: sorted(v) for c, v in s2["columns"].items()}
    assert {c: v["type"] for c, v in s1["columns"].items()} == {c: v["type"] for c, v in s2["columns"].items()}
    diff = list(_differences(rep1, rep2))
    unexplained = [p for p in diff if not any(re.fullmatch(pattern, p) for pattern in DISCOVERY_NOISY)]
    assert not unexplained, f"discovery report fields that depend on the data: {unexplained}"
