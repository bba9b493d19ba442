"""``dpsynth plan`` and the memory guard of ``release`` (issue 15, item 1)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from dpsynth import plan as plan_mod
from dpsynth.algorithms import algorithm_names
from dpsynth.cli import app
from dpsynth.config import load_config, parse_bytes
from dpsynth.errors import ConfigError
from dpsynth.plan import make_plan

ADULT_CFG = "configs/adult.yaml"
ADULT = "sample_data/adult.csv"


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


def _config(tmp_path: Path, **changes) -> Path:
    raw = yaml.safe_load(Path(ADULT_CFG).read_text())
    for key, value in changes.items():
        raw[key] = value
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(raw, sort_keys=False))
    return p


def test_plan_prints_domain_workload_budget_noise_memory(runner):
    res = runner.invoke(app, ["plan", "-c", ADULT_CFG, "--rows", "32561"])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "  age             12\n  workclass       9\n" in out
    assert "Workload: 105 marginals, 11,279 cells in all, largest 672 cells\n" in out
    # the fine view (decode.fine: auto, on for adult's 5 numeric columns at this n) takes 0.1 first
    assert ("Budget:\n  fine-decode: 0.1 of the budget for fine histograms of 5 numeric column(s), 32 sub-cells "
            "per bin, discrete Laplace scale 50 per sub-cell (decode.fine)\n"
            "  measure: epsilon 0.9 split equally over 105 marginals (0.008571 each)\n") in out
    assert ("Guarantee: 1-differential privacy for one row of the input table, add-remove neighbours; "
            "n (the row count) is public; the schema, workload and parameters are public\n") in out
    assert "Rows n: 32,561, as given (--rows); synthetic rows: 32,561\n" in out
    # Laplace noise of scale 105·1/0.9 per cell: sd = sqrt(2)·105/0.9; an average cell holds 32561/(11279/105) rows.
    assert ("Noise: standard deviation 165 per measured cell (0.00507 of n); an average cell holds 303.1 rows: "
            "noise comparable to signal\n") in out
    assert "Predicted peak memory: " in out and "Rough time: about " in out
    assert res.stderr == ""


def test_plan_reads_no_data_only_the_file_size(runner, tmp_path):
    """A file of the right size but unreadable content plans the same as the real one."""
    fake = tmp_path / "fake.csv"
    fake.write_bytes(b"\x00" * Path(ADULT).stat().st_size)
    a = runner.invoke(app, ["plan", "-c", ADULT_CFG, "-i", ADULT, "--json"])
    b = runner.invoke(app, ["plan", "-c", ADULT_CFG, "-i", str(fake), "--json"])
    assert a.exit_code == b.exit_code == 0
    assert json.loads(a.stdout)["rows"] == json.loads(b.stdout)["rows"]
    assert json.loads(a.stdout)["rows_source"].startswith("estimated from the input file size (3.4 MB")


def test_plan_json_and_assumed_rows(runner):
    res = runner.invoke(app, ["plan", "-c", ADULT_CFG, "--json"])
    assert res.exit_code == 0
    p = json.loads(res.stdout)
    assert p["rows"] == 100_000 and p["rows_source"] == "assumed (100,000; give --rows N or -i INPUT)"
    assert p["total_cells"] == 11279 and p["marginals"] == 105
    assert p["peak_memory_bytes"] == sum(p["memory_bytes"].values())


def test_plan_usage_errors(runner):
    res = runner.invoke(app, ["plan", "-c", ADULT_CFG, "--rows", "0"])
    assert res.exit_code == 2 and res.stderr == "dpsynth: error: --rows must be >= 1, got 0\n"
    res = runner.invoke(app, ["plan", "-c", ADULT_CFG, "-i", "nope.csv"])
    assert res.exit_code == 66 and res.stderr == "dpsynth: error: input file not found: nope.csv\n"


def test_issue_case_k5_laplace_refused_before_reading(runner, tmp_path, monkeypatch):
    """workload.marginals {k: 5} with laplace on Adult (3,003 marginals, 253 M cells): refused, exit 64,
    before the input is read (the input here is not even a table)."""
    cfg = _config(tmp_path, workload={"marginals": {"k": 5}}, limits={"max_memory": "2GB"})
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"\x00" * Path(ADULT).stat().st_size)
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(junk), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 64
    assert res.stderr == (
        "dpsynth: error: limits.max_memory: this release is predicted to need 5.9 GB (largest part: exact counts "
        "cached by the engine, 1.9 GB), more than the limit of 2.0 GB (limits.max_memory); reduce the workload or "
        "raise limits.max_memory in the config or --max-memory (see dpsynth plan)\n"
    )
    assert not (tmp_path / "o.csv").exists()


def test_default_limit_is_half_the_machine_ram(runner, tmp_path, monkeypatch):
    monkeypatch.setattr(plan_mod.machine, "machine_memory", lambda: 4 << 30)
    monkeypatch.setattr(plan_mod.machine, "address_space_limit", lambda: None)
    monkeypatch.setattr(plan_mod.machine, "cgroup_memory_limit", lambda: None)
    cfg = _config(tmp_path, workload={"marginals": {"k": 5}})
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", ADULT, "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 64
    assert res.stderr.endswith(
        "more than the limit of 2.0 GB (default: 50% of this machine's 4.0 GB RAM); reduce the workload or "
        "raise limits.max_memory in the config or --max-memory (see dpsynth plan)\n"
    )


def test_marginals_output_counts_in_the_prediction(tmp_path):
    """--marginals builds a long table of ~110 bytes per cell: the issue's 23.5 GB."""
    cfg = load_config(_config(tmp_path, workload={"marginals": {"k": 5}}))
    without = make_plan(cfg, rows=32561).peak_memory
    with_long = make_plan(cfg, rows=32561, write_marginals=True).peak_memory
    assert with_long - without == 110 * 253_154_292


def test_max_memory_option_and_config_key(runner, tmp_path):
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", ADULT, "-o", str(tmp_path / "o.csv"),
                              "--max-memory", "lots"])
    assert res.exit_code == 2
    assert res.stderr == "dpsynth: error: --max-memory: expected a size such as 4GB or 512MB, got 'lots'\n"
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", ADULT, "-o", str(tmp_path / "o.csv"),
                              "--max-memory", "10MB"])
    assert res.exit_code == 64 and "more than the limit of 10.0 MB (--max-memory)" in res.stderr
    bad = _config(tmp_path, limits={"max_memory": -3})
    res = runner.invoke(app, ["plan", "-c", str(bad)])
    assert res.exit_code == 64
    assert res.stderr == "dpsynth: error: limits.max_memory: expected a size such as 4GB or 512MB, got -3\n"


@pytest.mark.parametrize(("text", "expected"), [
    ("4GB", 4 << 30), ("512 MiB", 512 << 20), ("2.5G", int(2.5 * (1 << 30))), (1000, 1000), ("1e6", 10**6),
])
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


def test_parse_bytes_rejects():
    with pytest.raises(ConfigError, match="limits.max_memory: expected a size such as 4GB or 512MB, got '4XB'"):
        parse_bytes("4XB")


@pytest.mark.parametrize("algorithm", algorithm_names())
def test_every_algorithm_has_a_predictor(tmp_path, algorithm):
    params = {"T": 5, "s": 20} if algorithm == "dualquery" else {}
    workload = {"marginals": [["sex", "race"], ["race", "income"]]} if algorithm == "fourier" else {
        "marginals": {"k": 3}}
    cfg = load_config(_config(tmp_path, algorithm={"name": algorithm, "params": params}, workload=workload))
    p = make_plan(cfg, rows=32561)
    assert p.peak_memory > 100 << 20 and p.alg.stages and p.seconds > 0
    assert plan_mod.format_plan(p).startswith(f"dpsynth plan: {algorithm}\n")


def test_plan_of_an_ireduct_queries_release_states_the_queries_and_their_sensitivity(runner):
    """workload.queries (cell sets): the queries, the one charge at the sensitivity the release uses (a row is in
    at most 6 of the 8 example queries; the release's report says query_sensitivity 6.0), the per-query noise."""
    res = runner.invoke(app, ["plan", "-c", "configs/adult-ireduct-queries.yaml", "--rows", "32561"])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "Workload:" not in out
    assert "Measured: 8 counting queries (cell sets) over 5 columns (age, race, sex, hours-per-week, income)\n" in out
    # the fine view (decode.fine: auto) takes 0.1 first
    assert ("  measure: epsilon 0.9 spent by noise-down steps, one charge for all 8 queries (a row is in at most 6 of "
            "them: L1 sensitivity 6)\n") in out
    assert "Noise: standard deviation 9.428 per query answer at equal scales (0.00029 of n;" in out  # sqrt(2)*6/0.9
    assert "noise-down working arrays: 1.1 KB\n" in out


def _nltcs_n_private(tmp_path: Path) -> Path:
    raw = yaml.safe_load(Path("configs/nltcs.yaml").read_text())
    raw["privacy"]["n"] = {"epsilon": 0.1}
    p = tmp_path / "nltcs-n-private.yaml"
    p.write_text(yaml.safe_dump(raw, sort_keys=False))
    return p


def test_n_private_size_decisions_use_public_figures_only(runner, tmp_path):
    """Issue 24, defect 2 (coupled): n private, D (5,000 NLTCS rows) and D plus one row, --max-memory at the
    peak a plan from D's file size would predict.  The plan's text and JSON and the release's exit status and
    stderr must be identical: n comes from --rows or the assumption, never from the input's size."""
    lines = Path("sample_data/nltcs.csv").read_text().splitlines(keepends=True)
    d, d1 = tmp_path / "d.csv", tmp_path / "d1.csv"
    d.write_text("".join(lines[:5001]))
    d1.write_text("".join(lines[:5002]))
    cfg = _nltcs_n_private(tmp_path)
    public = dataclasses.replace(load_config(cfg), privacy=dataclasses.replace(load_config(cfg).privacy,
                                                                             n_epsilon=None))
    from_size = make_plan(public, input_path=str(d))  # n public: the file size may be used (~5,000 rows)
    assert make_plan(public, input_path=str(d1)).peak_memory > from_size.peak_memory  # one more row shows
    boundary = str(from_size.peak_memory)

    outs = [runner.invoke(app, ["plan", "-c", str(cfg), "-i", str(x)] + j) for x in (d, d1) for j in ([], ["--json"])]
    assert all(r.exit_code == 0 for r in outs)
    assert outs[0].stdout == outs[2].stdout and outs[1].stdout == outs[3].stdout
    assert ("Rows n: 100,000, assumed (100,000; n is private, so the input file's size is not used; give --rows N, "
            "a public figure); synthetic rows: 100,000\n") in outs[0].stdout
    assert "file size" not in outs[0].stdout

    rels = [runner.invoke(app, ["release", "-c", str(cfg), "-i", str(x), "-o", str(tmp_path / f"o{i}.csv"),
                                "-r", str(tmp_path / f"r{i}.json"), "--max-memory", boundary, "--seed", "1"])
            for i, x in enumerate((d, d1))]
    assert rels[0].exit_code == rels[1].exit_code
    assert rels[0].stderr == rels[1].stderr


def test_plan_noise_of_mwem_batches_is_a_measurement_of_half_the_round(runner, tmp_path):
    """``auto`` with δ > 0 runs ``mwem`` with ``batch: 2``: each of a round's two measurements gets half its
    ρ, so the noise plan prints is the first measurement's in the release's ledger, sd = 1/sqrt(2ρ) (histogram
    L2 sensitivity 1 under add-remove), not the whole round's (√2 smaller)."""
    cfg = _config(tmp_path, algorithm={"name": "auto"}, privacy={"epsilon": 1.0, "delta": 1e-9, "n": "public"},
                  workload={"marginals": [["age", "workclass"], ["sex", "race"]]})
    with open(ADULT) as fh:  # n is public: the plan is given the release's n (auto's rules read it)
        rows = sum(1 for _ in fh) - 1
    res = runner.invoke(app, ["plan", "-c", str(cfg), "--rows", str(rows)])
    assert res.exit_code == 0, res.stderr
    sd = float(res.stdout.split("Noise: standard deviation ")[1].split()[0])
    out = tmp_path / "rows.csv"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", ADULT, "-o", str(out), "--seed", "1"])
    assert res.exit_code == 0, res.stderr
    report = json.loads(out.with_name(out.name + ".report.json").read_text())
    assert report["algorithm"]["details"]["batch"] == 2
    first = next(c for c in report["ledger"] if c["stage"] == "mwem-measure")
    assert sd == pytest.approx(1.0 / (2.0 * first["rho"]) ** 0.5, rel=1e-3)
