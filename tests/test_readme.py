"""The README is a first page whose commands and code run as written (issue 15 item 8, issue 23).

Like sqlite-utils' docs tests: the command blocks of README.md ("Using the CLI") and docs/cli.md, the
README's library example and the configuration example of docs/config.md are extracted and run, in a
scratch directory holding the shipped configs and an 8,000-row head of sample_data/adult.csv (the same
columns, a faster run).  Every relative link of README.md and docs/*.md must reach a file (and a heading,
when it names one).
"""

from __future__ import annotations

import gzip
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

import dpsynth
from dpsynth.cli import app
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
HEAD_ROWS = 8000
# Release commands run with this seed unless they give one: the test is then reproducible.
SEED = "0"


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def config_example() -> str:
    page = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    return re.search(r"```yaml\n(.*?)```", _section(page, "An example"), re.DOTALL).group(1)


def command_block(text: str) -> list[str]:
    """The first indented block of ``text`` made of ``dpsynth`` lines: one command per line (comments stripped)."""
    for block in re.findall(r"\n\n((?:    .*\n)+)", text):
        lines = [re.split(r"\s+# ", line.strip())[0] for line in block.splitlines() if line.strip()]
        if lines and all("dpsynth " in line for line in lines):
            return lines
    raise AssertionError("no block of dpsynth commands")


def readme_python() -> str:
    return re.search(r"```python\n(.*?)```", _section(README, "Using as a library"), re.DOTALL).group(1)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    (tmp_path / "sample_data").mkdir()
    lines = (ROOT / "sample_data" / "adult.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "sample_data" / "adult.csv").write_text("".join(lines[: HEAD_ROWS + 1]), encoding="utf-8")
    return tmp_path


def test_readme_is_a_first_page():
    assert len(README.splitlines()) <= 150
    first_heading = README.index("\n## ")
    assert "make demo" in README[:first_heading] and "make test" in README[:first_heading]
    assert "dpsynth.io" not in README  # the module the old example named never existed


def test_config_example_runs_on_sample_data(runner, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    (scratch / "example.yaml").write_text(config_example(), encoding="utf-8")
    res = runner.invoke(app, ["release", "-c", "example.yaml", "-i", "sample_data/adult.csv", "-o", "out.csv",
                              "--silent"])
    assert res.exit_code == 0, res.stderr
    assert (scratch / "out.csv").read_text().splitlines()[0] == "age,fnlwgt,education-num,workclass"


def _run_pipeline(runner, command: str, cwd: Path) -> None:
    """Run one documented command line in-process: ``[cat FILE |] dpsynth ... [| gzip] [> OUT]``.

    The shell parts the docs use (cat, gzip, a redirect) are done here, ``-n`` (rows to sample) is capped
    at 2,000 and a release without ``--seed`` gets :data:`SEED`, so that each command costs no interpreter
    start-up; any other shell word fails the test (the docs must stay this simple).
    """
    command, _, redirect = command.partition(" > ")
    data: bytes | None = None
    for stage in (s.strip() for s in command.split("|")):
        words = shlex.split(stage)
        if words[0] == "cat" and len(words) == 2 and data is None:
            data = (cwd / words[1]).read_bytes()
        elif words[0] == "gzip" and len(words) == 1:
            data = gzip.compress(data or b"")
        elif words[0] == "dpsynth":
            if "-n" in words:  # the docs sample 10^8 rows to show it can; the test samples a few
                i = words.index("-n") + 1
                words[i] = str(min(int(words[i]), 2000))
            if words[1] == "release" and "--seed" not in words:
                words += ["--seed", SEED]
            res = runner.invoke(app, words[1:], input=data)
            assert res.exit_code == 0, (command, res.stderr[-500:])
            data = res.stdout_bytes
        else:
            raise AssertionError(f"documented command uses an unsupported shell word: {stage!r}")
    if redirect:
        (cwd / redirect.strip()).write_bytes(data or b"")


def test_readme_cli_taste_runs_as_written(runner, scratch, monkeypatch):
    commands = command_block(_section(README, "Using the CLI"))
    assert commands[0] == "dpsynth release -i sample_data/adult.csv -o synth.csv --epsilon 1"  # zero-config first
    assert [c.split()[1] for c in commands[1:5]] == ["release", "evaluate", "plan", "sample"]
    monkeypatch.chdir(scratch)
    for command in commands:
        _run_pipeline(runner, command, scratch)
    reusable = dpsynth.load_config(scratch / "synth.csv.config.yaml")  # the zero-config release's own config
    columns = set(pd.read_csv(scratch / "sample_data" / "adult.csv", nrows=1).columns)
    assert reusable.domain.names and set(reusable.domain.names) <= columns  # columns with nothing released drop


def test_cli_page_examples_run_as_written(runner, scratch, monkeypatch):
    commands = command_block((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert commands[0].startswith("dpsynth release -i") and len(commands) >= 10
    monkeypatch.chdir(scratch)
    for command in commands:
        _run_pipeline(runner, command, scratch)
    assert gzip.decompress((scratch / "synth.csv.gz").read_bytes()).startswith(b"age,")
    assert "\nschema:\n" in (scratch / "draft.yaml").read_text()


def test_readme_library_taste_runs(scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(readme_python(), "README.md", "exec"), namespace)  # noqa: S102  (our own README)
    result = namespace["result"]
    assert isinstance(result, dpsynth.ReleaseResult) and result.report["algorithm"]["name"] == "laplace"
    assert (scratch / "synth.csv").is_file() and "schema" in namespace["reusable"]


def test_zero_config_release_of_a_small_table():
    """Before main's discovery rework this crashed (ValueError in ColumnProfile.cell_counts: an integer column
    whose noisy bounds held no integer gave a one-edge grid); found while writing these docs."""
    table = pd.read_csv(ROOT / "sample_data" / "adult.csv", nrows=2000)
    result = dpsynth.release(table, epsilon=1.0, rng=0)
    assert result.rows == 2000 and result.report["privacy"]["epsilon_spent"] <= 1.0


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _links() -> list[tuple[Path, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [(page, target) for page in pages
            for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8"))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize(("page", "target"), _links(), ids=lambda x: x.name if isinstance(x, Path) else x)
def test_every_relative_link_resolves(page: Path, target: str):
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{page.relative_to(ROOT)}: link to a missing file {target}"
    if anchor and dest.suffix == ".md":
        headings = re.findall(r"^#+ (.*)$", dest.read_text(encoding="utf-8"), flags=re.MULTILINE)
        assert anchor in {_slug(h) for h in headings}, f"{page.relative_to(ROOT)}: no heading for #{anchor}"
