"""Issue 15: batch jobs without surprises (YAML as people write it, warnings under -q, small things)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dpsynth.cli import app

ADULT_CFG = "configs/adult.yaml"
NLTCS_CFG = "configs/nltcs.yaml"


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


def _small_nltcs(tmp_path: Path, rows: int = 300) -> Path:
    import pandas as pd

    p = tmp_path / "small.csv"
    pd.read_csv("sample_data/nltcs.csv", nrows=rows).to_csv(p, index=False)
    return p


def _nltcs_config(tmp_path: Path, text_changes: dict[str, str] | None = None, **changes) -> Path:
    raw = yaml.safe_load(Path(NLTCS_CFG).read_text())
    raw.update(changes)
    text = yaml.safe_dump(raw, sort_keys=False)
    for old, new in (text_changes or {}).items():
        assert old in text
        text = text.replace(old, new)
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return p


# ---------------------------------------------------------------- item 2: YAML
def test_exponent_numbers_in_a_config_release(runner, tmp_path):
    """`delta: 1e-5` and `epsilon: 1e0` were 'expected a number, got '1e-5''; now they are numbers."""
    cfg = _nltcs_config(tmp_path, text_changes={"epsilon: 1.0": "epsilon: 1e0\n  delta: 1e-5"})
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(_small_nltcs(tmp_path)),
                              "-o", str(tmp_path / "o.csv"), "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert report["privacy"]["delta_requested"] == 1e-5 and report["privacy"]["epsilon_requested"] == 1.0


def test_duplicate_key_cli(runner, tmp_path):
    cfg = tmp_path / "dup.yaml"
    cfg.write_text(Path(ADULT_CFG).read_text() + "seed: 1\nseed: 2\n")
    res = runner.invoke(app, ["plan", "-c", str(cfg)])
    line = len(Path(ADULT_CFG).read_text().splitlines()) + 2
    assert res.exit_code == 64
    assert res.stderr == (f"dpsynth: error: {cfg}: duplicate key 'seed' at line {line} (first at line {line - 1}); "
                          "keep one of them\n")


def test_yaml_syntax_error_says_what_was_expected(runner, tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("a: 1\nb: {x: [1, 2}\n")
    res = runner.invoke(app, ["plan", "-c", str(cfg)])
    assert res.exit_code == 64
    assert res.stderr == (f"dpsynth: error: {cfg}: invalid YAML at line 2, column 13: expected ',' or ']', "
                          "but got '}' (while parsing a flow sequence)\n")


# ---------------------------------------------------------------- item 6: MWEM default rounds
def test_mwem_default_iterations_adapt_cli(runner, tmp_path):
    """6 columns, k: 2: 15 candidate queries; the default 20 rounds used to exit 64."""
    import pandas as pd

    cols = [f"a{i}" for i in range(6)]
    src = tmp_path / "six.csv"
    pd.read_csv("sample_data/nltcs.csv", nrows=300, usecols=cols).to_csv(src, index=False)
    raw = yaml.safe_load(Path(NLTCS_CFG).read_text())
    raw["schema"]["columns"] = {c: raw["schema"]["columns"][c] for c in cols}
    raw["algorithm"] = {"name": "mwem", "params": {"variant": "paper"}}  # the pgm default has no such limit
    raw["workload"] = {"marginals": {"k": 2}}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "o.csv"),
                              "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    details = json.loads((tmp_path / "o.csv.report.json").read_text())["algorithm"]["details"]
    assert details["iterations"] == 15
    assert details["iterations_note"] == ("iterations not set: 15 rounds, one per candidate query "
                                          "(fewer than the default 20)")
    raw["algorithm"] = {"name": "mwem", "params": {"iterations": 20, "variant": "paper"}}
    cfg.write_text(yaml.safe_dump(raw))
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "p.csv"),
                              "--seed", "1", "--silent"])
    assert res.exit_code == 64
    assert res.stderr == ("dpsynth: error: algorithm.params.iterations: 20 rounds but only 15 candidate queries "
                          "(lower iterations, leave it unset, or set reselect: true)\n")


# ---------------------------------------------------------------- item 3: -q keeps warnings
SEEDED_WARNING = ("warning: this release was produced with a fixed seed: its noise can be reproduced by anyone "
                  "who knows the seed; seeded runs are for testing only, never publish them\n")


def test_quiet_keeps_warnings_and_notices_silent_drops_them(runner, tmp_path):
    import pandas as pd

    src = tmp_path / "extra.csv"
    df = pd.read_csv("sample_data/nltcs.csv", nrows=300)
    df["note"] = "x"
    df.to_csv(src, index=False)
    args = ["release", "-c", NLTCS_CFG, "-i", str(src), "--seed", "1", "--force"]
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "q.csv"), "-q"])
    assert res.exit_code == 0
    assert res.stderr.startswith("notice: ignoring 1 input column(s) not in the schema: note\n" + SEEDED_WARNING)
    assert all(line.startswith("warning: ") for line in res.stderr.splitlines()[1:])  # warnings only, no summary
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "s.csv"), "--silent"])
    assert res.exit_code == 0 and res.stderr == ""


# ---------------------------------------------------------------- item 7: small things
def _one_line(res, code: int, message: str) -> None:
    assert res.exit_code == code, (res.exit_code, res.stderr)
    assert res.stderr == f"dpsynth: error: {message}\n"


def test_negative_seed_is_a_usage_error(runner, tmp_path):
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(_small_nltcs(tmp_path)),
                              "-o", str(tmp_path / "o.csv"), "--seed", "-1"])
    _one_line(res, 2, "--seed must be a non-negative integer, got -1")


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_respect_the_umask(runner, tmp_path, mask, mode):
    import os

    old = os.umask(mask)
    try:
        res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(_small_nltcs(tmp_path)),
                                  "-o", str(tmp_path / "o.csv"), "--seed", "1", "--silent"])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.stderr
    for name in ("o.csv", "o.csv.report.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode


def test_version_and_short_help(runner):
    from dpsynth._version import __version__

    for flag in ("--version", "-V"):
        res = runner.invoke(app, [flag])
        assert res.exit_code == 0 and res.stdout == f"dpsynth {__version__}\n"
    res = runner.invoke(app, ["release", "-h"])
    assert res.exit_code == 0 and "Usage:" in res.stdout and "--force" in res.stdout
    assert "<bool>" not in res.stdout  # flags take no value


def test_force_with_a_value_is_one_line(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(src), "-o", str(tmp_path / "o.csv"),
                              "--force", "true"])
    assert res.exit_code == 2
    assert res.stderr == "dpsynth: error: Got unexpected extra argument(s) (true) (see dpsynth release --help)\n"


def _evaluate(runner, tmp_path, *extra):
    src = _small_nltcs(tmp_path)
    out = tmp_path / "s.csv"
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(src), "-o", str(out), "--seed", "1", "--silent",
                              "--force"])
    assert res.exit_code == 0, res.stderr
    return runner.invoke(app, ["evaluate", "-c", NLTCS_CFG, "--real", str(src), "--synthetic", str(out),
                               "--k", "1", "--ranges", "0", "-q", "--force", *extra])


@pytest.mark.parametrize(("ext", "magic"), [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_format_by_extension_with_title_and_legend(runner, tmp_path, ext, magic):
    plot = tmp_path / f"p.{ext}"
    res = _evaluate(runner, tmp_path, "--plot", str(plot))
    assert res.exit_code == 0, res.stderr
    data = plot.read_bytes()
    assert data.startswith(magic)
    if ext == "svg":  # text kept as text: the title (file, algorithm, epsilon) and the legend
        text = data.decode()
        assert "s.csv: laplace, epsilon 1" in text and ">mean<" in text and ">median<" in text


def test_plot_unknown_extension(runner, tmp_path):
    res = _evaluate(runner, tmp_path, "--plot", str(tmp_path / "p.jpg"))
    _one_line(res, 2, f"--plot must end in .png, .svg or .pdf, got '{tmp_path / 'p.jpg'}'")


def test_evaluate_released_column_only_with_marginals(runner, tmp_path):
    res = _evaluate(runner, tmp_path)
    assert res.exit_code == 0, res.stderr
    assert "other metrics" in res.stdout and "released" not in res.stdout


def test_summary_rounds_epsilon_and_labels_the_basic_bound(runner, tmp_path):
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(_small_nltcs(tmp_path)),
                              "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 0
    assert "1 / 1 (exact figures in the report)" in res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert report["privacy"]["composition"]["basic_note"] == (
        "the guarantee is basic sequential composition: epsilon_spent is the sum of the ledger")


def test_basic_bound_labelled_loose_when_another_theorem_is_used():
    from dpsynth.report import _basic_note

    note = _basic_note({"epsilon_spent": 0.96, "epsilon_spent_basic": 68.14, "composition": "zcdp"})
    assert note == ("epsilon_spent_basic is a LOOSE upper bound (the plain sum of the ledger's charges, basic "
                    "composition), shown for auditing only; the guarantee is epsilon_spent = 0.96 under zcdp composition")


def test_non_private_oracle_moved(runner, tmp_path):
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", "x.csv", "-o", str(tmp_path / "o.csv"),
                              "--non-private-oracle"])
    _one_line(res, 2, "--non-private-oracle moved to its own command: dpsynth oracle -c CONFIG -i INPUT")
    assert "--non-private-oracle" not in runner.invoke(app, ["release", "--help"]).stdout
    assert "oracle" in runner.invoke(app, ["--help"]).stdout


def test_sigterm_exits_143_without_output(tmp_path):
    import os
    import signal

    import typer

    from dpsynth.cli._common import handle_errors

    @handle_errors
    def job():
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(typer.Exit) as info:
        job()
    assert info.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is not None


# ---------------------------------------------------------------- item 9: report show
def test_report_show(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    res = runner.invoke(app, ["release", "-c", NLTCS_CFG, "-i", str(src), "-o", str(tmp_path / "o.csv"),
                              "--seed", "1", "--silent"])
    assert res.exit_code == 0
    res = runner.invoke(app, ["report", "show", str(tmp_path / "o.csv.report.json")])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert out.startswith("# dpsynth release report")
    assert "- 300 synthetic rows with columns: a0, a1," in out
    assert "- add-remove (adding or removing one row), as configured: epsilon 1\n" in out
    assert "- replace-one (changing one row): at most epsilon 2 (a replacement is a removal plus an addition" in out
    assert "| measure | discrete-laplace | 120 | 480 | 1 |\n" in out
    assert "## Public (not protected)\n- the configuration:" in out
    assert "## Warnings\n- this release was produced with a fixed seed" in out


def test_report_show_errors(runner, tmp_path):
    _one_line(runner.invoke(app, ["report", "show", str(tmp_path / "none.json")]), 66,
              f"report file not found: {tmp_path / 'none.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    _one_line(runner.invoke(app, ["report", "show", str(bad)]), 64, f"{bad}: not a dpsynth report (invalid JSON)")
    bad.write_text('{"schema_version": 1}')
    res = runner.invoke(app, ["report", "show", str(bad)])
    assert res.exit_code == 64 and res.stderr.startswith(f"dpsynth: error: {bad}: not a valid dpsynth report")


# ---------------------------------------------------------------- item 4: progress in logs
class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _log_bar(fmt: str):
    import io

    from rich.console import Console

    from dpsynth.cli._common import Bar

    buf = io.StringIO()
    clock = _Clock()
    bar = Bar(Console(file=buf, force_terminal=False), enabled=True, log_format=fmt, interval=10.0, clock=clock)
    return bar, clock, buf


def test_progress_lines_when_not_a_terminal_are_bounded_and_have_eta():
    bar, clock, buf = _log_bar("text")
    with bar:
        for done in range(1, 51):  # 50 rounds, 1 s each
            clock.t = float(done)
            bar("dualquery", done, 50)
    lines = buf.getvalue().splitlines()
    assert lines[0] == "dpsynth: progress: dualquery 1/50 (2%), elapsed 0:00:00, ETA unknown"
    assert lines[1] == "dpsynth: progress: dualquery 11/50 (22%), elapsed 0:00:10, ETA 0:00:39"
    assert lines[-1] == "dpsynth: progress: dualquery 50/50 (100%), elapsed 0:00:49, ETA 0:00:00"
    assert len(lines) == 1 + 4 + 1  # the first, one per 10 s, the last


def test_progress_json_lines():
    import json as _json

    bar, clock, buf = _log_bar("json")
    with bar:
        bar("mwem", 1, 4)
        clock.t = 2.0
        bar("mwem", 4, 4)
    first, last = (_json.loads(x) for x in buf.getvalue().splitlines())
    assert first == {"event": "progress", "stage": "mwem", "done": 1, "total": 4, "elapsed_s": 0.0, "eta_s": None}
    assert last == {"event": "progress", "stage": "mwem", "done": 4, "total": 4, "elapsed_s": 2.0, "eta_s": 0.0}


def test_release_logs_progress_to_a_pipe_and_log_format_is_checked(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    cfg = _nltcs_config(tmp_path, algorithm={"name": "mwem", "params": {"iterations": 3}})
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "o.csv"),
                              "--seed", "1", "--log-format", "json"])
    assert res.exit_code == 0, res.stderr
    events = [e for e in map(json.loads, res.stderr.splitlines()) if e["event"] == "progress"]
    # MWEM (pgm) may end before its 3 nominal rounds (a grown budget, or no candidate left under model_cells)
    assert events[0]["stage"] == "mwem" and events[-1]["total"] == 3 and 1 <= events[-1]["done"] <= 3
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / "p.csv"),
                              "--log-format", "xml"])
    _one_line(res, 2, "--log-format must be text or json, got 'xml'")


# ---------------------------------------------------------------- item 5: input as it arrives
def _adult_head(rows: int = 300):
    import pandas as pd

    return pd.read_csv("sample_data/adult.csv", nrows=rows, dtype=str)


def _release_both_engines(runner, tmp_path, cfg, src, *extra):
    out = []
    for engine in ("numpy", "stream"):
        out.append(runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(tmp_path / f"{engine}.csv"),
                                       "--seed", "2", "--silent", "--force", "--engine", engine, *extra]))
    return out


def test_semicolon_csv_hint_and_delimiter(runner, tmp_path):
    src = tmp_path / "semi.csv"
    _adult_head().to_csv(src, sep=";", index=False)
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src):
        _one_line(res, 65, "column 'age' is declared in the schema but missing from the input (and 14 more); "
                           "the header looks ';'-separated: pass --delimiter ';'")
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src, "--delimiter", ";"):
        assert res.exit_code == 0, res.stderr
    assert (tmp_path / "numpy.csv").read_bytes() == (tmp_path / "stream.csv").read_bytes()
    tab = tmp_path / "tab.csv"
    _adult_head().to_csv(tab, sep="\t", index=False)
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", str(tab), "-o", str(tmp_path / "t.csv"),
                              "--silent", "--delimiter", "\\t"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", str(tab), "-o", str(tmp_path / "u.csv"),
                              "--delimiter", ";;"])
    _one_line(res, 2, "--delimiter must be one character other than a quote or newline, got ';;'")


def test_uci_padded_fields_and_schema_strip(runner, tmp_path):
    src = tmp_path / "uci.csv"
    src.write_text(_adult_head().to_csv(index=False).replace(",", ", "))
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src):
        _one_line(res, 65, "column 'workclass' is declared in the schema but missing from the input (and 13 more); "
                           "the header has spaces around its names: set 'schema.strip: true'")
    raw = yaml.safe_load(Path(ADULT_CFG).read_text())
    raw["schema"]["strip"] = True
    cfg = tmp_path / "strip.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    for res in _release_both_engines(runner, tmp_path, cfg, src):
        assert res.exit_code == 0, res.stderr
    assert (tmp_path / "numpy.csv").read_bytes() == (tmp_path / "stream.csv").read_bytes()


def test_schema_strip_removes_trailing_spaces_on_both_engines(runner, tmp_path):
    """Trailing spaces too: pandas 3 reads text as the str dtype, which _strip once skipped (only the leading
    spaces went, by skipinitialspace), so 'Private  ' stayed outside its category and the release refused."""
    df = _adult_head()
    df["workclass"] = df["workclass"].fillna("Private") + "  "
    src = tmp_path / "trail.csv"
    df.to_csv(src, index=False)
    raw = yaml.safe_load(Path(ADULT_CFG).read_text())
    raw["schema"]["strip"] = True
    raw["schema"]["unknown"] = "error"
    cfg = tmp_path / "strip.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    for res in _release_both_engines(runner, tmp_path, cfg, src):
        assert res.exit_code == 0, res.stderr
    assert (tmp_path / "numpy.csv").read_bytes() == (tmp_path / "stream.csv").read_bytes()


def test_padded_values_hint(runner, tmp_path):
    df = _adult_head()
    df["workclass"] = " " + df["workclass"].fillna("Private")
    src = tmp_path / "pad.csv"
    df.to_csv(src, index=False)
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src):
        _one_line(res, 65, "column 'workclass' has values outside its declared categories; add them to the schema "
                           "or set 'schema.unknown: other'; they match once spaces around fields are removed: set "
                           "'schema.strip: true'")


def test_latin1_encoding(runner, tmp_path):
    df = _adult_head()
    df.loc[3, "native-country"] = "Côte"  # not a category: the encoding works, the schema check follows
    src = tmp_path / "latin.csv"
    df.to_csv(src, index=False, encoding="latin-1")
    offset = src.read_bytes().index("ô".encode("latin-1"))
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src):
        _one_line(res, 65, f"{src}: the input is not valid UTF-8 (first bad byte at offset {offset}); if it is in "
                           "another encoding, pass --encoding (e.g. latin-1)")
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src, "--encoding", "latin-1"):
        _one_line(res, 65, "column 'native-country' has values outside its declared categories; add them to the "
                           "schema or set 'schema.unknown: other'")
    df.loc[3, "native-country"] = "Canada"
    df.loc[4, "native-country"] = "Côte"
    df = df.drop(index=4)
    df.to_csv(src, index=False, encoding="latin-1")
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src, "--encoding", "latin-1"):
        assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", str(src), "-o", str(tmp_path / "x.csv"),
                              "--encoding", "klingon"])
    _one_line(res, 2, "--encoding: unknown encoding 'klingon' (e.g. utf-8, latin-1, cp1252)")


@pytest.mark.parametrize(("row", "fields"), [("39,State-gov,77516", 3), ("39," * 15 + "x", 16)])
def test_ragged_rows_one_message_across_engines(runner, tmp_path, row, fields):
    text = _adult_head(5).to_csv(index=False).splitlines()
    text.insert(3, row)
    src = tmp_path / "ragged.csv"
    src.write_text("\n".join(text) + "\n")
    for res in _release_both_engines(runner, tmp_path, ADULT_CFG, src):
        _one_line(res, 65, f"{src}: malformed CSV (line 4 has {fields} fields, expected 15)")


def test_spark_refuses_input_options(runner, tmp_path):
    res = runner.invoke(app, ["release", "-c", ADULT_CFG, "-i", "sample_data/adult.csv", "-o", str(tmp_path / "o.csv"),
                              "--engine", "spark", "--delimiter", ";"])
    _one_line(res, 2, "--delimiter, --encoding and schema.strip are supported by the numpy and stream engines; "
                      "convert the file to UTF-8 comma-separated CSV for --engine spark")


def test_check_lists_rows_and_columns(runner, tmp_path):
    df = _adult_head(50)
    df.loc[[2, 7], "workclass"] = "Space-pirate"
    df.loc[5, "age"] = "old"
    df.loc[[1, 3, 4, 6, 8, 9, 10], "hours-per-week"] = "150"
    df["extra"] = "x"
    src = tmp_path / "bad.csv"
    df.to_csv(src, index=False)
    res = runner.invoke(app, ["check", "-c", ADULT_CFG, "-i", str(src)])
    assert res.exit_code == 65
    assert res.stdout == (
        "50 data rows checked against the schema\n"
        "ignored (not in the schema): extra\n"
        "age: not a number: 1 row(s): 6\n"
        "workclass: value outside the declared categories: 2 row(s): 3, 8\n"
        "hours-per-week: outside the declared range [1, 100] (or not finite): 7 row(s): 2, 4, 5, 7, 9, ... (2 more)\n"
    )
    assert res.stderr == ("dpsynth: NOT PRIVATE: this check reads the real table; its row numbers describe the data\n"
                          f"dpsynth: error: {src}: 3 schema problem(s) in 50 rows (listed on stdout)\n")
    res = runner.invoke(app, ["check", "-c", ADULT_CFG, "-i", "sample_data/adult.csv"])
    assert res.exit_code == 0
    assert res.stdout == "32561 data rows checked against the schema\nno problems: every row fits the schema\n"
