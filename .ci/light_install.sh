#!/usr/bin/env bash
# The core install as a newcomer gets it: `pip install .` in a fresh virtual environment
# pulls in none of the extras' packages (optuna, hyperopt, matplotlib, dask) but does pull
# skops (the default model format, a core dependency), the wheel is at most 3 MB and ships
# py.typed, and `svmtune demo` and the README's `select --out model.skops` / `predict` run
# in it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python -m venv "$tmp/venv"
"$tmp/venv/bin/pip" -q wheel --no-deps -w "$tmp/wheel" .
wheel=$(ls "$tmp"/wheel/svmtune-*.whl)
size=$(stat -c %s "$wheel")
echo "wheel: $(basename "$wheel"), $size bytes"
if [ "$size" -gt $((3 * 1024 * 1024)) ]; then
  echo "the wheel is over 3 MB" >&2
  exit 1
fi
"$tmp/venv/bin/pip" -q install "$wheel"
"$tmp/venv/bin/python" - <<'PY'
import importlib.util
extra = [m for m in ("optuna", "hyperopt", "matplotlib", "dask") if importlib.util.find_spec(m)]
if extra:
    raise SystemExit(f"the core install pulled in {extra}")
if importlib.util.find_spec("skops") is None:
    raise SystemExit("the core install lacks skops, which the default model files need")
import importlib.resources
if not (importlib.resources.files("svmtune") / "py.typed").is_file():
    raise SystemExit("the wheel lacks svmtune/py.typed: type checkers would ignore svmtune")
print("core install: none of optuna, hyperopt, matplotlib, dask; skops present")
PY
(cd "$tmp" && "$tmp/venv/bin/svmtune" demo --no-grid)
(cd "$tmp" && "$tmp/venv/bin/svmtune" select parkinsons --method default --out model.skops \
  && "$tmp/venv/bin/svmtune" predict model.skops parkinsons --out predictions.csv)
