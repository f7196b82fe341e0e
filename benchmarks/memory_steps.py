"""Where the memory of a 10^6-row selection goes: the measurements behind three settings of
issue 64 (``python benchmarks/memory_steps.py run``, then ``report``).

On ``benchmarks/scale_out.py``'s data (20 features, standardised), each cell in its own
process, resident memory sampled every 5 ms above the process once its libraries are
imported and its data exist:

* ``lowrank_block_22`` / ``lowrank_block_20``: the low-rank final model of the 10^6-row
  selection (``LowRankL2SVC(sigma=10.53, C=191.5, rank=500, rank_tol=1e-4)``) fitted with
  ``svmtune.estimators.DECISION_BLOCK`` at 2^22 and at 2^20 kernel values (the setting);
* ``rule_cache_200`` / ``rule_cache_100``: libsvm at that point on the final-model rule's
  12,500 rows with a 200 MB (scikit-learn's default) and a 100 MB kernel cache
  (``svmtune.methods._auto_final.RULE_CACHE_MB``): peak, seconds, support vectors,
  iterations;
* ``auto_release`` / ``auto_no_release``: ``SVMTuner(random_state=0).fit`` on 10^6 rows with
  and without :func:`svmtune._memory.release_freed_memory`: the peak, and the memory resident
  when the final fit starts.

Results go to ``benchmarks/results/memory_steps.jsonl`` (one line a cell, with the commit,
machine and load); ``benchmarks/memory_steps.md`` is generated from it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "memory_steps.jsonl"
MD = HERE / "memory_steps.md"
N = 1_000_000
RULE_ROWS = 12_500
SIGMA, C = 10.53, 191.5
CELLS = {
    "lowrank_block_22": ("lowrank", 2**22),
    "lowrank_block_20": ("lowrank", 2**20),
    "rule_cache_200": ("rule", 200.0),
    "rule_cache_100": ("rule", 100.0),
    "auto_release": ("auto", True),
    "auto_no_release": ("auto", False),
}


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Peak:
    """The largest resident memory seen every 5 ms from now on, in MB."""

    def __init__(self) -> None:
        self.mb, self._on = _rss_mb(), True
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while self._on:
            self.mb = max(self.mb, _rss_mb())
            time.sleep(0.005)

    def stop(self) -> float:
        self._on = False
        return max(self.mb, _rss_mb())


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    sys.path.insert(0, str(HERE))
    from scale_out import numpy_data

    X, y = numpy_data(n, 0)
    X -= X.mean(axis=0)  # in place: the process holds X once
    X /= X.std(axis=0)
    return X, y


def cell(name: str) -> dict:
    """Run one cell in this process; its record."""
    import sklearn.svm  # noqa: F401 - the libraries are in the base, not in the peak

    import svmtune.estimators_lowrank  # noqa: F401
    import svmtune.tuner  # noqa: F401

    kind, setting = CELLS[name]
    X, y = _data(RULE_ROWS if kind == "rule" else N)
    base = _rss_mb()
    rec: dict = {"cell": name, "rows": len(y), "data_mb": X.nbytes / 2**20}
    peak, t0 = Peak(), time.perf_counter()
    if kind == "lowrank":
        import svmtune.estimators as est
        from svmtune.estimators_lowrank import LowRankL2SVC

        est.DECISION_BLOCK = setting
        LowRankL2SVC(sigma=SIGMA, C=C, rank=500, rank_tol=1e-4, random_state=0).fit(X, y)
    elif kind == "rule":
        from sklearn.svm import SVC

        svc = SVC(C=C, gamma=1 / (2 * SIGMA**2), cache_size=setting).fit(X, y)
        rec.update(n_support=int(svc.n_support_.sum()), n_iter=int(np.sum(svc.n_iter_)))
    else:
        rec["resident_at_final_fit_mb"] = _auto(X, y, setting) - base
    rec.update(seconds=time.perf_counter() - t0, peak_above_data_mb=peak.stop() - base)
    return rec


def _auto(X, y, release: bool) -> float:
    """``SVMTuner(random_state=0).fit`` (with ``release_freed_memory`` a no-op unless
    ``release``); the resident memory when the final fit starts."""
    import svmtune.methods._auto_final as rule
    import svmtune.methods.auto as auto
    import svmtune.tuner as tuner
    from svmtune import SVMTuner

    if not release:
        for module in (auto, rule, tuner):
            module.release_freed_memory = lambda: False
    seen = []
    fit_final = tuner.SVMTuner._fit_final
    tuner.SVMTuner._fit_final = lambda self, *a: seen.append(_rss_mb()) or fit_final(self, *a)
    SVMTuner(random_state=0).fit(X, y)
    return seen[0]


def run(names: list[str]) -> None:
    from svmtune.bench.runner import environment

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    for name in names:
        load = os.getloadavg()
        out = subprocess.run(
            [sys.executable, __file__, "cell", name], capture_output=True, text=True, check=True
        )
        rec = json.loads(out.stdout.strip().splitlines()[-1])
        rec.update(load_before=load, commit=commit, **environment())
        with RESULTS.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
        print(json.dumps({k: rec[k] for k in ("cell", "seconds", "peak_above_data_mb")}))
    report()


def report() -> None:
    """``benchmarks/memory_steps.md`` from the newest record of each cell."""
    latest = {}
    for line in RESULTS.read_text().splitlines():
        rec = json.loads(line)
        latest[rec["cell"]] = rec
    lines = [
        "# Where the memory of a 10^6-row selection goes",
        "",
        "Generated by `python benchmarks/memory_steps.py report` from"
        " `benchmarks/results/memory_steps.jsonl` (the cells and their settings: the"
        " script's docstring). Memory is resident memory above the process once its"
        " libraries are imported and its data exist, sampled every 5 ms.",
        "",
        "| cell | rows | seconds | peak above the data MB | resident at the final fit MB |"
        " support vectors | iterations | load before | commit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in CELLS:
        r = latest.get(name)
        if r is None:
            continue
        at = r.get("resident_at_final_fit_mb")
        lines.append(
            f"| {name} | {r['rows']:,} | {r['seconds']:.1f} | {r['peak_above_data_mb']:.0f} | "
            f"{'-' if at is None else f'{at:.0f}'} | {r.get('n_support', '-')} | "
            f"{r.get('n_iter', '-')} | {r['load_before'][0]:.2f} | {r['commit'][:7]} |"
        )
    MD.write_text("\n".join(lines) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["run", "cell", "report"])
    ap.add_argument("names", nargs="*", default=list(CELLS))
    args = ap.parse_args(argv)
    if args.what == "cell":
        print(json.dumps(cell(args.names[0])))
    elif args.what == "run":
        run(args.names)
    else:
        report()


if __name__ == "__main__":
    main()
