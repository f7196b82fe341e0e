"""auto's referee threshold on the cells of ``benchmarks/scaling_auto.md``: accuracy per rule.

Runs ``SVMTuner(method="auto", method_params={"noise_z": z, "smooth": s})`` on every cell
(data set, training size, seed 0) of ``benchmarks/scaling_auto.py`` where ``auto`` ran, for
each referee rule of :data:`RULES`, on the cell's own training and held-out rows
(:func:`scaling_auto.cell_data`), and stores the test accuracy, the seconds and the choice.
``benchmarks/auto_referee_lodo.py`` joins them with the small sets' study and chooses the
rule by nested leave-one-data-set-out.  Cells run in one process each, one rule after the
other, so their seconds are comparable within a cell only.

    python benchmarks/auto_referee_scaling.py --n-jobs 2 --max-n 10500

Units are checkpointed (``benchmarks/results/auto_referee/scaling.jsonl``): a killed run
resumes.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from _units import run_units
from scaling_auto import cell_data

from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.runner import environment

HERE = Path(__file__).parent
OUT = HERE / "results" / "auto_referee"
#: (noise_z, smooth) of each rule tried
RULES = ((0.0, False), (1.0, True), (1.645, True), (1.645, False))


def cells(max_n: int | None = None) -> list[tuple[str, str]]:
    """The (set, size) cells where ``auto`` ran in ``benchmarks/results/scaling_auto`` (of at
    most ``max_n`` training rows)."""
    rows = HERE / "results" / "scaling_auto" / "results.jsonl"
    out = set()
    for line in rows.open():
        r = json.loads(line)
        if r.get("method") == "auto" and r.get("seed") == 0 and r.get("status") == "ok":
            if max_n is None or r["n_train"] <= max_n:
                out.add((r["set"], r["size"]))
    return sorted(out, key=lambda c: (c[0], float("inf") if c[1] == "full" else int(c[1])))


def run_unit(name: str, size: str) -> dict:
    from svmtune import SVMTuner

    X, y, Xt, yt, meta = cell_data(name, size, 0)
    out = []
    for z, smooth in RULES:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tuner = SVMTuner(method_params={"noise_z": z, "smooth": smooth}, random_state=0).fit(
                X, y
            )
        seconds = time.perf_counter() - t0
        info = tuner.selection_.info
        out.append(
            {
                "noise_z": z,
                "smooth": smooth,
                "accuracy": float((tuner.predict(Xt) == yt).mean()),
                "seconds": seconds,
                "params": {k: float(tuner.best_params_[k]) for k in ("sigma", "C")},
                "estimate": float(tuner.estimate_),
                "final_model": tuner.final_model_,
                "path": info["path"],
                "chosen": info["chosen"],
                "referee_test": info["referee_test"],
                "final_rule": info["final_rule"],
                "plan": info["plan"],
            }
        )
    return {"set": name, "size": size, **meta, "rules": out, **environment()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=1, help="cells run at once")
    ap.add_argument("--max-n", type=int, default=None, help="largest training size run")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    ck = Checkpoint(OUT / "scaling.jsonl", spec={"rules": [list(r) for r in RULES], "version": 1})
    us = cells(args.max_n)
    print(len(us), "cells", flush=True)
    run_units(ck, us, run_unit, args.n_jobs)


if __name__ == "__main__":
    main()
