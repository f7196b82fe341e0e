#!/usr/bin/env bash
# The core install as a newcomer gets it: `pip install .` in a fresh virtual environment
# pulls in none of the extras' packages (optuna, hyperopt, matplotlib, dask), the wheel is
# at most 3 MB, and `svmtune demo` runs in it.
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
print("core install: none of optuna, hyperopt, matplotlib, dask")
PY
(cd "$tmp" && "$tmp/venv/bin/svmtune" demo --no-grid)
