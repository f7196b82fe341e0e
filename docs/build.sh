#!/usr/bin/env bash
# Build the documentation with warnings as errors (the CI step; needs `pip install ".[docs]"`).
#   bash docs/build.sh            # HTML into docs/_build/html, runs the examples gallery
#   bash docs/build.sh --no-gallery   # skip executing the examples (a quick look at the pages)
set -euo pipefail
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export MPLBACKEND=Agg PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
extra=()
if [[ "${1:-}" == "--no-gallery" ]]; then
  extra+=(-D plot_gallery=0)
  shift
fi
start=$(date +%s)
# viewcode rewrites a source page only when its module changed, but its "[docs]" links
# depend on the pages that document the module's objects: written afresh on every build
rm -rf docs/_build/html/_modules
python -m sphinx -W --keep-going -b html -j 1 "${extra[@]}" "$@" docs docs/_build/html
# links to anchors that do not exist and roles left as text pass -W: checked here
python docs/_scripts/check_links.py docs/_build/html
echo "docs built in $(( $(date +%s) - start )) s: docs/_build/html/index.html"
