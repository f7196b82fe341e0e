"""The progress bar's ETA and the plan's predicted cost of ``auto`` against the measured.

One run of ``SVMTuner(verbose=1)`` (the default method) on a data set, its status lines
time-stamped as they are written (a log stream: a line per tenth of the bar), then one
``SVC()`` fit on the same standardised rows.  Prints, for the lines at or past 25 %, 50 % and
75 % of the bar, the ETA shown against the time actually left to the end of the final fit,
and the plan's predicted cost of each stage and of the final fit (``SVC()`` fits) beside the
measured seconds over that ``SVC()`` fit (``info["measured_seconds"]``)::

    python benchmarks/auto_eta.py --rows 20000 --features 20            # dense
    python benchmarks/auto_eta.py --rows 20000 --features 1000 --sparse  # sparse
    python benchmarks/auto_eta.py --demo                                 # svmtune demo's

The data are ``sklearn.datasets.make_classification`` (``random_state=0``; sparse: its 10
informative columns beside ``features - 10`` columns of binary noise, 1 % of them non-zero,
CSR).  Run one
measurement at a time on a quiet machine and note the load average (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

import numpy as np
import scipy.sparse as sp


class _Stamped:
    """A log stream keeping each line with the time it was written."""

    def __init__(self):
        self.lines: list[tuple[float, str]] = []
        self._buf = ""

    def write(self, s):
        self._buf += s
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self.lines.append((time.perf_counter(), line))
            sys.__stdout__.write(f"[{time.strftime('%H:%M:%S')}] {line}\n")
            sys.__stdout__.flush()
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return False


def _data(args):
    if args.demo:  # svmtune demo's data: parkinsons, the 70 % it trains on
        from sklearn.model_selection import train_test_split

        from svmtune.datasets import load_dataset

        X, y, _ = load_dataset("parkinsons")
        X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
        return X_tr, y_tr
    from sklearn.datasets import make_classification

    if args.sparse:  # 10 informative dense columns and sparse binary noise (1 % of entries)
        X, y = make_classification(
            n_samples=args.rows, n_features=10, n_informative=10, n_redundant=0,
            random_state=0,
        )  # fmt: skip
        noise = sp.random(
            args.rows, args.features - 10, density=0.01, random_state=0, data_rvs=np.ones
        )  # fmt: skip
        return sp.hstack([sp.csr_matrix(X), noise]).tocsr(), y
    X, y = make_classification(
        n_samples=args.rows, n_features=args.features, n_informative=min(10, args.features),
        random_state=0,
    )  # fmt: skip
    return X, y


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--features", type=int, default=20)
    p.add_argument("--sparse", action="store_true")
    p.add_argument("--demo", action="store_true")
    p.add_argument("--budget", type=float, default=None)
    args = p.parse_args(argv)
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from svmtune import SVMTuner

    X, y = _data(args)
    Xs = StandardScaler(with_mean=not sp.issparse(X)).fit_transform(X)
    t1 = time.perf_counter()
    SVC().fit(Xs, y)
    unit_before = time.perf_counter() - t1
    print(f"load average at start: {os.getloadavg()}")
    stream = _Stamped()
    mp = {} if args.budget is None else {"budget": args.budget}
    tuner = SVMTuner(verbose=1, random_state=0, method_params=mp)
    old, sys.stderr = sys.stderr, stream
    t0 = time.perf_counter()
    try:
        tuner.fit(X, y)
    finally:
        sys.stderr = old
    t_end = time.perf_counter()
    total = t_end - t0
    t1 = time.perf_counter()
    SVC().fit(Xs, y)
    unit_after = time.perf_counter() - t1
    unit = (unit_before + unit_after) / 2  # the mean of one fit before and one after
    print(f"load average at end: {os.getloadavg()}")
    print(f"SVC() fit before {unit_before:.2f} s, after {unit_after:.2f} s")
    print(f"total {total:.1f} s (selection {tuner.selection_time_:.1f} s, final fit "
          f"{tuner.final_fit_time_:.1f} s); one SVC() fit {unit:.2f} s")  # fmt: skip
    print("mark   bar %   elapsed s   ETA shown s   actually left s   ratio")
    shown = []  # (time, bar %, ETA seconds) of every status line with an ETA
    for t, line in stream.lines:
        m = re.search(r"\]\s+(\d+)%", line)
        if m and "ETA " in line:
            shown.append((t, int(m.group(1)), _parse_seconds(line.rsplit("ETA ", 1)[1])))
    for mark in (25, 50, 75):
        at = [x for x in shown if x[1] >= mark]
        # a mark the bar passes in one step (the final fit): the last ETA shown before it
        t, pct, secs = (
            at[0] if at else ([x for x in shown if x[1] < mark] or [None])[-1] or (t_end, 100, 0.0)
        )
        left = t_end - t
        late = "" if at else "  (passed in the final fit: the last ETA before it)"
        print(
            f"{mark:4d}   {pct:5d}   {t - t0:9.1f}   {secs:11.1f}   {left:15.1f}   "
            f"{secs / max(left, 1e-9):.2f}{late}"
        )
    info = tuner.selection_.info
    keys = ("plan", "predicted_cost", "predicted_costs", "measured_seconds", "budget", "probe")
    out = {k: info.get(k) for k in keys}
    out.update(svc_fit_s=unit, final_fit_s=tuner.final_fit_time_, final_rule=info["final_rule"])
    print(json.dumps(out, default=str, indent=1))
    pred, meas = info.get("predicted_costs") or {}, info.get("measured_seconds") or {}
    print("part          predicted SVC() fits   measured SVC() fits   seconds")
    rows = [("probes", pred.get("probe"), meas.get("probe"))]
    rows += [
        (f"stage {i}", st["cost"], (meas.get("stages") or [None] * (i + 1))[i])
        for i, st in enumerate(info["plan"])
    ]
    rows += [("final rule", pred.get("final_rule"), meas.get("final_rule"))]
    rows += [("final fit", pred.get("final_fit", 1.0), tuner.final_fit_time_)]
    rows += [("whole run", info["predicted_cost"], total)]
    for name, p_, s_ in rows:
        p_txt = "-" if p_ is None else f"{p_:.2f}"
        m_txt = "-" if s_ is None else f"{s_ / unit:.2f}"
        s_txt = "-" if s_ is None else f"{s_:.1f}"
        print(f"{name:12s}  {p_txt:>20s}   {m_txt:>19s}   {s_txt:>7s}")


def _parse_seconds(text: str) -> float:
    text = text.strip()
    m = re.match(r"(\d+) h (\d+) min", text)
    if m:
        return 3600 * int(m.group(1)) + 60 * int(m.group(2))
    m = re.match(r"(\d+) min (\d+) s", text)
    if m:
        return 60 * int(m.group(1)) + int(m.group(2))
    return float(text.split()[0])


if __name__ == "__main__":
    main()
