"""docs/cli.md holds the ``--help`` of every command, exactly (tools/cli_docs.py; like ``cog --check``)."""

from __future__ import annotations

import re

from dpsynth.cli import app
from tests.helpers import ROOT
from tools import cli_docs

DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_cli_doc_is_up_to_date_with_help():
    assert cli_docs.render(DOC, app) == DOC, "docs/cli.md is out of date with --help: run python tools/cli_docs.py"


def test_a_stale_cli_doc_is_detected():
    stale = DOC.replace("Release differentially private synthetic rows", "Release synthetic rows", 1)
    assert stale != DOC and cli_docs.render(stale, app) == DOC


def test_check_mode_exit_codes(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "cli.md"
    doc.write_text(DOC, encoding="utf-8")
    monkeypatch.setattr(cli_docs, "DOC", doc)
    monkeypatch.setattr(cli_docs, "ROOT", tmp_path)
    assert cli_docs.main(["--check"]) == 0
    doc.write_text(DOC.replace("Usage: dpsynth release [OPTIONS]", "Usage: dpsynth release", 1), encoding="utf-8")
    assert cli_docs.main(["--check"]) == 1
    assert capsys.readouterr().err == "cli.md is out of date with --help: run python tools/cli_docs.py\n"


def test_every_command_has_help_and_a_section():
    paths = cli_docs.command_paths(app)
    assert len(paths) >= 12  # dpsynth, 8 commands, schema discover/draft, report show
    for path in paths:
        title = " ".join(["dpsynth", *path])
        assert f"### `{title}`\n" in DOC, f"docs/cli.md has no section for {title}"
        assert re.search(r"Usage: ", cli_docs.help_text(app, path))


def test_readme_names_every_command_and_links_the_reference():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [" ".join(p) for p in cli_docs.command_paths(app) if len(p) == 1]
    missing = [c for c in commands if f"`{c}" not in readme]
    assert not missing, f"README.md does not name: {missing}"
    assert "(docs/cli.md)" in readme
