"""RBSVM Fig. 4 (Peng et al., IEEE TNNLS 2023): selection time against the number of
samples on stratified subsamples of skin_nonskin (the experiment :class:`RuntimeVsN`).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FIG4_METHODS",
    "RuntimeVsN",
]


# ----------------------------------------------------------------------------- Fig. 4
def _spaced(lo: float, hi: float, k: int) -> tuple[float, float, float]:
    """A log2 (lo, hi, step) range with exactly ``k`` points including both ends."""
    return (float(lo), float(hi), (float(hi) - float(lo)) / (k - 1))


#: RBSVM Fig. 4 methods: label -> (method, params).  The paper's search groups have 16
#: candidates (sigma, C in [2^-2, 2^2]) and 256 candidates ([2^-8, 2^8]); a grid of 4 x 4 /
#: 16 x 16 log2-spaced points spanning each box gives exactly those counts.
FIG4_METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "RBSVM": ("rbsvm", {}),
    "SpanSVM": ("span", {}),
    "RMSVM": ("radius_margin", {}),
    "GridSearch-16": ("grid", {"log2_sigma": _spaced(-2, 2, 4), "log2_C": _spaced(-2, 2, 4)}),
    "RandomSearch-16": (
        "random",
        {"n_iter": 16, "log2_sigma": (-2.0, 2.0), "log2_C": (-2.0, 2.0), "distribution": "uniform"},
    ),
    "BayesSearch-16": (
        "tpe",
        {"max_evals": 16, "n_startup": 5, "log2_sigma": (-2.0, 2.0), "log2_C": (-2.0, 2.0)},
    ),
    "GridSearch-256": ("grid", {"log2_sigma": _spaced(-8, 8, 16), "log2_C": _spaced(-8, 8, 16)}),
    "RandomSearch-256": (
        "random",
        {
            "n_iter": 256,
            "log2_sigma": (-8.0, 8.0),
            "log2_C": (-8.0, 8.0),
            "distribution": "uniform",
        },
    ),
    "BayesSearch-256": (
        "tpe",
        {"max_evals": 256, "log2_sigma": (-8.0, 8.0), "log2_C": (-8.0, 8.0)},
    ),
}


@dataclass
class RuntimeVsN:
    """RBSVM Fig. 4: selection time against n on stratified subsamples of a data set.

    Calling the object, ``(outdir, seed) -> [csv, png]``, runs every (method, size) with
    ``size <= run_limits[method]`` (one SVMTuner fit on the subsample, BLAS limited to one
    thread, seed ``seed``) and records the others as "not run"; rows already in
    ``outdir/runtime_vs_n.csv`` with status ok and the same method definition are reused,
    so raising a limit later only runs the new points.  The plot draws the points run and
    marks the sizes not run.

    Parameters
    ----------
    sizes : sequence of int
        Subsample sizes (the paper: 500, 1000, ..., 10000).
    methods : dict
        label -> (method name, method_params); default :data:`FIG4_METHODS`.
    run_limits : dict
        label -> largest size to run (0 or missing: not run).
    dataset : str
        Registry name (the paper: skin_nonskin).
    loader : callable, optional
        ``name -> (X, y, info)``; default :func:`svmtune.datasets.load_dataset`.
    """

    sizes: Sequence[int] = tuple(range(500, 10001, 500))
    methods: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=lambda: FIG4_METHODS)
    run_limits: dict[str, int] = field(default_factory=dict)
    dataset: str = "skin_nonskin"
    loader: Any = None

    def __post_init__(self) -> None:
        #: the runner names the experiment (and its output folder) by ``__name__``
        self.__name__ = "runtime_vs_n"
        sizes = [int(s) for s in self.sizes]
        if not sizes or any(s < 4 for s in sizes):
            raise ValueError(f"sizes must be integers >= 4, got {list(self.sizes)}")
        self.sizes = tuple(sorted(set(sizes)))
        unknown = sorted(set(self.run_limits) - set(self.methods))
        if unknown:
            raise ValueError(
                f"run_limits names unknown methods {unknown}; known: {sorted(self.methods)}"
            )

    def _key(self, label: str) -> str:
        method, params = self.methods[label]
        return json.dumps([method, params], sort_keys=True, default=str)

    def __call__(self, outdir: Path, seed: int) -> list[Path]:
        from threadpoolctl import threadpool_limits

        from svmtune.bench.runner import default_loader
        from svmtune.tuner import SVMTuner

        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        csv = outdir / "runtime_vs_n.csv"
        old: dict[tuple[str, int, str], dict] = {}
        if csv.exists():
            prev = pd.read_csv(csv)
            for r in prev.to_dict("records"):
                if r.get("status") == "ok":
                    old[(r["method"], int(r["n"]), r["spec"])] = r
        X, y, _ = (self.loader or default_loader)(self.dataset)
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        # every (method, size): a stored ok row, or "not run" until computed here
        rows: list[dict] = []
        todo: list[int] = []
        for label in self.methods:
            spec = self._key(label)
            for n in self.sizes:
                if (label, n, spec) in old:
                    rows.append(old[(label, n, spec)])
                    continue
                rows.append(
                    {"method": label, "n": n, "spec": spec, "seed": seed, "status": "not run"}
                )
                if n <= int(self.run_limits.get(label, 0)):
                    todo.append(len(rows) - 1)
        for i in todo:
            base = {k: rows[i][k] for k in ("method", "n", "spec", "seed")}
            method, params = self.methods[base["method"]]
            idx = _stratified_subsample(y, base["n"], seed)
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                with threadpool_limits(limits=1), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tuner = SVMTuner(
                        method=method,
                        method_params=dict(params),
                        preprocess="standard",
                        random_state=seed,
                        n_jobs=1,
                    ).fit(X[idx], y[idx])
                rows[i] = {
                    **base,
                    "status": "ok",
                    "selection_time": float(tuner.selection_time_),
                    "n_svm_fits": int(tuner.n_svm_fits_),
                    "sigma": tuner.best_params_.get("sigma"),
                    "C": tuner.best_params_.get("C"),
                    "wall_time": time.perf_counter() - t0,
                    "cpu_time": time.process_time() - c0,  # one thread: robust to load
                }
            except Exception as exc:  # a failing point is recorded, not fatal
                rows[i] = {**base, "status": f"error: {type(exc).__name__}: {exc}"[:300]}
            _write_csv_atomic(pd.DataFrame(rows), csv)  # a stopped run keeps its points
        df = pd.DataFrame(rows)
        _write_csv_atomic(df, csv)
        return [csv, runtime_plot(df, outdir / "runtime_vs_n.png")]


def _write_csv_atomic(df: pd.DataFrame, path: Path) -> None:
    """``df`` to ``path`` through a temporary file and ``os.replace``: a reader (or a run
    stopped mid-write) sees the old table or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, path)


def _stratified_subsample(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` row indices drawn stratified by ``y`` with ``seed`` (all rows if n >= len(y))."""
    from sklearn.model_selection import train_test_split

    if n >= len(y):
        return np.arange(len(y))
    idx, _ = train_test_split(np.arange(len(y)), train_size=n, stratify=y, random_state=seed)
    return np.sort(idx)


def runtime_column(ok: pd.DataFrame) -> str:
    """The time Fig. 4 plots for the points run (``ok``): ``"cpu_time"`` when every one has
    it, else ``"selection_time"`` (points stored before CPU times were recorded)."""
    has_cpu = not ok.empty and "cpu_time" in ok and bool(ok["cpu_time"].notna().all())
    return "cpu_time" if has_cpu else "selection_time"


def runtime_plot(df: pd.DataFrame, path: Path) -> Path:
    """Fig. 4 style plot: time (log scale) vs n per method; sizes not run are marked with
    crosses on a strip below the curves.

    The time is the process CPU time of each point's fit (one thread: selection and final
    SVM) when every point run has one, since it does not grow with other load on the
    machine; otherwise the selection's wall time.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), dpi=100)
    ax = fig.subplots()
    labels = list(dict.fromkeys(df["method"])) if not df.empty else []
    ok = df[df["status"] == "ok"] if not df.empty else df
    col = runtime_column(ok)
    use_cpu = col == "cpu_time"
    times = pd.to_numeric(ok[col], errors="coerce") if not ok.empty else None
    floor = float(times[times > 0].min()) / 3 if times is not None and (times > 0).any() else 1e-2
    for i, label in enumerate(labels):
        sub = df[df["method"] == label]
        good = sub[sub["status"] == "ok"]
        (line,) = ax.plot(
            good["n"],
            pd.to_numeric(good[col], errors="coerce"),
            "o-",
            ms=4,
            label=label,
        )
        miss = sub[sub["status"] != "ok"]
        if len(miss):
            ax.plot(
                miss["n"],
                np.full(len(miss), floor / (1.35 ** (i + 1))),
                "x",
                color=line.get_color(),
                ms=4,
                alpha=0.6,
            )
    ax.set_yscale("log")
    ax.set_xlabel("n (stratified subsample)")
    ax.set_ylabel("CPU time of the fit (s, one thread)" if use_cpu else "selection time (s)")
    ax.set_title("RBSVM Fig. 4: run time vs n (crosses below: not run)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if labels:
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    return path
