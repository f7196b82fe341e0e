"""A tiny synthetic suite and an injectable loader for the harness tests (importable by
worker processes and by the kill-and-resume subprocess)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task

#: data set name -> (n, d, n_classes, seed)
SPECS = {"two": (48, 3, 2, 0), "three": (45, 3, 3, 1), "mixed": (40, 3, 2, 2)}


def loader(name: str):
    """Small Gaussian-blob data sets; "mixed" has a categorical column and missing values."""
    n, d, k, seed = SPECS[name]
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) + 1.5 * y[:, None]
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])
    if name == "mixed":
        df["colour"] = np.where(rng.random(n) < 0.5, "red", "blue")
        df.loc[3, "x0"] = np.nan
        df["id"] = np.arange(n)
    labels = np.array(["neg", "pos", "mid"])[y]
    return df, labels, {"name": name, "version": f"sha-{name}"}


def slow_loader(name: str):
    """:func:`loader` after writing this process's pid into ``$SVMTUNE_TEST_PID_DIR`` and
    sleeping ten minutes (for the stop tests: workers that are not stopped outlive them)."""
    (Path(os.environ["SVMTUNE_TEST_PID_DIR"]) / str(os.getpid())).touch()
    time.sleep(600)
    return loader(name)


GRID = {"log2_sigma": (-1.0, 1.0, 1.0), "log2_C": (-1.0, 1.0, 1.0), "n_splits": 3}


def tiny_suite(**kw) -> Suite:
    """2 tasks x 2 splits x 2 cheap methods = 8 cells."""
    base = dict(
        name="tiny",
        description="two tiny synthetic tasks, two cheap methods",
        tasks=[Task("two", "two"), Task("three-1", "three", positive="pos")],
        methods=[MethodSpec("default", "default"), MethodSpec("grid", "grid", dict(GRID))],
        protocol=Protocol(kind="kfold", n_splits=2),
        seed=3,
    )
    base.update(kw)
    if "yardsticks" not in kw and any(m.label == "grid" for m in base["methods"]):
        base["yardsticks"] = {"grid": "grid"}  # its 3 folds are not auto-detected
    return Suite(**base)


def main(out: str, slow: bool = False) -> None:  # pragma: no cover - run in a subprocess
    """The resume test's run (serial), or with ``slow`` the stop tests' (two workers)."""
    from svmtune.bench.runner import run_suite

    if slow:
        run_suite(tiny_suite(), out, loader=slow_loader, n_jobs=2, progress=False)
    else:
        run_suite(tiny_suite(), out, loader=loader, n_jobs=1, progress=False)


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main(sys.argv[1], slow="--slow" in sys.argv[2:])
