#!/usr/bin/env bash
# Make the peer's own venv, benchmarks/peers/.venv, with smartnoise-synth 1.0.8 (MST, AIM) pinned.
#
#   benchmarks/peers/install.sh             # torch 2.13.0 first (CPU wheel), then requirements.txt
#   benchmarks/peers/install.sh --no-torch  # requirements.txt with --no-deps: no torch (MST/AIM never import it)
#
# smartnoise-synth requires opacus, which requires torch.  Installing torch==2.13.0 on its own first
# lets pip take the CPU wheel this machine's pip finds on local disk instead of downloading the
# multi-GB CUDA build; with --no-torch nothing of torch is installed and `pip check` reports opacus's
# missing torch, which MST and AIM do not use.  PYTHON picks the interpreter (default python3, 3.10-3.14).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [[ "${1:-}" == "--no-torch" ]]; then
    "$venv/bin/python" -m pip install --quiet --no-deps -r "$here/requirements.txt"
else
    "$venv/bin/python" -m pip install --quiet "torch==2.13.0"
    "$venv/bin/python" -m pip install --quiet -r "$here/requirements.txt"
fi
"$venv/bin/python" -c "import snsynth.mst.mst, snsynth.aim.aim, mbi; print('peer venv ready:', '$venv')"
