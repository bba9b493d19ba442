"""Privacy mutation harness (``make mutants``): every catalogued privacy bug must be caught by the fast tests.

For each entry of ``tests/mutants/catalogue.py`` (format documented there and in
docs/privacy.md) the harness

1. copies the repository's tracked and untracked-but-not-ignored files ONCE to a
   temporary directory (never touching the working tree);
2. replaces the entry's exact ``old`` text (which must occur exactly once) by
   ``new`` in the copy, runs ``pytest -x -m "not slow"`` on the entry's ``tests``
   inside the copy, and restores the file;
3. prints one table row: mutant, file, the first failing test ("caught-by") or
   SURVIVED, seconds.

Before any mutant it runs the union of all named tests on the unmutated copy: if
that baseline fails, nothing can be concluded and the harness stops (exit 2).
Exit status: 0 when every mutant is caught, 1 when one survives, 2 when the
catalogue is stale (``old`` not found exactly once) or a test selection is empty.

Usage: ``python tools/mutants.py [--only ID ...] [--list] [--timeout S] [--keep]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "tests" / "mutants" / "catalogue.py"


def load_catalogue(path: Path = CATALOGUE) -> list[dict]:
    spec = importlib.util.spec_from_file_location("mutant_catalogue", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mutants = list(module.MUTANTS)
    ids = [m["id"] for m in mutants]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SystemExit(f"mutants: duplicate ids in the catalogue: {sorted(dup)}")
    for m in mutants:
        missing = {"id", "file", "old", "new", "tests", "why"} - set(m)
        if missing:
            raise SystemExit(f"mutants: entry {m.get('id', '?')} lacks {sorted(missing)}")
    return mutants


def copy_repo(dest: Path) -> None:
    """Tracked and untracked-not-ignored files of the working tree (so uncommitted work is included)."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                         capture_output=True).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = ROOT / rel
        if not src.is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def run_tests(copy: Path, tests: list[str], timeout: float) -> tuple[int, str, float]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider", "-rf",
           "-o", "addopts=--strict-markers", *tests]
    t0 = time.perf_counter()
    try:
        res = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, "", time.perf_counter() - t0
    return res.returncode, res.stdout + res.stderr, time.perf_counter() - t0


def first_failure(output: str) -> str:
    m = re.search(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, re.MULTILINE)
    return m.group(1).strip() if m else "(failed)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="run only these mutant ids")
    ap.add_argument("--list", action="store_true", help="list the catalogue and exit")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant (a timeout counts as caught)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = ap.parse_args(argv)
    mutants = load_catalogue()
    if args.only:
        unknown = set(args.only) - {m["id"] for m in mutants}
        if unknown:
            print(f"mutants: unknown ids {sorted(unknown)}", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m["id"] in args.only]
    if args.list:
        for m in mutants:
            print(f"{m['id']:34s} {m['file']:42s} {m['why']}")
        print(f"{len(mutants)} mutants")
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="dpsynth-mutants-"))
    try:
        copy_repo(tmp)
        stale = []
        for m in mutants:
            text = (tmp / m["file"]).read_text(encoding="utf-8")
            if text.count(m["old"]) != 1:
                stale.append(f"{m['id']}: 'old' occurs {text.count(m['old'])} times in {m['file']}")
        if stale:
            print("mutants: the catalogue is stale (update the entries):\n  " + "\n  ".join(stale), file=sys.stderr)
            return 2
        union = sorted({t for m in mutants for t in m["tests"]})
        rc, out, secs = run_tests(tmp, union, args.timeout * 4)
        if rc != 0:
            print(f"mutants: the unmutated baseline fails ({first_failure(out)}, rc {rc}); fix it first",
                  file=sys.stderr)
            print(out[-3000:], file=sys.stderr)
            return 2
        print(f"baseline: {len(union)} test selections pass on the unmutated copy ({secs:.0f} s)")
        print(f"{'mutant':36s} {'file':44s} {'s':>5s}  caught by")
        survived, errors = [], []
        for m in mutants:
            path = tmp / m["file"]
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(m["old"], m["new"]), encoding="utf-8")
            try:
                rc, out, secs = run_tests(tmp, list(m["tests"]), args.timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            if rc == 0:
                verdict = "SURVIVED"
                survived.append(m["id"])
            elif rc == 1:
                verdict = first_failure(out)
            elif rc == -1:
                verdict = f"(timeout after {args.timeout:.0f} s)"
            else:  # 2: collection/usage error, 5: no tests ran
                verdict = f"ERROR (pytest rc {rc}: {first_failure(out)})"
                errors.append(m["id"])
            print(f"{m['id']:36s} {m['file']:44s} {secs:5.0f}  {verdict}", flush=True)
        print(f"{len(mutants)} mutants: {len(mutants) - len(survived) - len(errors)} caught, "
              f"{len(survived)} survived, {len(errors)} errors")
        if survived:
            print("SURVIVED: " + ", ".join(survived))
        if args.keep:
            print(f"copy kept at {tmp}")
        return 1 if survived else (2 if errors else 0)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
