"""Should ``auto`` spend less on its first stage and more on later, larger stages?  Chosen by
leave-one-data-set-out over the nine larger bundled sets of ``benchmarks/scaling_auto.py``.

On most cells of 2,000 rows and more, ``auto``'s plan is one exact stage on a subsample
(``benchmarks/scaling_auto.md``): the first stage takes ``FIRST_SHARE`` (60 %) of the
budget (:mod:`svmtune.methods._fidelity`), and the next, ``GROWTH`` (4) times
larger, does not fit in the rest, because an exact evaluation grows as ``s^3``.  The
variants of :data:`VARIANTS` run more, larger stages: ``s..`` take a smaller first share
and/or growth 2 and, where the next stage's referee scores do not fit at its target size,
size it to what is left (the largest of at least twice the rows whose two scores and three
steps fit, :func:`later_stage`), on the path the cost model finds cheaper; ``E..`` keep
every later stage exact (low rank only where memory forbids) and size it to the two scores
that fit, at least 1.5 times the rows before (:func:`later_exact_stage`).  Every variant
runs ``SVMTuner()`` (auto, all else default) on the cells of ``benchmarks/scaling_auto.md``
(same training rows, same held-out part, ``random_state=0``); the default's and the halving
search's accuracies are read from that benchmark's result file.

The choice is cross-validated over data sets: for each held-out set, the variant of highest
mean accuracy gain over the halving search on the other eight sets' cells is scored on the
held-out set's cells.  Accuracy only: the variants' plans are predicted within the same
budget, and these runs shared the machine (two at a time), so their seconds are not timings.

    python benchmarks/auto_planner_study.py run --cells a9a:2000,eeg_eye_state:10000  # resumable
    python benchmarks/auto_planner_study.py table   # writes benchmarks/auto_planner_study.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
OUT = HERE / "auto_planner" / "results.jsonl"
SCALING = HERE / "results" / "scaling_auto" / "results.jsonl"
#: label -> constants of :mod:`svmtune.methods._fidelity` (the default: FIRST_SHARE 0.6,
#: GROWTH 4, whose plans the later-stage sizing below leaves unchanged on every cell)
VARIANTS = {
    "s30g2": {"FIRST_SHARE": 0.3, "GROWTH": 2},
    "s30g4": {"FIRST_SHARE": 0.3, "GROWTH": 4},
    "s45g2": {"FIRST_SHARE": 0.45, "GROWTH": 2},
    # later stages exact wherever memory allows (:func:`later_exact_stage`)
    "E30": {"FIRST_SHARE": 0.3, "GROWTH": 2, "later": "exact"},
    "E45": {"FIRST_SHARE": 0.45, "GROWTH": 2, "later": "exact"},
    "E60": {"FIRST_SHARE": 0.6, "GROWTH": 2, "later": "exact"},
}
#: the least growth of a later stage sized to what is left (successive halving's smallest)
MIN_GROWTH = 2


def later_stage(prev, left, n, d, n_tasks, rank, unit, max_exact, lowrank_only):
    """``plan_stages``' later stage, sized to what is left where its target does not fit."""
    import svmtune.methods._fidelity as F

    def priced(size: int) -> tuple[str, float]:
        paths = [p for p in ("exact", "lowrank") if not (p == "exact" and size > max_exact)]
        paths = ["lowrank"] if lowrank_only else paths
        path = min(paths, key=lambda p: F._stage_cost(size, p, 1, d, n_tasks, rank, unit))
        return path, F._stage_cost(size, path, 1, d, n_tasks, rank, unit)

    target = n if 1.5 * F.GROWTH * prev >= n else F.GROWTH * prev
    path, per = priced(target)
    steps = min(F.LATER_STEPS, int(left // per) - F.LATER_SCORES)
    if steps >= 0:
        cost = per * (steps + F.LATER_SCORES)
        return F.Stage(int(target), path, int(steps), F.LATER_SCORES, cost)
    evals = F.LATER_SCORES + F.LATER_STEPS
    lo, hi = int(np.ceil(MIN_GROWTH * prev)), int(target)
    if lo >= hi or evals * priced(lo)[1] > left:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if evals * priced(mid)[1] <= left else (lo, mid)
    path, per = priced(lo)
    return F.Stage(lo, path, F.LATER_STEPS, F.LATER_SCORES, per * evals)


def later_exact_stage(prev, left, n, d, n_tasks, rank, unit, max_exact, lowrank_only):
    """A later stage on the exact path (low rank only past ``max_exact`` rows or with sparse
    ``X``): the largest size of at least 1.5 times ``prev``, up to the target, whose two
    referee scores fit what is left, with as many steps as fit besides them."""
    import svmtune.methods._fidelity as F

    def priced(size: int) -> tuple[str, float]:
        path = "lowrank" if (lowrank_only or size > max_exact) else "exact"
        return path, F._stage_cost(size, path, 1, d, n_tasks, rank, unit)

    target = n if 1.5 * F.GROWTH * prev >= n else F.GROWTH * prev
    lo, hi = int(np.ceil(1.5 * prev)), int(target)
    if lo > hi:
        return None
    if F.LATER_SCORES * priced(hi)[1] <= left:
        size = hi
    elif F.LATER_SCORES * priced(lo)[1] > left:
        return None
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if F.LATER_SCORES * priced(mid)[1] <= left else (lo, mid)
        size = lo
    path, per = priced(size)
    steps = max(0, min(F.LATER_STEPS, int(left // per) - F.LATER_SCORES))
    return F.Stage(int(size), path, int(steps), F.LATER_SCORES, per * (steps + F.LATER_SCORES))


#: the later-stage rule of the variant being run (:func:`cmd_run` sets it)
LATER = {"stage": later_stage}


def plan_stages(n, d, n_tasks, *, budget, max_eval, rank, max_exact, lowrank_only=False,
                sv_fraction=None, refiners=1):  # fmt: skip
    """``svmtune.methods._fidelity.plan_stages`` with :func:`later_stage`."""
    import svmtune.methods._fidelity as F

    first = F.plan_stages(
        n, d, n_tasks, budget=budget, max_eval=max_eval, rank=rank, max_exact=max_exact,
        lowrank_only=lowrank_only, sv_fraction=sv_fraction, refiners=refiners,
    )  # fmt: skip
    stages = [first.stages[0]]
    left = budget - first.final_cost - stages[0].cost
    unit = F.svc_fit_cost(n, d, sv_fraction)
    while stages[-1].size < n:
        stage = LATER["stage"](stages[-1].size, max(left, 0.0), n, d, n_tasks, rank, unit,
                               max_exact, lowrank_only)  # fmt: skip
        if stage is None:
            break
        stages.append(stage)
        left -= stage.cost
    return F.Plan(n, d, n_tasks, float(budget), tuple(stages), first.final_cost, sv_fraction)


def _done() -> set[tuple[str, str, str]]:
    if not OUT.exists():
        return set()
    recs = [json.loads(line) for line in OUT.read_text().splitlines() if line.strip()]
    return {(r["set"], r["size"], r["config"]) for r in recs}


def cmd_run(args) -> None:
    sys.path.insert(0, str(HERE))
    from scaling_auto import cell_data

    import svmtune.methods._fidelity as F
    import svmtune.methods.auto as auto
    from svmtune import SVMTuner

    auto.plan_stages = plan_stages  # the study's planner (module docstring)
    defaults = {k: getattr(F, k) for v in VARIANTS.values() for k in v if k != "later"}
    done = _done()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for cell in args.cells.split(","):
        name, size = cell.split(":")
        todo = [v for v in VARIANTS if (name, size, v) not in done]
        if not todo:
            continue
        A, y, B, yt, meta = cell_data(name, size, 0)
        for label in todo:
            consts = {**defaults, **VARIANTS[label]}
            exact = consts.pop("later", None) == "exact"
            LATER["stage"] = later_exact_stage if exact else later_stage
            for k, v in consts.items():
                setattr(F, k, v)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tuner = SVMTuner(method="auto", random_state=0).fit(A, y)
            info = tuner.selection_.info
            rec = {
                "set": name, "size": size, "n": meta["n_train"], "config": label,
                "acc": float((tuner.predict(B) == yt).mean()),
                "fit_s": time.perf_counter() - t0,
                "C": tuner.best_params_["C"], "sigma": tuner.best_params_["sigma"],
                "final": tuner.final_model_,
                "plan": [(p["size"], p["path"], p["steps"]) for p in info["plan"]],
                "chosen": info["chosen"], "exponent": info["carry_exponent"],
            }  # fmt: skip
            with OUT.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(json.dumps(rec), flush=True)


def load() -> pd.DataFrame:
    rows = []
    last = {}
    for line in SCALING.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        last[(r["set"], r["size"], r["method"])] = r
    names = {"auto": "default", "halving": "halving", "default": "SVC()"}
    for (s, z, m), r in last.items():
        if r["status"] == "ok" and m in names:
            rows.append({"set": s, "size": z, "config": names[m], "acc": 100 * r["accuracy"]})
    for line in OUT.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows.append({"set": r["set"], "size": r["size"], "config": r["config"],
                     "acc": 100 * r["acc"]})  # fmt: skip
    table = pd.DataFrame(rows).pivot_table(
        index=["set", "size"], columns="config", values="acc", aggfunc="last"
    )
    return table.dropna()


def cmd_table(_args) -> None:
    t = load()
    configs = ["default", *VARIANTS]
    gain = t[configs].sub(t["halving"], axis=0)
    held, picks = [], {}
    for s in t.index.get_level_values(0).unique():
        rest = gain.drop(index=s, level=0).mean()
        best = rest.idxmax()
        picks[best] = picks.get(best, 0) + 1
        held.extend(gain.loc[s, best].tolist())
    lines = [
        "# `auto`'s plan: a smaller first stage and more stages, chosen by leave-one-data-set-out",
        "",
        "Generated by `python benchmarks/auto_planner_study.py table` from "
        "`benchmarks/auto_planner/results.jsonl` and `benchmarks/results/scaling_auto` "
        "(protocol: the script's docstring). "
        f"{len(t)} cells of {t.index.get_level_values(0).nunique()} data sets where every "
        "configuration and the halving search finished; accuracy on the held-out part (%).",
        "",
        f"**Nested leave-one-data-set-out**: the configuration of best mean gain over the "
        f"halving search on the other sets gains **{np.mean(held):+.2f}** points on the "
        f"held-out set's cells (picks: "
        + ", ".join(f"`{k}` ({v})" for k, v in sorted(picks.items(), key=lambda kv: -kv[1]))
        + ").",
        "",
        "| configuration | constants | mean accuracy | gain over halving | over `SVC()` | "
        "wins / losses against the default |",
        "|---|---|---|---|---|---|",
    ]
    for c in configs:
        d = t[c] - t["default"]
        lines.append(
            f"| `{c}` | `{VARIANTS.get(c, {'FIRST_SHARE': 0.6, 'GROWTH': 4})}` | "
            f"{t[c].mean():.2f} | {gain[c].mean():+.2f} | {(t[c] - t['SVC()']).mean():+.2f} | "
            f"{int((d > 1e-9).sum())} / {int((d < -1e-9).sum())} |"
        )
    lines += ["", "Gain over the halving search per cell (points):", ""]
    lines.append("| set | rows | " + " | ".join(f"`{c}`" for c in configs) + " |")
    lines.append("|---|---|" + "---|" * len(configs))
    for (s, z), row in gain[configs].iterrows():
        lines.append(f"| {s} | {z} | " + " | ".join(f"{v:+.2f}" for v in row) + " |")
    path = HERE / "auto_planner_study.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(path)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--cells", required=True, help="set:size,... as in scaling_auto.py")
    run.set_defaults(fn=cmd_run)
    sub.add_parser("table").set_defaults(fn=cmd_table)
    args = ap.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
