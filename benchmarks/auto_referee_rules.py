"""Referee rules of ``auto`` compared offline on the stored per-row leave-one-out losses.

Reads ``benchmarks/results/auto_referee/units.jsonl`` (``benchmarks/auto_referee_study.py``)
and scores, on the 43 small bundled sets, each rule ``auto``'s referee could use on all
training rows:

* ``min``: the candidate and family of lowest leave-one-out error (ties to the earlier
  candidate, ``SVC()``'s point first, and to the L2-SVM): the referee before issue #62;
* ``paired(score, z)``: ``SVC()``'s point is the incumbent; a candidate replaces it only when
  the paired difference of their per-row losses is below ``-z`` standard errors
  (:func:`svmtune.loo.paired.paired_z`), on the 0/1 loss (``"01"``, each at its best
  family), on the cross-entropy (``"xent"``, within the challenger's best family, with the
  0/1 error not higher) or on either (``"either"``); among the candidates that pass, the
  lowest 0/1 error wins (as :class:`svmtune.methods._auto_referee.Referee` decides).

Each rule runs with each refinement the study stored (RBSVM for 10 steps from the start the
rule prefers, 30 steps, the smoothed span).  The threshold and the rule are chosen by nested
leave-one-data-set-out: for each set, the configuration of best mean accuracy on the other 42
is scored on it; the mean of those held-out scores estimates how the choice generalises.

    python benchmarks/auto_referee_rules.py
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.loo.paired import paired_z

HERE = Path(__file__).parent
UNITS = HERE / "results" / "auto_referee" / "units.jsonl"
MD = HERE / "auto_referee_rules.md"
ZS = (0.0, 0.5, 1.0, 1.645, 2.0, 2.5)
SCORES = ("01", "xent", "either")
#: refinement (stored candidate) by the start the rule prefers, and the fixed ones
REFINES = {
    "rbsvm10": {"default": "rbsvm_default", "median": "rbsvm_median"},
    "rbsvm30": {"default": "rbsvm30_median", "median": "rbsvm30_median"},
    "span10": {"default": "span_median", "median": "span_median"},
}
FAMILIES = ("l2", "l1")  # ties to the L2-SVM (auto's order)


def load() -> list[dict]:
    rows = []
    with UNITS.open() as fh:
        next(fh)
        for line in fh:
            rows.append(json.loads(line)["value"])
    return rows


def _option(c, fam):
    return np.asarray(c[f"err01_{fam}"], float), np.asarray(c[f"xent_{fam}"], float)


def best_family(c) -> str:
    errs = [(np.mean(c[f"err01_{f}"]), f) for f in FAMILIES]
    return min(errs, key=lambda e: e[0])[1]


def passes(ch, inc, score: str, z: float) -> bool:
    e1, x1 = ch
    e0, x0 = inc
    z01 = paired_z(e1 - e0)
    zx = paired_z(x1 - x0)
    if score == "01":
        return z01 < -z
    if score == "xent":
        return zx < -z and e1.mean() <= e0.mean()
    return z01 < -z or (zx < -z and e1.mean() <= e0.mean())


def choose(unit, rule, refine) -> tuple[str, str]:
    """(candidate origin, family) a rule picks in one unit."""
    cands = {c["origin"]: c for c in unit["candidates"]}
    starts = ["default", "median"]
    if rule[0] == "min":
        opts = [(o, f) for o in starts for f in FAMILIES]
        key = lambda of: np.mean(cands[of[0]][f"err01_{of[1]}"])  # noqa: E731
        best_start = min(opts, key=key)[0]
        ref = REFINES[refine][best_start]
        opts += [(ref, f) for f in FAMILIES]
        return min(opts, key=key)
    _, score, z = rule

    def beyond(o: str) -> bool:
        """Candidate ``o`` beats ``SVC()``'s point beyond noise (auto's Referee.compare)."""
        fo, fd = best_family(cands[o]), best_family(cands["default"])
        ch = (np.asarray(cands[o][f"err01_{fo}"], float), _option(cands[o], fo)[1])
        inc = (np.asarray(cands["default"][f"err01_{fd}"], float), _option(cands["default"], fo)[1])
        return passes(ch, inc, score, z)

    inc = ("default", best_family(cands["default"]))
    ref = REFINES[refine]["median" if beyond("median") else "default"]
    passed = [(o, best_family(cands[o])) for o in ("median", ref) if beyond(o)]
    if not passed:
        return inc
    # the lowest error; equal errors to the earlier candidate
    return min(passed, key=lambda of: np.mean(cands[of[0]][f"err01_{of[1]}"]))


def configs():
    out = [(("min",), r) for r in REFINES]
    out += [(("paired", s, z), r) for s, z, r in itertools.product(SCORES, ZS, REFINES)]
    return out


def accuracy_table(units) -> pd.DataFrame:
    """Mean test accuracy (%) per set (columns) of each configuration (rows)."""
    recs = []
    for u in units:
        cands = {c["origin"]: c for c in u["candidates"]}
        s = f"{u['suite']}:{u['task']}"
        for cfg in configs():
            o, f = choose(u, *cfg)
            recs.append({"cfg": cfg, "set": s, "acc": 100 * cands[o][f"test_{f}"]})
        recs.append({"cfg": "SVC()", "set": s, "acc": 100 * cands["default"]["test_l1"]})
    df = pd.DataFrame(recs)
    df["cfg"] = df["cfg"].map(str)
    return df.groupby(["cfg", "set"])["acc"].mean().unstack()


def nested_lodo(table: pd.DataFrame, candidates: list[str]) -> tuple[float, dict]:
    """Held-out mean accuracy of choosing among ``candidates`` by leave-one-set-out, and how
    often each was chosen."""
    held, picks = [], {}
    for s in table.columns:
        rest = table.drop(columns=s).loc[candidates].mean(axis=1)
        pick = rest.idxmax()
        picks[pick] = picks.get(pick, 0) + 1
        held.append(table.loc[pick, s])
    return float(np.mean(held)), picks


#: the rules run on the scaling cells (benchmarks/auto_referee_scaling.py RULES) as
#: configurations of this study: (noise_z, smooth) -> ("paired", score, z)
SHARED = {
    (0.0, False): ("paired", "01", 0.0),
    (1.0, True): ("paired", "either", 1.0),
    (1.645, True): ("paired", "either", 1.645),
    (1.645, False): ("paired", "01", 1.645),
}


def scaling_table() -> pd.DataFrame | None:
    """Test accuracy (%) per scaling set (mean over its sizes; columns) of each shared rule
    (rows, named as the small sets' configurations), from
    ``benchmarks/results/auto_referee/scaling.jsonl``; None before that run."""
    path = UNITS.parent / "scaling.jsonl"
    if not path.exists():
        return None
    recs = []
    with path.open() as fh:
        next(fh)
        for line in fh:
            v = json.loads(line)["value"]
            for r in v["rules"]:
                cfg = str((SHARED[(r["noise_z"], r["smooth"])], "rbsvm10"))
                recs.append({"cfg": cfg, "set": f"scaling:{v['set']}", "acc": 100 * r["accuracy"]})
    df = pd.DataFrame(recs)
    return df.groupby(["cfg", "set"])["acc"].mean().unstack()


def joint_lines(table: pd.DataFrame) -> list[str]:
    """The shared rules on the small sets and the scaling sets together, and the rule
    chosen by nested leave-one-data-set-out over both (each data set one fold)."""
    scaling = scaling_table()
    if scaling is None:
        return []
    cfgs = list(scaling.index)
    joint = pd.concat([table.loc[cfgs], scaling], axis=1)
    held, picks = nested_lodo(joint, cfgs)
    lines = [
        "",
        "## The rules run on both the small sets and the scaling cells",
        "",
        f"Beside the 43 small sets, {scaling.shape[1]} scaling sets "
        "(`benchmarks/results/auto_referee/scaling.jsonl`, each the mean of its sizes that "
        "ran). Nested "
        f"leave-one-data-set-out over the {joint.shape[1]} sets: **{held:.2f}** held out; "
        f"picked {picks}.",
        "",
        "| rule | small sets | scaling sets | all sets |",
        "|---|---|---|---|",
    ]
    for c in cfgs:
        lines.append(
            f"| {c} | {table.loc[c].mean():.2f} | {scaling.loc[c].mean():.2f} | "
            f"{joint.loc[c].mean():.2f} |"
        )
    return lines


def main() -> None:
    units = load()
    table = accuracy_table(units)
    means = table.mean(axis=1).sort_values(ascending=False)
    cfgs = [c for c in table.index if c != "SVC()"]
    held, picks = nested_lodo(table, cfgs)
    base = str((("min",), "rbsvm10"))
    lines = [
        "# auto's referee rules on the 43 small bundled sets",
        "",
        f"Generated by `python benchmarks/auto_referee_rules.py` from {len(units)} units of "
        "`benchmarks/results/auto_referee/units.jsonl` (all training rows, one stage). "
        "Mean test accuracy (%) over the sets (each set the mean over its splits).",
        "",
        f"- sets: {table.shape[1]}; `SVC()`: {table.loc['SVC()'].mean():.2f}; "
        f"the referee before (`min`, RBSVM 10 steps): {table.loc[base].mean():.2f}",
        f"- nested leave-one-data-set-out over all {len(cfgs)} configurations: "
        f"**{held:.2f}** held out; picked {picks}",
        "",
        "| configuration | mean accuracy | wins / ties / losses vs `min` |",
        "|---|---|---|",
    ]
    for cfg, m in means.items():
        d = table.loc[cfg] - table.loc[base]
        wtl = f"{(d > 0.01).sum()} / {(d.abs() <= 0.01).sum()} / {(d < -0.01).sum()}"
        lines.append(f"| {cfg} | {m:.2f} | {wtl} |")
    lines += joint_lines(table)
    MD.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:12] + lines[-12:]))


if __name__ == "__main__":
    main()
