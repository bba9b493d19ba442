"""Issue 26: batch jobs and packaging (closed pipes, streamed stdout, JSON logs, memory limits, ...)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from dpsynth.cli import app
from tests.helpers import ROOT

CONFIG = {
    "schema": {"columns": {f"a{i}": {"type": "categorical", "categories": [0, 1]} for i in range(6)}},
    "privacy": {"epsilon": 1.0},
    "algorithm": {"name": "laplace"},
    "workload": {"marginals": {"k": 2}},
}


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    """One seeded release with --model of a small table, shared by the tests (read-only)."""
    d = tmp_path_factory.mktemp("batch")
    cfg = dict(CONFIG, output={"rows": 200_000})
    (d / "cfg.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    pd.read_csv(ROOT / "sample_data" / "nltcs.csv", nrows=500)[list(CONFIG["schema"]["columns"])].to_csv(
        d / "in.csv", index=False)
    res = CliRunner().invoke(app, ["release", "-c", str(d / "cfg.yaml"), "-i", str(d / "in.csv"),
                                   "-o", str(d / "out.csv"), "--model", str(d / "m.dpm"), "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    return d


def _dpsynth(*args: str) -> list[str]:
    return [sys.executable, "-m", "dpsynth", *map(str, args)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# ---------------------------------------------------------------- item 1: a closed pipe
@pytest.mark.parametrize("command", ["sample", "release"])
def test_a_closed_pipe_exits_quietly_with_141(release_dir, tmp_path, command):
    """`dpsynth sample -o - | head -2`: the reader leaves after two lines; 200,000 rows (6 MB) do not fit in
    the pipe's buffer, so the writer meets the closed pipe: status 141 (128 + SIGPIPE), nothing on stderr."""
    d = release_dir
    args = {"sample": ("sample", "-m", d / "m.dpm", "-n", 200_000, "-o", "-", "-r", tmp_path / "s.json", "-q"),
            "release": ("release", "-c", d / "cfg.yaml", "-i", d / "in.csv", "-o", "-", "-r", tmp_path / "r.json",
                        "-q")}[command]
    with subprocess.Popen(_dpsynth(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                          cwd=tmp_path) as proc:
        head = [proc.stdout.readline() for _ in range(2)]
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=600) == 141
    assert head[0] == b"a0,a1,a2,a3,a4,a5\n" and len(head[1].split(b",")) == 6
    assert stderr == b""


def test_a_closed_pipe_after_a_small_output_is_quiet(release_dir, tmp_path):
    """`dpsynth report show R` into a pipe whose reader is gone before it starts: the output is small and
    buffered, so the closed pipe shows at the final flush, not at exit: 141, nothing on stderr."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the command starts: the first flush meets a closed pipe
    proc = subprocess.run(_dpsynth("report", "show", release_dir / "out.csv.report.json"), stdout=w,
                          stderr=subprocess.PIPE, env=_env(), cwd=tmp_path, check=False)
    os.close(w)
    assert proc.returncode == 141
    assert proc.stderr == b""


def test_broken_pipe_in_process_is_141_without_a_message(release_dir, tmp_path, monkeypatch):
    from dpsynth.cli import _common

    def closed(*a, **k):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("dpsynth.data.io.OutputSet.commit", closed)
    res = CliRunner().invoke(app, ["sample", "-m", str(release_dir / "m.dpm"), "-n", "10", "-o", "-",
                                   "-r", str(tmp_path / "s.json")])
    assert res.exit_code == _common.CLOSED_PIPE == 141
    assert res.stderr == ""


# ---------------------------------------------------------------- item 2: -o - streams
class _Chunk:
    def __init__(self, df: pd.DataFrame):
        self.df = df

    def to_pandas(self) -> pd.DataFrame:
        return self.df

    def to_arrow(self):
        import pyarrow as pa

        return pa.Table.from_pandas(self.df, preserve_index=False)


def test_stdout_is_streamed_chunk_by_chunk_after_the_files(tmp_path, monkeypatch):
    """The first rows are on stdout before the last chunk is even produced, and the report file is
    already in place when the first chunk is asked for; no temporary file is created for stdout."""
    import tempfile

    from dpsynth.data.io import OutputSet

    class Out:
        buffer = io.BytesIO()

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Out())

    def no_temp(*a, **k):
        raise AssertionError("stdout went through a temporary file")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_temp)
    seen: list[int] = []
    report = tmp_path / "r.json"

    def chunks(n=12):
        for i in range(n):
            seen.append(Out.buffer.getbuffer().nbytes)
            if i == 0:
                assert report.is_file()
            yield _Chunk(pd.DataFrame({"x": [i] * 3, "y": ["a", "b", "c"]}))

    with OutputSet() as out:
        out.add_table_chunks("-", chunks())
        out.add_bytes(report, b"{}\n")
        assert seen == []  # nothing sampled before commit: the files come first
        out.commit()
    text = Out.buffer.getvalue().decode()
    assert text.splitlines()[:2] == ["x,y", "0,a"] and len(text.splitlines()) == 1 + 12 * 3
    # prefetch runs at most 2 chunks ahead (plus one in hand): when the 12th chunk is produced, >= 8 are out
    assert seen[-1] >= len("x,y\n") + 8 * len("0,a\n0,b\n0,c\n")


# ---------------------------------------------------------------- item 3: --log-format json
def _json_lines(stderr: str) -> list[dict]:
    lines = stderr.splitlines()
    assert lines, "nothing on stderr"
    return [json.loads(line) for line in lines]  # every line one JSON object, or this raises


def test_release_json_log_every_stderr_line_is_json_and_the_summary_is_last(release_dir, tmp_path):
    d = release_dir
    res = CliRunner().invoke(app, ["release", "-c", str(d / "cfg.yaml"), "-i", str(d / "in.csv"),
                                   "-o", str(tmp_path / "o.csv"), "--seed", "1", "--log-format", "json"])
    assert res.exit_code == 0, res.stderr
    events = _json_lines(res.stderr)
    kinds = [e["event"] for e in events]
    assert kinds[-1] == "summary" and kinds.count("summary") == 1
    assert set(kinds) == {"progress", "warning", "summary"}
    summary = events[-1]
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert summary["command"] == "release" and summary["algorithm"] == "laplace"
    assert summary["epsilon_spent"] == report["privacy"]["epsilon_spent"] and summary["rows"] == 200_000
    assert summary["warnings"] == len(report["warnings"]) == kinds.count("warning") >= 1  # the fixed seed
    assert [e["message"] for e in events if e["event"] == "warning"] == report["warnings"]
    last = {e["stage"]: e for e in events if e["event"] == "progress"}
    assert all(e["done"] == e["total"] and e["eta_s"] == 0.0 for e in last.values())


def test_release_json_log_errors_are_json_too(release_dir, tmp_path):
    d = release_dir
    (tmp_path / "o.csv").write_text("x\n")
    res = CliRunner().invoke(app, ["release", "-c", str(d / "cfg.yaml"), "-i", str(d / "in.csv"),
                                   "-o", str(tmp_path / "o.csv"), "--log-format", "json"])
    assert res.exit_code == 73
    assert _json_lines(res.stderr) == [{"event": "error", "exit_code": 73,
                                        "message": f"output exists: {tmp_path / 'o.csv'} (use --force to overwrite)"}]
    # the next command in the same process is back to text
    res = CliRunner().invoke(app, ["release", "-c", str(d / "cfg.yaml"), "-i", str(d / "in.csv"),
                                   "-o", str(tmp_path / "o.csv")])
    assert res.stderr == f"dpsynth: error: output exists: {tmp_path / 'o.csv'} (use --force to overwrite)\n"


def test_evaluate_json_log_is_json_only(release_dir, tmp_path):
    d = release_dir
    res = CliRunner().invoke(app, ["evaluate", "-c", str(d / "cfg.yaml"), "--real", str(d / "in.csv"),
                                   "--synthetic", str(d / "out.csv"), "--k", "1", "--json", "-", "--seed", "1",
                                   "--log-format", "json"])
    assert res.exit_code == 0, res.stderr
    events = _json_lines(res.stderr)
    notices = [e["message"] for e in events if e["event"] == "notice"]
    assert len(notices) == 1 and notices[0].startswith("NOT PRIVATE: "), events
    assert events[-1]["event"] == "summary" and events[-1]["command"] == "evaluate"
    json.loads(res.stdout)


def test_progress_that_ends_short_of_its_total_gets_a_final_line():
    """MWEM may stop before its nominal rounds: the stage's last line says where it ended, ETA 0."""
    from rich.console import Console

    from dpsynth.cli._common import Bar

    buf = io.StringIO()
    clock = type("C", (), {"t": 0.0, "__call__": lambda self: self.t})()
    with Bar(Console(file=buf, force_terminal=False), enabled=True, log_format="json", clock=clock) as bar:
        bar("mwem", 1, 10)
        clock.t = 3.0
        bar("mwem", 4, 10)  # within the 10 s interval: no line
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert lines == [
        {"event": "progress", "stage": "mwem", "done": 1, "total": 10, "elapsed_s": 0.0, "eta_s": None},
        {"event": "progress", "stage": "mwem", "done": 4, "total": 10, "elapsed_s": 3.0, "eta_s": 0.0},
    ]


# ---------------------------------------------------------------- item 4: the memory guard's limit
def _adult_k(tmp_path: Path, k: int) -> Path:
    raw = yaml.safe_load((ROOT / "configs" / "adult.yaml").read_text())
    raw["workload"] = {"marginals": {"k": k}}
    p = tmp_path / f"adult-k{k}.yaml"
    p.write_text(yaml.safe_dump(raw, sort_keys=False))
    return p


GB = 1 << 30


@pytest.mark.parametrize(("rlimit", "cgroup", "source"), [
    (None, None, "default: 50% of this machine's 64.0 GB RAM"),
    (6 * GB, None, ("default: 50% of the address-space limit RLIMIT_AS (ulimit -v), 6.0 GB, below this machine's "
                   "64.0 GB RAM")),
    (6 * GB, (3 * GB, "/sys/fs/cgroup/memory.max"),
     "default: 50% of the cgroup memory limit (/sys/fs/cgroup/memory.max), 3.0 GB, below this machine's 64.0 GB RAM"),
    (None, (80 * GB, "/sys/fs/cgroup/memory/memory.limit_in_bytes"), "default: 50% of this machine's 64.0 GB RAM"),
])
def test_the_smallest_memory_limit_governs_and_is_named(tmp_path, monkeypatch, rlimit, cgroup, source):
    from dpsynth.plan import machine

    monkeypatch.setattr(machine, "machine_memory", lambda: 64 * GB)
    monkeypatch.setattr(machine, "address_space_limit", lambda: rlimit)
    monkeypatch.setattr(machine, "cgroup_memory_limit", lambda: cgroup)
    res = CliRunner().invoke(app, ["plan", "-c", str(_adult_k(tmp_path, 4)), "--rows", "32561"])
    assert res.exit_code == 0, res.stderr
    limit = min(64 * GB, rlimit or 64 * GB, (cgroup or (64 * GB,))[0]) / 2 / GB
    assert f"(limit {limit:.1f} GB, {source})" in res.stdout
    assert limit > 1  # a k = 4 workload on Adult is predicted at about 0.5 GB: these cases pass
    monkeypatch.setattr(machine, "address_space_limit", lambda: 768 << 20)  # 384 MB: release refuses, naming it
    res = CliRunner().invoke(app, ["release", "-c", str(_adult_k(tmp_path, 4)), "-i", str(ROOT / "sample_data" /
                                   "adult.csv"), "-o", str(tmp_path / "o.csv")])
    assert res.exit_code == 64
    assert res.stderr.endswith(" more than the limit of 384.0 MB (default: 50% of the address-space limit RLIMIT_AS "
                               "(ulimit -v), 768.0 MB, below this machine's 64.0 GB RAM); reduce the workload or raise "
                               "limits.max_memory in the config or --max-memory (see dpsynth plan)\n"), res.stderr


@pytest.mark.parametrize(("files", "expected"), [
    ({"v2": "max\n"}, None),
    ({"v2": "2147483648\n"}, (2147483648, "v2")),
    ({"v1": "9223372036854771712\n"}, None),  # v1's "no limit"
    ({"v1": "1073741824\n"}, (1073741824, "v1")),
    ({}, None),
])
def test_cgroup_limit_reader(tmp_path, files, expected):
    from dpsynth.plan.machine import cgroup_memory_limit

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = cgroup_memory_limit((str(tmp_path / "v2"), str(tmp_path / "v1")))
    assert found == (None if expected is None else (expected[0], str(tmp_path / expected[1])))


def test_release_under_ulimit_v_refuses_and_names_rlimit_as(tmp_path):
    """A real `ulimit -v 800000` (KiB): the guard's limit is half of it; a k = 4 Adult release (0.5 GB
    predicted) is refused before any data is read, where it used to pass and die of MemoryError (exit 70)."""
    cmd = " ".join(["ulimit -v 800000 &&", *_dpsynth("release", "-c", _adult_k(tmp_path, 4), "-i",
                                                      ROOT / "sample_data" / "adult.csv", "-o", tmp_path / "o.csv")])
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=_env(), cwd=tmp_path,
                          check=False, timeout=600)
    assert proc.returncode == 64, proc.stderr
    assert "more than the limit of 390.6 MB (default: 50% of the address-space limit RLIMIT_AS (ulimit -v), " \
           "781.2 MB, below this machine's " in proc.stderr
    assert not (tmp_path / "o.csv").exists()


# ---------------------------------------------------------------- item 5: an install without extras
def test_evaluate_plot_without_matplotlib_says_how_to_install_it(release_dir, tmp_path, monkeypatch):
    monkeypatch.setattr("dpsynth.nonprivate.plot.plot_available", lambda: False)
    d = release_dir
    res = CliRunner().invoke(app, ["evaluate", "-c", str(d / "cfg.yaml"), "--real", str(d / "in.csv"),
                                   "--synthetic", str(d / "out.csv"), "--plot", str(tmp_path / "p.png")])
    assert res.exit_code == 69
    assert res.stderr == ("dpsynth: error: --plot needs matplotlib, which is not installed: "
                          "pip install 'dpsynth[plot]' (or drop --plot)\n")
    assert not (tmp_path / "p.png").exists()


def test_runtime_dependencies_cover_what_report_show_and_the_commands_import():
    """jsonschema is a runtime dependency (report show validates); matplotlib is the 'plot' extra, in dev too."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {r.split(">")[0].split("<")[0].split("=")[0].strip() for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert "jsonschema" in runtime and "matplotlib" not in runtime
    assert extras["plot"] == ["matplotlib>=3.8"] and "matplotlib>=3.8" in extras["dev"]
    assert "bash tools/smoke_no_extras.sh" in (ROOT / ".ci" / "run").read_text()


# ---------------------------------------------------------------- item 6: schema draft --delimiter/--encoding
def _adult_head(tmp_path: Path, name: str, sep: str, encoding: str = "utf-8") -> Path:
    df = pd.read_csv(ROOT / "sample_data" / "adult.csv", nrows=200, dtype=str)
    p = tmp_path / name
    df.to_csv(p, sep=sep, index=False, encoding=encoding)
    return p


@pytest.mark.parametrize(("sep", "shown"), [(";", ";"), ("\t", "\\t")])
def test_schema_draft_names_the_delimiter_instead_of_drafting_raw_rows(tmp_path, sep, shown):
    src = _adult_head(tmp_path, "a.csv", sep)
    res = CliRunner().invoke(app, ["schema", "draft", str(src)])
    assert res.exit_code == 65 and res.stdout == ""
    assert res.stderr.splitlines()[-1] == (f"dpsynth: error: {src}: the header looks '{shown}'-separated (one column "
                                           f"was read): pass --delimiter '{shown}'")
    res = CliRunner().invoke(app, ["schema", "draft", str(src), "--delimiter", shown])
    assert res.exit_code == 0, res.stderr
    assert "sex" in yaml.safe_load(res.stdout)["schema"]["columns"]


def test_schema_draft_takes_the_encoding_it_suggests(tmp_path):
    src = tmp_path / "l.csv"
    src.write_bytes("town,n\nK\xf6ln,1\nBonn,2\n".encode("latin-1"))
    res = CliRunner().invoke(app, ["schema", "draft", str(src)])
    assert res.exit_code == 65
    assert res.stderr.splitlines()[-1] == (f"dpsynth: error: {src}: the input is not valid UTF-8 (first bad byte at "
                                           "offset 8); if it is in another encoding, pass --encoding (e.g. latin-1)")
    res = CliRunner().invoke(app, ["schema", "draft", str(src), "--encoding", "latin-1"])
    assert res.exit_code == 0, res.stderr
    assert yaml.safe_load(res.stdout)["schema"]["columns"]["town"]["categories"] == ["Bonn", "K\xf6ln"]


# ---------------------------------------------------------------- item 7: a large epsilon is nominal
@pytest.mark.parametrize(("epsilon", "warned"), [(10, False), (100, True)])
def test_a_large_epsilon_warns_on_stderr_and_in_the_report(release_dir, tmp_path, epsilon, warned):
    cfg = dict(CONFIG, privacy={"epsilon": epsilon})
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = CliRunner().invoke(app, ["release", "-c", str(tmp_path / "c.yaml"), "-i", str(release_dir / "in.csv"),
                                   "-o", str(tmp_path / "o.csv"), "-q"])
    assert res.exit_code == 0, res.stderr
    message = (f"privacy.epsilon is {epsilon}, above 10: the guarantee is then nominal (one row may change the "
               f"probability of any output by a factor up to e^{epsilon}); see docs/privacy.md, 'A large epsilon'")
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    assert (message in report["warnings"]) is warned
    assert (f"warning: {message}\n" in res.stderr) is warned
    assert ("nominal" in res.stderr) is warned


# ---------------------------------------------------------------- item 8: check counts what 'other' folds away
def test_check_counts_per_column_what_unknown_other_folds_away(tmp_path):
    df = pd.DataFrame({"age": [15, 20, 33, 61, 70, 40], "hours": [0.5, 10.0, 99.0, 20.0, 30.0, 40.0],
                       "kids": [0, 1, 2.5, 9, 1, 1], "race": ["White", "Black", "Other", "Asian", "White", "White"]})
    df.to_csv(tmp_path / "in.csv", index=False)
    columns = {"age": {"type": "integer", "lower": 20, "upper": 60},
               "hours": {"type": "numeric", "edges": [1, 40, 60]},
               "kids": {"type": "integer", "lower": 0, "upper": 5},
               "race": {"type": "categorical", "categories": ["White", "Black"]}}
    for unknown in ("other", "error"):
        cfg = {"schema": {"columns": columns, "unknown": unknown}, "privacy": {"epsilon": 1.0},
               "algorithm": {"name": "laplace"}, "workload": {"marginals": {"k": 1}}}
        (tmp_path / f"{unknown}.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = CliRunner().invoke(app, ["check", "-c", str(tmp_path / "other.yaml"), "-i", str(tmp_path / "in.csv")])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == (
        "6 data rows checked against the schema\n"
        "no problems: every row fits the schema\n"
        "folded away by a release (schema.unknown: other), per column:\n"
        "  age: 3 value(s) outside the declared range [20, 60] (or not finite), clamped to it\n"
        "  hours: 2 value(s) outside the declared range [1, 60] (or not finite), clamped to it\n"
        "  kids: 1 value(s) fractional, rounded to the nearest integer\n"
        "  kids: 1 value(s) outside the declared range [0, 5] (or not finite), clamped to it\n"
        "  race: 2 value(s) outside the declared categories, folded into the extra category\n"
    )
    # under unknown: error the same values are problems (exit 65), and nothing is 'folded'
    res = CliRunner().invoke(app, ["check", "-c", str(tmp_path / "error.yaml"), "-i", str(tmp_path / "in.csv")])
    assert res.exit_code == 65 and "folded" not in res.stdout
    assert "race: value outside the declared categories: 2 row(s): 3, 4" in res.stdout


def _commands(group=None, prefix=()):
    """Every command of the CLI as its argv prefix (sub-groups expanded)."""
    import typer.main

    group = group or typer.main.get_command(app)
    for name, cmd in group.commands.items():
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def test_every_command_has_log_format():
    missing = [" ".join(path) for path, cmd in _commands()
               if not any("--log-format" in p.opts for p in cmd.params)]
    assert missing == []


@pytest.mark.parametrize("argv, last", [
    (["sample", "-m", "{d}/m.dpm", "-n", "100", "-o", "{t}/s.csv", "--seed", "2"], "summary"),
    (["check", "-c", "{d}/cfg.yaml", "-i", "{d}/in.csv"], "summary"),
    (["plan", "-c", "{d}/cfg.yaml", "--rows", "500"], "summary"),
    (["schema", "draft", "{d}/in.csv"], "summary"),
    (["schema", "discover", "-i", "{d}/in.csv", "--epsilon", "1", "--delta", "1e-6", "-o", "{t}/s.yaml"], "summary"),
    (["report", "show", "{d}/out.csv.report.json"], "summary"),
    (["sample", "-m", "{d}/missing.dpm", "-n", "100", "-o", "{t}/s.csv"], "error"),
])
def test_json_log_of_every_command_is_json_lines_ending_with_a_summary_or_an_error(release_dir, tmp_path, argv, last):
    """Issue 26 item 4: under --log-format json each stderr line is a JSON object and the last one says how the
    command ended (the same events as release: notice, warning, summary, error)."""
    args = [a.format(d=release_dir, t=tmp_path) for a in argv] + ["--log-format", "json"]
    res = CliRunner().invoke(app, args)
    events = _json_lines(res.stderr)
    assert {e["event"] for e in events} <= {"notice", "warning", "info", "summary", "error"}
    assert events[-1]["event"] == last and sum(e["event"] in ("summary", "error") for e in events) == 1
    if last == "summary":
        assert res.exit_code == 0 and events[-1]["command"] == " ".join(argv[:2] if argv[0] in ("schema", "report")
                                                                       else argv[:1])
    else:
        assert res.exit_code == events[-1]["exit_code"] == 66


def test_sample_summary_as_text_and_as_json(release_dir, tmp_path):
    args = ["sample", "-m", str(release_dir / "m.dpm"), "-n", "1000", "-o", str(tmp_path / "s.csv"), "--seed", "2"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0
    assert res.stderr.startswith("dpsynth sample: 1000 rows in ") and res.stderr.endswith(
        "M rows/s); post-processing, no budget spent\n") and res.stderr.count("\n") == 1
    res = CliRunner().invoke(app, [*args, "--force", "--log-format", "json"])
    (summary,) = _json_lines(res.stderr)
    assert summary["event"] == "summary" and summary["command"] == "sample" and summary["rows"] == 1000
    assert summary["output"] == str(tmp_path / "s.csv") and summary["report"] == str(tmp_path / "s.csv") + ".report.json"
    res = CliRunner().invoke(app, [*args, "--force", "--log-format", "xml"])
    assert res.exit_code == 2 and res.stderr == "dpsynth: error: --log-format must be text or json, got 'xml'\n"
