"""``dpsynth release -i TABLE -o OUT --epsilon E`` with no config (issue 27): one ledger, a reusable config out,
never a refusal that depends on one row, and the same from Python (``dpsynth.release(df, epsilon=...)``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

import dpsynth
from dpsynth.cli import app
from dpsynth.config import load_config
from dpsynth.data.discover import share_for
from dpsynth.privacy.accountant import approx_dp_to_zcdp, zcdp_share


def _raw_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """A raw table as users have them: integers, tied years, signed narrow numbers, text, a rare category,
    a handful of nulls."""
    rng = np.random.default_rng(seed)
    t = pd.DataFrame({
        "year": rng.integers(1997, 2003, size=n),
        "amount": rng.integers(-11_537, -10_001, size=n),
        "score": np.round(rng.normal(50.0, 10.0, size=n), 2),
        "state": rng.choice(["alive", "dead"], size=n, p=[0.8, 0.2]),
        "group": rng.choice(["a", "b", "c"], size=n),
    })
    t.loc[:2, "score"] = np.nan  # a few nulls
    return t


def _release(runner, tmp_path, table: pd.DataFrame, *extra, name="in.csv"):
    src = tmp_path / name
    table.to_csv(src, index=False)
    out = tmp_path / f"{name}.synth.csv"
    res = runner.invoke(app, ["release", "-i", str(src), "-o", str(out), "--seed", "5", "--force", "-q", *extra])
    return res, out


def test_zero_config_release_writes_rows_report_and_a_reusable_config(runner, tmp_path):
    res, out = _release(runner, tmp_path, _raw_table(10_000), "--epsilon", "1")
    assert res.exit_code == 0, res.stderr
    report = json.loads(out.with_name(out.name + ".report.json").read_text())
    p = report["privacy"]
    assert p["epsilon_requested"] == 1.0 and 0.99 < p["epsilon_spent"] <= 1.0
    # under zCDP (delta > 0) discovery and release share one ledger: discovery takes its share of rho
    assert 0 < p["discovery"]["epsilon_spent"] < 1.0 and p["composition"]["theorem"] == "zcdp"
    rho = [c["rho"] for c in report["ledger"]]
    disc = sum(r for r, c in zip(rho, report["ledger"]) if c["stage"] == "discover")
    approx = sum(c["approx_delta"] for c in report["ledger"])
    share = p["discovery"]["rho_share"]  # sized from the public n (10,000 rows, 5 columns)
    assert share == pytest.approx(share_for(n=10_000, columns=5, epsilon=1.0, delta=1e-6, approx_delta=5e-7, l1=1.0))
    assert disc <= zcdp_share(1.0, 1e-6, share, 5e-7) * (1 + 1e-12)
    assert sum(rho) <= approx_dp_to_zcdp(1.0, 1e-6 - approx) * (1 + 1e-12)
    assert report["algorithm"]["name"] == "auto"
    assert sum(c["stage"] == "discover" for c in report["ledger"]) >= 5
    synth = pd.read_csv(out)
    assert list(synth.columns) == ["year", "amount", "score", "state", "group"]
    # the rare-but-not-negligible category is kept (issue 27: 'dead' was lost); numbers come out as integers
    assert set(synth["state"].dropna()) <= {"alive", "dead", "__other__"} and (synth["state"] == "dead").mean() > 0.1
    assert (synth["state"] == "__other__").mean() < 0.05  # the other-bucket holds no real value here: noise only
    assert synth["score"].isna().mean() < 0.05 and (synth["year"].dropna() % 1 == 0).all()
    cfg_path = out.with_name(out.name + ".config.yaml")
    doc = yaml.safe_load(cfg_path.read_text())
    assert doc["schema"]["discovery"]["rho_spent"] == pytest.approx(disc)
    assert doc["privacy"] == {"epsilon": 1.0, "delta": 1e-6}  # the whole budget: the discovery is entered in it
    cfg = load_config(cfg_path)
    assert cfg.schema_spend["rho_spent"] == pytest.approx(disc) and cfg.algorithm == "auto"
    # a release with the written config adds the recorded spend: the same totals as the one-run release
    src = tmp_path / "in.csv"
    again = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(src), "-o", str(tmp_path / "b.csv"),
                                "--seed", "5", "-q"])
    assert again.exit_code == 0, again.stderr
    p2 = json.loads((tmp_path / "b.csv.report.json").read_text())["privacy"]
    assert p2["epsilon_spent"] == pytest.approx(p["epsilon_spent"]) and p2["epsilon_requested"] == pytest.approx(1.0)
    ledger2 = json.loads((tmp_path / "b.csv.report.json").read_text())["ledger"]
    assert ledger2[0]["mechanism"] == "recorded-discovery" and ledger2[0]["rho"] == pytest.approx(disc)
    assert sum(c["rho"] for c in ledger2) == pytest.approx(sum(rho), rel=1e-6)


def test_report_show_prints_the_reports_own_replace_one_figure(runner, tmp_path):
    res, out = _release(runner, tmp_path, _raw_table(1500), "--epsilon", "1")
    assert res.exit_code == 0, res.stderr
    rep = out.with_name(out.name + ".report.json")
    p = json.loads(rep.read_text())["privacy"]
    shown = runner.invoke(app, ["report", "show", str(rep)])
    assert shown.exit_code == 0, shown.stderr
    assert f"replace-one (changing one row): at most epsilon {p['replace_one']['epsilon']:.4g}" in shown.stdout


@pytest.mark.parametrize("args, message", [
    ([], ("give --config/-c, or --epsilon for a release without a configuration "
         "(e.g. dpsynth release -i data.csv -o synth.csv --epsilon 1)")),
    (["--epsilon", "0"], "--epsilon: must be > 0, got 0.0"),
    (["--epsilon", "1", "--delta", "0"], ("--delta: must be in (0, 1) for a release without a schema (the discovery "
                                         "of categories needs it), got 0.0")),
    (["-c", "configs/adult.yaml", "--epsilon", "1"], ("--epsilon/--delta/--discover-share are for a release without "
                                                     "-c; set privacy.epsilon and privacy.delta (and schema.discover) "
                                                     "in the configuration")),
    (["--epsilon", "1", "--discover-share", "1"], "--discover-share: must be in (0, 1), got 1.0"),
])
def test_zero_config_usage_errors(runner, tmp_path, root, args, message):
    args = [a.replace("configs/", str(root / "configs") + "/") for a in args]
    res, out = _release(runner, tmp_path, _raw_table(50), *args)
    assert res.exit_code == 2, (res.exit_code, res.stderr)  # usage errors exit 2
    assert res.stderr == f"dpsynth: error: {message}\n"
    assert not out.exists()


def test_one_stray_row_never_changes_the_exit_status_or_the_schema_shape(runner, tmp_path):
    """Issue 24 item 4: a value the discovered schema cannot place (text in a numeric column, a null in a column
    without nulls) is mapped to the missing category, never refused: D and D plus such a row exit alike."""
    d = _raw_table(2000)
    d_plus = pd.concat([d, pd.DataFrame({"year": ["n/a"], "amount": [None], "score": ["oops"], "state": [None],
                                         "group": ["zzz"]})], ignore_index=True)
    outs = []
    for name, table in (("d.csv", d), ("d_plus.csv", d_plus)):
        res, out = _release(runner, tmp_path, table, "--epsilon", "1", name=name)
        assert res.exit_code == 0, res.stderr
        outs.append(yaml.safe_load(out.with_name(out.name + ".config.yaml").read_text()))
    assert [sorted(c) for c in outs[0]["schema"]["columns"].values()] == \
        [sorted(c) for c in outs[1]["schema"]["columns"].values()]


def test_a_table_of_one_column_gets_its_one_way_marginal(runner, tmp_path):
    """Zero-config's default workload is all 2-way marginals; a table of one column used to stop with "k: must be
    <= the number of columns (1)" after discovery had spent its share.  Its config now asks for k 1."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": np.where(rng.random(400) < 0.25, np.nan, rng.integers(0, 50, 400))})
    res, out = _release(runner, tmp_path, table, "--epsilon", "1")
    assert res.exit_code == 0, res.stderr
    written = yaml.safe_load(out.with_name(out.name + ".config.yaml").read_text())
    assert written["workload"] == {"marginals": {"k": 1}}
    # (a quarter null: the null value stays; without nulls discovery gives the column missing: fill, no null code)
    rows = pd.read_csv(out)  # n is public here: 400 rows, its nulls written "" (a blank line would be skipped)
    assert len(rows) == 400 and rows["x"].isna().any()


def test_zero_config_keeps_more_than_a_hundred_frequent_categories():
    """Zero-config discovers with max_categories 250 (config.ZERO_MAX_CATEGORIES): 150 labels of 200 rows each on
    30,000 rows, discovered with zero-config's spec and half of its ρ, stand far past partition selection's cut
    and all are kept; with the cap of 100 a third of the rows went to __other__ (held-out-10's car_exports: 166
    countries, 40 % of its rows)."""
    from dpsynth.config import zero_config
    from dpsynth.data.discover import discover_schema
    from dpsynth.privacy.accountant import Ledger, ZCDPComposition

    spec = zero_config(1.0, 1e-6).discover
    table = pd.DataFrame({"label": np.repeat([f"L{i:03d}" for i in range(150)], 200)})
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    found = discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(0),
                            rho=0.5 * approx_dp_to_zcdp(1.0, 5e-7))
    assert len(found.schema["columns"]["label"]["categories"]) == 150


def test_python_zero_config_release():
    result = dpsynth.release(_raw_table(1500), epsilon=1.0, rng=7)
    assert result.report["randomness"]["source"] == "seeded"
    assert result.report["privacy"]["epsilon_spent"] <= 1.0
    assert result.config_document["schema"]["discovery"]["rho_spent"] > 0
    again = dpsynth.release(_raw_table(1500), epsilon=1.0, rng=7)
    pd.testing.assert_frame_equal(result.synthetic, again.synthetic)
    with pytest.raises(dpsynth.ConfigError, match="epsilon: required"):
        dpsynth.release(_raw_table(10))


def test_evaluate_with_a_discovering_config_points_to_the_written_one(runner, root, tmp_path):
    cfg = root / "configs" / "adult-discover.yaml"
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(root / "sample_data" / "adult.csv"),
                              "--synthetic", str(root / "sample_data" / "adult.csv"), "--k", "2"])
    assert res.exit_code == 2
    assert res.stderr == (f"dpsynth: error: {cfg} discovers its schema at release time (schema.discover), so it "
                          "cannot bin the tables; evaluate with the configuration that release wrote "
                          "(<output>.config.yaml)\n")


def test_a_null_free_column_is_released_without_nulls_and_its_config_reads_nulls_as_the_fill(runner, tmp_path):
    """Issue 27: discovery gives the null-free columns ``missing: fill`` (no null code: no synthetic null), the
    written config and the report's learned notes say which value a null is read as, and that config releases a
    table with nulls and stray text in those columns without a refusal."""
    # (seed 6: a null-free column keeps a null cell on 2-3% of seeds, its noise past 2 sds; seed 5 does since
    # the kind histogram, kind.py: "group" 9 of 300 seeds, 5 before)
    res, out = _release(runner, tmp_path, _raw_table(), "--epsilon", "1", "--seed", "6")
    assert res.exit_code == 0, res.stderr
    conf = out.with_name(out.name + ".config.yaml")
    cols = yaml.safe_load(conf.read_text())["schema"]["columns"]
    assert cols["state"]["missing"] == "fill" and cols["state"]["fill"] == "alive"
    assert cols["year"]["missing"] == "fill" and "fill" in cols["year"]
    report = json.loads(out.with_name(out.name + ".report.json").read_text())
    learned = report["privacy"]["discovery"]["columns"]["state"]["learned"]
    assert "missing: fill (no nulls stood out of the noise: a null is encoded as 'alive')" in learned
    rows = pd.read_csv(out)
    assert not rows[["year", "amount", "state", "group"]].isna().any().any()
    again = _raw_table(seed=1).astype({"year": object})
    again.loc[10:19, "state"] = None
    again.loc[20:29, "year"] = "unknown"
    res, out2 = _release(runner, tmp_path, again, "-c", str(conf), name="again.csv")
    assert res.exit_code == 0, res.stderr
    assert not pd.read_csv(out2)[["year", "state"]].isna().any().any()
