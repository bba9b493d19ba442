#!/usr/bin/env bash
# Install dpsynth WITHOUT extras (no dev, plot or spark) in a fresh venv and run every command once on
# sample data: a runtime import that lives only in an extra is a crash for every pip user.
# Called by .ci/run after `make test`; everything happens in a temporary directory, removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dpsynth-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
start=$SECONDS

"$PYTHON" -m venv "$WORK/venv"
# --no-compile: no bytecode for ~30k library files (half the install time); imports compile what they use
"$WORK/venv/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check "$ROOT" 2>&1 \
    | { grep -v "is ignored: it is neither a file nor a directory" || true; }
echo "smoke: installed without extras in $((SECONDS - start)) s"

D="$WORK/venv/bin/dpsynth"
cd "$WORK"  # not the source tree: the installed package is what runs
head -3001 "$ROOT/sample_data/adult.csv" > adult.csv  # small (fast) but big enough for discovery
"$WORK/venv/bin/dpsynth" --version  # the console script
# Every command once, in one process (the imports are paid once): exit code 0 unless stated, and for a
# refusal the exact message.
"$WORK/venv/bin/python" - "$ROOT" <<'PY'
import importlib.util, sys, time
from typer.testing import CliRunner
from dpsynth.cli import app

extras = [m for m in ("pytest", "hypothesis", "matplotlib", "pyspark") if importlib.util.find_spec(m)]
if extras:
    sys.exit(f"smoke: {', '.join(extras)} installed, but not a runtime dependency: the venv is not extras-free")

root = sys.argv[1]
adult, ireduct = f"{root}/configs/adult.yaml", f"{root}/configs/adult-ireduct.yaml"
plot_missing = ("dpsynth: error: --plot needs matplotlib, which is not installed: pip install 'dpsynth[plot]' "
                "(or drop --plot)\n")
runs = [
    (["plan", "-c", adult, "-i", "adult.csv"], 0, None),
    (["schema", "draft", "adult.csv"], 0, None),
    (["schema", "discover", "-i", "adult.csv", "--epsilon", "0.5", "--delta", "1e-6", "-o", "discovered.yaml"], 0, None),
    (["check", "-c", adult, "-i", "adult.csv"], 0, None),
    (["release", "-c", adult, "-i", "adult.csv", "-o", "synth.csv", "--model", "synth.dpsynth", "--marginals",
      "noisy.csv", "--seed", "1", "--silent"], 0, None),
    (["report", "show", "synth.csv.report.json"], 0, None),
    (["sample", "-m", "synth.dpsynth", "-n", "1000", "-o", "more.csv", "-q"], 0, None),
    (["sample", "--marginals", "noisy.csv", "-c", adult, "-n", "100", "-o", "-", "-r", "more2.report.json", "-q"], 0,
     None),
    (["release", "-i", "adult.csv", "-o", "zero.csv", "--epsilon", "3", "--seed", "1", "--silent"], 0, None),
    (["evaluate", "-c", adult, "--real", "adult.csv", "--synthetic", "synth.csv", "--k", "1", "--json", "e.json",
      "-q"], 0, None),
    (["oracle", "-c", ireduct, "-i", "adult.csv", "--seed", "1"], 0, None),
    (["evaluate", "-c", adult, "--real", "adult.csv", "--synthetic", "synth.csv", "--k", "1", "--plot", "p.png"], 69,
     plot_missing),
]
for args, code, stderr in runs:
    t0 = time.perf_counter()
    res = CliRunner().invoke(app, args)
    if res.exit_code != code or (stderr is not None and res.stderr != stderr):
        sys.exit(f"smoke: dpsynth {' '.join(args)}: expected exit {code}, got {res.exit_code}: {res.stderr}")
    print(f"smoke: {time.perf_counter() - t0:5.1f} s  dpsynth {' '.join(args[:2])}")
PY
echo "smoke: every command ran without extras; $((SECONDS - start)) s in all"
