"""Smoke tests of the peer benchmark (benchmarks/peers/) WITHOUT the peer's venv.

Encoding, scoring, the dpsynth side of a run and the skip of an absent peer run
here; the smartnoise side needs benchmarks/peers/.venv and is one slow test,
skipped when that venv is absent.  Deterministic (fixed seeds, exact
identities): false-failure rate 0.  No wall-clock time is asserted.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from benchmarks.peers import releases, run, tables
from benchmarks.peers.scoring import KWayScorer, TabBenchScorer, load_table
from benchmarks.peers.snsynth_child import _round_counts


def _l1(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.abs(p / p.sum() - q / q.sum()).sum())


def test_scorer_matches_hand_computed_l1():
    true = np.array([[0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 1, 1]])
    synth = np.array([[0, 0, 0], [1, 1, 1]])
    scorer = KWayScorer(true, (2, 2, 2))
    got = scorer.score(synth)
    pairs = [(0, 1), (0, 2), (1, 2)]

    def counts(codes, attrs):
        return np.bincount(codes[:, attrs[0]] * 2 + codes[:, attrs[1]], minlength=4).astype(float)

    want2 = np.mean([_l1(counts(true, a), counts(synth, a)) for a in pairs])
    t3 = np.bincount(true @ [4, 2, 1], minlength=8).astype(float)
    s3 = np.bincount(synth @ [4, 2, 1], minlength=8).astype(float)
    assert got == {"l1_2way": pytest.approx(want2), "marginals_2way": 3,
                   "l1_3way": pytest.approx(_l1(t3, s3)), "marginals_3way": 1}
    assert scorer.score(true) == {"l1_2way": 0.0, "marginals_2way": 3, "l1_3way": 0.0, "marginals_3way": 1}


def test_tab_bench_scorer_matches_hand_computed_values():
    """TVD = half the L1 over every column and pair; a query's error is |real fraction - synthetic fraction|."""
    true = np.array([[0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 1, 1]])
    synth = np.array([[0, 0, 0], [1, 1, 1]])
    sc = TabBenchScorer(true, (2, 2, 2), [True, False, False], queries=50, seed=3)
    got = sc.score(synth)
    assert got["tb_tvd_1way"] == pytest.approx(np.mean([0.0, 0.25, 0.25]))  # column 0: 1/2, 1/2 in both
    pairs = [(0, 1), (0, 2), (1, 2)]

    def counts(codes, attrs):
        return np.bincount(codes[:, attrs[0]] * 2 + codes[:, attrs[1]], minlength=4).astype(float)

    assert got["tb_tvd_2way"] == pytest.approx(np.mean([_l1(counts(true, a), counts(synth, a)) / 2 for a in pairs]))
    assert len(sc.queries) == 50 and all(len({j for j, _, _ in q}) == 3 for q in sc.queries)
    want = []
    for q in sc.queries:  # by hand, row by row
        def frac(rows, q=q):
            return np.mean([all(lo <= r[j] <= hi for j, lo, hi in q) for r in rows])
        want.append(abs(frac(true) - frac(synth)))
    assert got["tb_query_3way"] == pytest.approx(np.mean(want)) and got["tb_query_3way"] > 0
    assert sc.score(true) == {"tb_tvd_1way": 0.0, "tb_tvd_2way": 0.0, "tb_query_3way": 0.0}


def test_scorer_bounds_and_checks():
    zeros, ones = np.zeros((5, 4), dtype=int), np.ones((3, 4), dtype=int)
    scorer = KWayScorer(zeros, (2, 2, 3, 2), sample=2, seed=0)  # a public sample of 2 of the 4 3-way sets
    assert scorer.score(ones) == {"l1_2way": 2.0, "marginals_2way": 2, "l1_3way": 2.0, "marginals_3way": 2}
    with pytest.raises(ValueError, match=re.escape("synthetic column 2 has codes outside 0..2")):
        scorer.score(np.array([[0, 0, 3, 0]]))
    with pytest.raises(ValueError, match=re.escape("synthetic codes have shape (2, 3); expected (rows, 4)")):
        scorer.score(np.zeros((2, 3), dtype=int))


def test_load_table_encodes_with_the_public_schema():
    t = load_table("adult")
    assert t.codes.shape == (len(t.rows), 15) and t.sizes[0] == 12 and t.sizes[-1] == 2
    assert (t.codes >= 0).all() and (t.codes < np.asarray(t.sizes)).all()


def test_dpsynth_cell_uses_the_algorithm_config_or_the_preset():
    cell = releases.dpsynth_cell("nltcs", 16, "mwem", 0.3, 2, params={"iterations": 5})
    assert (cell.algorithm, cell.epsilon, cell.seed, cell.delta) == ("mwem", 0.3, 2, 0.0)
    assert cell.params == {"iterations": 5} and cell.workload == {"marginals": {"k": 3}}  # configs/nltcs-mwem.yaml
    cell = releases.dpsynth_cell("nltcs", 16, "laplace", 1.0, 0, workload={"marginals": {"k": 1}})
    assert cell.params == {} and cell.workload == {"marginals": {"k": 1}}


def test_round_counts_rounds_each_cell_down_or_up():
    rng = np.random.default_rng(0)
    for total in (1, 7, 100):  # loop over group sizes
        p = rng.dirichlet(np.ones(5))
        got = _round_counts(p * total, total, rng)
        assert got.sum() == total
        assert ((got == np.floor(p * total)) | (got == np.ceil(p * total))).all()


def test_run_without_the_peer_scores_dpsynth(tmp_path, capsys):
    """The peer venv is absent: one line says so, and the dpsynth release is still run, scored and written."""
    argv = ["--datasets", "nltcs", "--epsilons", "1", "--seeds", "0", "--dpsynth", "laplace",
            "--workload", json.dumps({"marginals": {"k": 1}}), "--peers", "mst",
            "--peer-python", str(tmp_path / "nope" / "python"), "--out", str(tmp_path), "--markdown"]
    assert run.main(argv) == 0
    out, err = capsys.readouterr()
    assert f"skipping the peer: {tmp_path / 'nope' / 'python'} not found" in err
    df = pd.read_csv(tmp_path / "peers.csv")
    assert list(df["method"]) == ["dpsynth-laplace"] and df.loc[0, "status"] == "ok"
    assert 0 < df.loc[0, "l1_3way"] < 2 and 0 < df.loc[0, "l1_2way"] < df.loc[0, "l1_3way"]
    assert df.loc[0, "epsilon_spent"] == 1.0 and df.loc[0, "peak_mb"] > 0
    assert (tmp_path / "peers.png").stat().st_size > 0
    assert "| nltcs | 1 | dpsynth-laplace |" in out


def test_absent_shared_table_is_skipped(tmp_path, capsys):
    assert run.main(["--datasets", "mildew", "--shared-data", str(tmp_path), "--peers", "none",
                     "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"skipping mildew: {tmp_path / 'mildew' / 'mildew.csv'} not found" in err
    assert "nothing to report" in err and not (tmp_path / "peers.csv").exists()


@pytest.mark.slow
def test_peer_mst_on_a_tiny_table(tmp_path):
    """With the peer venv: one MST fit on 300 rows of 3 columns, every sampler returns in-domain codes."""
    if releases.peer_available() is not None:
        pytest.skip(releases.peer_available())
    codes = np.random.default_rng(0).integers(0, [2, 3, 2], size=(300, 3)).astype(np.int32)
    np.save(tmp_path / "codes.npy", codes)
    res = releases.peer_release(tmp_path / "codes.npy", (2, 3, 2), synth="mst", epsilon=1.0, delta=1e-9, seed=0,
                                variants=run.VARIANTS, timeout=300)
    assert res["status"] == "ok" and res["peak_mb"] > 0
    scorer = KWayScorer(codes, (2, 3, 2))
    for v in run.VARIANTS:  # loop over samplers
        got = res["variants"][v]["codes"]
        assert got.shape == codes.shape
        assert 0 <= scorer.score(got)["l1_3way"] <= 2


# ---------------------------------------------------------------- held-out tables (benchmarks/peers/tables.py)
COMPAS_COLUMNS = ["sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count",
                  "c_charge_degree", "decile_score", "score_text", "v_decile_score", "v_score_text", "is_recid",
                  "is_violent_recid", "two_year_recid"]


def _tiny_compas(path, *, repeat_differs: bool = False) -> pd.DataFrame:
    """A made-up table in compas.csv's layout: extra columns the schema leaves out, and the header repeating
    decile_score and priors_count as ProPublica's export does."""
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({
        "id": np.arange(n), "name": [f"person {i}" for i in range(n)],
        "sex": rng.choice(["Male", "Female"], n), "age": rng.integers(18, 80, n),
        "age_cat": rng.choice(["Less than 25", "25 - 45", "Greater than 45"], n),
        "race": rng.choice(["African-American", "Caucasian", "Hispanic", "Asian", "Native American", "Other"], n),
        "juv_fel_count": rng.integers(0, 3, n), "decile_score": rng.integers(1, 11, n),
        "juv_misd_count": rng.integers(0, 3, n), "juv_other_count": rng.integers(0, 3, n),
        "priors_count": rng.integers(0, 30, n), "c_charge_degree": rng.choice(["F", "M"], n),
        "is_recid": rng.integers(0, 2, n), "is_violent_recid": rng.integers(0, 2, n),
        "score_text": rng.choice(["Low", "Medium", "High"], n), "v_decile_score": rng.integers(1, 11, n),
        "v_score_text": rng.choice(["Low", "Medium", "High"], n), "two_year_recid": rng.integers(0, 2, n),
    })
    again = df[["decile_score", "priors_count"]].copy()
    if repeat_differs:
        again.loc[3, "priors_count"] += 1
    text = pd.concat([df, again], axis=1).to_csv(index=False)  # the header now names both columns twice
    assert text.splitlines()[0].split(",").count("decile_score") == 2
    path.write_text(text)
    return df


def test_compas_loader_keeps_the_first_of_each_repeated_column(tmp_path):
    want = _tiny_compas(tmp_path / "compas.csv")
    t = load_table("compas", path=tmp_path / "compas.csv")
    assert list(t.rows.columns) == COMPAS_COLUMNS and t.codes.shape == (40, 16)
    assert (t.codes >= 0).all() and (t.codes < np.asarray(t.sizes)).all()
    col = COMPAS_COLUMNS.index
    assert (t.codes[:, col("decile_score")] == want["decile_score"].to_numpy() - 1).all()  # integer 1..10: code k-1
    assert (t.codes[:, col("sex")] == (want["sex"] == "Female").to_numpy()).all()  # categories [Male, Female]
    assert (t.codes[:, col("priors_count")] == np.digitize(want["priors_count"], [1, 2, 3, 5, 10, 20])).all()


def test_compas_loader_refuses_a_repeated_name_with_other_values(tmp_path):
    _tiny_compas(tmp_path / "compas.csv", repeat_differs=True)
    with pytest.raises(ValueError, match="repeats 'priors_count' with different values"):
        load_table("compas", path=tmp_path / "compas.csv")


def test_read_rows_without_repeats_is_read_table(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,x\n2,y\n")
    got = tables.read_rows(tmp_path / "t.csv")
    assert list(got.columns) == ["a", "b"] and got["a"].tolist() == [1, 2]


def test_heldout_tables_are_registered_with_public_schemas():
    assert {"adult_test", "compas", "loans"} <= set(tables.TABLES)
    assert tables.TABLES["adult_test"].config.name == "adult.yaml"  # the training split's public schema
    assert tables.TABLES["loans"].eval_sample == 500 and tables.TABLES["compas"].config.is_file()


def test_chosen_algorithm_reads_what_auto_resolved_to():
    report = {"algorithm": {"name": "auto", "details": {"auto": {"chosen": "mwem:3-way", "why": ["facts", "rule"]}}},
              "privacy": {"delta_spent": 1e-9}}
    assert releases.chosen_algorithm(report) == {"chosen": "mwem:3-way", "chosen_why": "rule", "delta_spent": 1e-9}
    assert releases.chosen_algorithm({"algorithm": {"name": "laplace"}, "privacy": {}})["chosen"] == "laplace"


def test_dpsynth_delta_names_the_method_and_auto_records_its_choice(tmp_path):
    argv = ["--datasets", "nltcs", "--epsilons", "1", "--seeds", "0", "--dpsynth", "auto", "--dpsynth-delta", "1e-9",
            "--workload", json.dumps({"marginals": {"k": 1}}), "--peers", "none", "--out", str(tmp_path), "--no-plot"]
    assert run.main(argv) == 0
    row = pd.read_csv(tmp_path / "peers.csv").iloc[0]
    assert (row["method"], row["delta"], row["status"]) == ("dpsynth-auto-d1e-09", 1e-9, "ok")
    assert row["chosen"] == "mwem" and row["delta_spent"] == pytest.approx(1e-9)  # auto's rule 1 (δ > 0)


def test_aim_progress_reads_the_last_fit(tmp_path):
    path = tmp_path / "p.jsonl"
    assert releases.aim_progress(path) == {}
    path.write_text('{"event": "end", "rounds": 0, "share": 0.05}\n{"event": "start", "rounds": 7, "share": 0.31}\n')
    assert releases.aim_progress(path) == {"rounds": 7, "budget_share": 0.31}


@pytest.mark.slow
def test_peer_aim_logs_its_rounds_and_spends_its_whole_budget(tmp_path):
    """With the peer venv: AIM on 300 rows of 3 columns finishes; its progress log's budget share, rebuilt from
    the measurements' noise (snsynth_child.watch_rounds), ends at exactly 1 (AIM spends all of ρ)."""
    if releases.peer_available() is not None:
        pytest.skip(releases.peer_available())
    codes = np.random.default_rng(0).integers(0, [2, 3, 2], size=(300, 3)).astype(np.int32)
    np.save(tmp_path / "codes.npy", codes)
    res = releases.peer_release(tmp_path / "codes.npy", (2, 3, 2), synth="aim", epsilon=1.0, delta=1e-9, seed=0,
                                variants=["iid"], timeout=600, progress=tmp_path / "p.jsonl")
    assert res["status"] == "ok" and res["rounds"] >= 1
    assert res["budget_share"] == pytest.approx(1.0, abs=1e-9)
    shares = [json.loads(line)["share"] for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert shares == sorted(shares) and shares[0] < 1  # logged as it went: the 1-way fit first


def test_versus_takes_the_peers_best_sampler_and_pairs_seeds():
    from benchmarks.peers import versus

    def row(method, seed, l1, **kw):
        alg = method.split("-")[0] if not method.startswith("dpsynth") else "auto"
        return {"dataset": "t", "n": 100, "epsilon": 1.0, "method": method, "algorithm": alg, "seed": seed,
                "status": "ok", "l1_3way": l1, "cpu_seconds": 1.0, "peak_mb": 10.0, "delta": 0.0, "chosen": None,
                "rounds": None, "budget_share": None, "error": None} | kw
    df = pd.DataFrame([
        row("dpsynth-auto-d0", 0, 0.20, chosen="mwem"), row("dpsynth-auto-d0", 1, 0.30, chosen="mwem"),
        row("mst-iid", 0, 0.25), row("mst-iid", 1, 0.25),            # mean 0.25
        row("mst-rounded", 0, 0.10), row("mst-rounded", 1, 0.30),    # mean 0.20: the best sampler
        row("mst-default", 0, 0.90), row("mst-default", 1, 0.90),
        row("aim-iid", 0, np.nan, status="timeout", error="killed after 900 s", rounds=12, budget_share=0.25,
            cpu_seconds=700.0, peak_mb=3000.0),
    ])
    (r,) = versus.versus(df)
    assert r["mst_best"] == "0.200 ± 0.141 (2 runs) `rounded`" and r["mst_default"].startswith("0.900")
    assert r["ratio_d0"] == "1.50 (1.00–2.00)"  # seed 0: 0.20/0.10, seed 1: 0.30/0.30
    assert r["auto_d"] == "—" and r["chosen"] == "mwem / —"
    assert r["aim"].startswith("timeout (killed after 900 s): round 12, 25 % of ρ spent")
    assert "| t (100) | 1 |" in versus.markdown(df)
