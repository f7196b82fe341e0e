"""numba is imported and applied only when a compiled loop is first called.

The default selection (``SVMTuner().fit``, ``method="auto"``) and ``svmtune demo`` use no
compiled code, so in a fresh process they neither import numba nor compile anything: a
user's first fit costs what a later one does.  Each check runs in a fresh interpreter (this
process may have imported numba through other tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import svmtune

# the subprocess imports the svmtune this test imported
ENV = dict(os.environ, PYTHONPATH=str(Path(svmtune.__file__).parents[1]))


def _run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
        timeout=600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_default_fit_on_demo_data_does_not_import_numba():
    """The demo's data and split, ``SVMTuner(random_state=0).fit``: numba is not loaded."""
    doc = _run("""
import json, sys
from sklearn.model_selection import train_test_split
from svmtune import SVMTuner
from svmtune.datasets import load_dataset
after_import = "numba" in sys.modules
X, y, _ = load_dataset("parkinsons")
X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
tuner = SVMTuner(random_state=0).fit(X_tr, y_tr)
print(json.dumps({"after_import": after_import, "after_fit": "numba" in sys.modules,
                  "method": tuner.method}))
""")
    assert doc == {"after_import": False, "after_fit": False, "method": "auto"}


def test_demo_does_not_import_numba():
    """``svmtune demo`` (its default method, auto) warms nothing up before it times the
    selection, and the selection loads no compiled code."""
    doc = _run("""
import json, sys
from svmtune.cli import main
try:
    main(["demo", "--no-grid", "--json"], standalone_mode=False)
finally:
    print(json.dumps({"numba": "numba" in sys.modules}))
""")
    assert doc == {"numba": False}


def test_compiled_loops_are_deferred_to_their_first_call():
    """Importing the pair loops imports no numba; the first call replaces every stand-in of
    the module by a dispatcher (the loops call each other), and a stand-in held from before
    forwards to it."""
    doc = _run("""
import json, sys
import numpy as np
import svmtune.criteria._pairloops as P
held = P._pair_bin_counts
before = ["numba" in sys.modules, type(P._row_sqdist).__name__]
X = np.random.default_rng(0).normal(size=(30, 2))
R = P.rbf_class_sums_multi(X, np.arange(30) % 2, np.ones(30), np.array([1.0]), 2)
import numba
print(json.dumps({
    "before": before,
    "after": ["numba" in sys.modules,
              all(isinstance(getattr(P, f), numba.core.registry.CPUDispatcher)
                  for f in ("_row_sqdist", "_pair_bin_counts", "_coarsen_bins",
                            "_rows_sqdist", "_gram_sqdist", "_accumulate_rows"))],
    "held_forwards": held.signatures == P._pair_bin_counts.signatures,
    "R_finite": bool(np.all(np.isfinite(R))),
}))
""")
    assert doc["before"] == [False, "_Deferred"]
    assert doc["after"] == [True, True]
    assert doc["held_forwards"] and doc["R_finite"]
