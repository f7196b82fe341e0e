"""The LD paper's experiments (Menezes, Torres & Braga, Neurocomputing 2019, Sec. 5).

``svmtune bench --suite ld-paper``.

Tasks: the 18 data sets of LD Table 1, with the paper's names, mapped to the bundled files
(MANIFEST "papers" column C):

======================  ======================================================================
paper name              bundled data set (notes)
======================  ======================================================================
appendicitis            appendicitis (KEEL, via PMLB)
australian              australian (KEEL numeric coding)
banknote                banknote
breastcancer            breast_w (Wisconsin original, 699 x 9; assumed: the paper does not
                        say which breast-cancer set; 16 missing values median-imputed)
breastHess              breast_cancer_hess (133 x 26; MANIFEST: to be confirmed)
bupa                    bupa
climate                 climate_crashes without the identifier columns Study and Run
diabetes                pima
fertility               fertility
german                  german (categorical; one-hot encoded)
glass                   glass, **6 classes**, one-vs-one SVM (see below)
haberman                haberman
heart                   heart_statlog
ILPD                    ilpd
ionosphere              ionosphere
parkinsons              parkinsons
segmentation            image_segmentation, **7 classes**, one-vs-one SVM (see below)
sonar                   sonar
======================  ======================================================================

Glass and segmentation: the paper "converted [them] to one versus all problems, as described
in [5]" without saying which class is the positive one; its accuracies (96.7 %, 99.0 %) are
those of a binary one-class-vs-rest task.  We do not guess the class: the tasks keep every
class, so our multiclass accuracies are **not comparable** with the paper's numbers for these
two sets.  Their final SVMs are libsvm's one-vs-one, as in the ``SVC()`` yardstick
(``Task.tuner_params={"multiclass": "ovo"}``): LD averages its objective over the class pairs
and CV-CV / LD-CV cross-validate one-vs-one SVMs.  With one-vs-rest, the final fit alone (7
binary SVMs on all 2079 segmentation samples) costs about 3.5 ``SVC()`` fits (21 pairwise SVMs
on about 600 samples each), which would compare decompositions rather than width selectors.

Methods (labels as in Table 1): ``CV-CV`` (10-fold CV grid, sigma 2^-6..2^4, C 2^-5..2^8:
154 candidates, 1540 fits; the paper's own CV baseline and this suite's grid yardstick),
``LD-C1`` (sigma by LD, C = 1), ``LD-CV`` (sigma by LD, C by 10-fold CV over 2^-5..2^8: 140
fits) and scikit-learn's ``SVC()`` (``default``).

Protocol: 10-fold stratified CV, accuracy mean ± std over the folds (as Table 1).

Figures (from the result rows): ``ld_tables`` writes Table 1 (mean ± std beside the paper's),
Table 2 (Wilcoxon z and p for the paper's three pairs beside the paper's), the run time of
each variant, and the acceptance checks.  Experiments: the likelihood-space picture
(Fig. 2b), the objective against log sigma (Fig. 4, two spirals), decision boundaries on four
2-D data sets (Fig. 5) and the golden-section vs dense 1000-point scan check on the 18 sets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task

from . import _esdr_ld_figures as H
from ._paper_tables import paper_table

__all__ = [
    "SUITE",
    "PUBLISHED_AVERAGE",
    "PUBLISHED_WILCOXON",
    "ld_tables",
    "ld_likelihood_space",
    "ld_objective_curve",
    "ld_decision_boundaries",
    "ld_golden_vs_dense",
]

TASKS = [
    Task("appendicitis", "appendicitis"),
    Task("australian", "australian"),
    Task("banknote", "banknote"),
    Task("breastcancer", "breast_w"),
    Task("breastHess", "breast_cancer_hess"),
    Task("bupa", "bupa"),
    Task("climate", "climate_crashes", drop_columns=("Study", "Run")),
    Task("diabetes", "pima"),
    Task("fertility", "fertility"),
    Task("german", "german"),
    Task("glass", "glass", tuner_params={"multiclass": "ovo"}),
    Task("haberman", "haberman"),
    Task("heart", "heart_statlog"),
    Task("ILPD", "ilpd"),
    Task("ionosphere", "ionosphere"),
    Task("parkinsons", "parkinsons"),
    Task("segmentation", "image_segmentation", tuner_params={"multiclass": "ovo"}),
    Task("sonar", "sonar"),
]

METHODS = [
    MethodSpec("default", "default"),
    MethodSpec("CV-CV", "cv_cv"),
    MethodSpec("LD-C1", "ld_c1"),
    MethodSpec("LD-CV", "ld"),
]

#: LD Table 1 (paper_tables/ld_paper.json): task -> [(accuracy %, std %)] per method of
#: :data:`_TABLE1_COLUMNS`, as printed (the paper prints identical std columns for LD-C1 and
#: LD-CV on every set)
_TABLE1 = paper_table("ld_paper", "1")
_TABLE1_COLUMNS = ["CV-CV", "LD-C1", "LD-CV"]

PUBLISHED = [
    entry
    for task, cols in _TABLE1.items()
    for label, (acc, std) in zip(_TABLE1_COLUMNS, cols)
    for entry in (
        {"table": "1", "task": task, "method": label, "metric": "accuracy", "value": acc},
        {"table": "1", "task": task, "method": label, "metric": "accuracy_std", "value": std},
    )
]

#: LD Table 1 "average" row as printed (mean ± std over the 18 sets).  The printed averages
#: are 0.14-0.23 pp below the means of the printed per-set accuracies (85.939, 85.875, 86.233)
PUBLISHED_AVERAGE = paper_table("ld_paper", "1_average")

#: LD Table 2: Wilcoxon signed-rank z and p of the three pairs
PUBLISHED_WILCOXON = [
    (*pair.split(" vs "), z, p) for pair, (z, p) in paper_table("ld_paper", "2").items()
]

#: dense scan of the golden-section check: 1000 points over the LD selector's scan range
DENSE_POINTS = 1000
LD_LOG2_RANGE = (-8.0, 9.0)


# ----------------------------------------------------------------------------- figures
def ld_tables(results: pd.DataFrame, outdir: Path) -> list[Path]:
    """LD Tables 1 and 2 beside ours, run times, and the acceptance checks (markdown)."""
    ok = results[results["status"] == "ok"]
    labels = ["CV-CV", "LD-C1", "LD-CV", "default"]
    lines = [
        "# LD Table 1 beside ours (accuracy %, mean ± std over 10 outer folds)",
        "",
        "| task | " + " | ".join(f"{m} ours | {m} paper" for m in labels[:3]) + " | default |",
        "|---|" + "---|" * 7,
    ]
    means: dict[str, dict[str, float]] = {m: {} for m in labels}
    for t in TASKS:
        cells = [t.name]
        for m in labels:
            sub = ok[(ok["task"] == t.name) & (ok["method"] == m)]["accuracy"] * 100
            if len(sub):
                means[m][t.name] = float(sub.mean())
                sd = float(sub.std(ddof=1)) if len(sub) > 1 else 0.0
                txt = f"{sub.mean():.3f} ± {sd:.3f}" + (f" ({len(sub)} folds)" * (len(sub) < 10))
            else:
                txt = "not run"
            cells.append(txt)
            if m != "default":
                acc, std = _TABLE1[t.name][_TABLE1_COLUMNS.index(m)]
                cells.append(f"{acc:.3f} ± {std:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Average over the tasks each method ran (paper: over all 18 sets):", ""]
    lines += ["| method | tasks | ours mean ± std | paper |", "|---|---|---|---|"]
    for m in labels:
        v = np.array(list(means[m].values()))
        pub = PUBLISHED_AVERAGE.get(m)
        lines.append(
            f"| {m} | {v.size} | "
            + (f"{v.mean():.3f} ± {v.std(ddof=1) if v.size > 1 else 0:.3f}" if v.size else "—")
            + " | "
            + (f"{pub[0]:.3f} ± {pub[1]:.3f}" if pub else "")
            + " |"
        )
    lines += ["", "# LD Table 2: Wilcoxon signed-rank tests over tasks", ""]
    lines += [
        "| pair | tasks | ours z | ours p | paper z | paper p | mean Δ (first − second) pp |",
        "|---|---|---|---|---|---|---|",
    ]
    tests = H.wilcoxon_pairs(results, [(a, b) for a, b, _, _ in PUBLISHED_WILCOXON])
    for (a, b, z, p), r in zip(PUBLISHED_WILCOXON, tests):
        if r["n_tasks"]:
            ours = f"{r['z']:.4f} | {r['p']:.3f}"
            dd = f"{r['mean_diff_pp']:+.3f}"
        else:
            ours, dd = "not run | not run", "—"
        lines.append(f"| {a} vs. {b} | {r['n_tasks']} | {ours} | {z} | {p} | {dd} |")
    lines += [
        "",
        "z: normal approximation on min(R+, R−), zero differences dropped (the report's "
        "convention, svmtune.bench.stats); one pair per task = mean over the folds both ran.",
        "",
        "# Run time per variant (mean selection time per outer fold, s; single core)",
        "",
        "| task | n_train | " + " | ".join(labels) + " | LD-C1 (sel + final fit) / SVC() fit |",
        "|---|---|" + "---|" * (len(labels) + 1),
    ]
    for t in TASKS:
        sub = ok[ok["task"] == t.name]
        if sub.empty:
            continue
        cells = [t.name, f"{sub['n_train'].mean():.0f}"]
        for m in labels:
            s = sub[sub["method"] == m]
            cells.append(f"{s['selection_time'].mean():.3g}" if len(s) else "not run")
        c1 = sub[sub["method"] == "LD-C1"]
        if len(c1):
            r = float((c1["selection_time"] + c1["final_fit_time"]).mean())
            r /= float(c1["default_fit_time"].mean())
            flag = " (n ≥ 1000: " + ("ok" if r <= 3 else "FAILS ≤ 3") + ")"
            cells.append(f"{r:.3g}" + (flag if c1["n_train"].mean() >= 1000 else ""))
        else:
            cells.append("not run")
        lines.append("| " + " | ".join(cells) + " |")
    # LD-CV vs CV-CV on the tasks both ran (same folds)
    a = ok[ok["method"] == "LD-CV"][["task", "split", "accuracy", "selection_time"]]
    b = ok[ok["method"] == "CV-CV"][["task", "split", "accuracy", "selection_time"]]
    j = a.merge(b, on=["task", "split"], suffixes=("_ld", "_cv"))
    lines += ["", "# Acceptance: LD-CV vs CV-CV on the folds both ran", ""]
    if j.empty:
        lines.append("CV-CV and LD-CV share no fold yet (not run).")
    else:
        per = j.groupby("task")[["accuracy_ld", "accuracy_cv"]].mean()
        d = 100 * float((per["accuracy_ld"] - per["accuracy_cv"]).mean())
        r = float(j["selection_time_ld"].sum() / j["selection_time_cv"].sum())
        lines.append(
            f"{len(per)} tasks, {len(j)} folds: mean accuracy LD-CV − CV-CV = {d:+.2f} pp "
            f"(within 1 pt: {'yes' if d >= -1 else 'no'}); total selection time LD-CV / CV-CV "
            f"= {r:.3g} (≤ 1/10: {'yes' if r <= 0.1 else 'no'}); tasks: {', '.join(per.index)}."
        )
    path = Path(outdir) / "ld_tables.md"
    path.write_text("\n".join(lines) + "\n")
    return [H.text_figure(Path(outdir) / "ld_tables.png", path.read_text(), width=19), path]


# ----------------------------------------------------------------------------- experiments
def _standardise(X: np.ndarray) -> np.ndarray:
    from sklearn.preprocessing import StandardScaler

    return StandardScaler().fit_transform(X)


def _two_d_sets(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Four 2-D sets for Fig. 2b / Fig. 5: banana (500 rows of the bundled KEEL banana,
    stratified, seeded), two spirals, two moons and two circles (generated, seeded)."""
    from sklearn.datasets import make_circles, make_moons

    Xb, yb = H.standardised_task_data(Task("banana", "banana", subsample=500))
    sets = {"banana (500 of 5300)": (Xb, yb)}
    Xs, ys = H.two_spirals(400, noise=0.3, random_state=seed)
    sets["two spirals"] = (_standardise(Xs), ys)
    Xm, ym = make_moons(300, noise=0.2, random_state=seed)
    sets["two moons"] = (_standardise(Xm), ym)
    Xc, yc = make_circles(300, noise=0.1, factor=0.4, random_state=seed)
    sets["two circles"] = (_standardise(Xc), yc)
    return sets


def ld_likelihood_space(outdir: Path, seed: int) -> list[Path]:
    """LD Fig. 2: the samples in input space (a) and mapped to (B(x, C_1), B(x, C_2))
    (eq. (9)) at the width LD-C1 chooses (b), for two non-linearly separable 2-D sets."""
    from matplotlib.figure import Figure

    from svmtune.criteria.likelihood import likelihood_map
    from svmtune.methods.ld import LDC1

    sets = _two_d_sets(seed)
    names = ["two circles", "banana (500 of 5300)"]
    fig = Figure(figsize=(8, 4 * len(names)), dpi=90)
    axes = fig.subplots(len(names), 2)
    for row, name in zip(axes, names):
        X, y = sets[name]
        sigma = LDC1().select(X, y, random_state=seed).params["sigma"]
        B = likelihood_map(X, y, sigma)
        for c, col in ((0, "tab:blue"), (1, "tab:red")):
            row[0].plot(*X[y == c].T, ".", ms=3, color=col)
            row[1].plot(B[y == c, 0], B[y == c, 1], ".", ms=3, color=col)
        row[0].set_title(f"{name}: input space", fontsize=9)
        row[1].set_title(f"likelihood space, sigma = {sigma:.3g} (LD)", fontsize=9)
        row[1].set_xlabel("B(x, C1)")
        row[1].set_ylabel("B(x, C2)")
    fig.tight_layout()
    path = Path(outdir) / "ld_fig2b_likelihood_space.png"
    fig.savefig(path)
    return [path]


def ld_objective_curve(outdir: Path, seed: int) -> list[Path]:
    """LD Fig. 4: the objective D (eq. (13)) against log2 sigma for two spirals, with the
    points the LD width search evaluated (coarse scan + golden section) marked."""
    from matplotlib.figure import Figure

    from svmtune.criteria.likelihood import ld_curve
    from svmtune.methods.ld import LDC1

    X, y = _two_d_sets(seed)["two spirals"]
    x = np.linspace(*LD_LOG2_RANGE, DENSE_POINTS)
    D = ld_curve(X, y, 2.0**x)
    sel = LDC1().select(X, y, random_state=seed)
    pts = [(h["log2_sigma"], h["ld"]) for h in sel.history if h.get("stage") == "sigma"]
    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.subplots()
    ax.plot(x, D, "-", color="black", lw=1, label="D (dense scan)")
    ax.plot(*np.array(pts).T, "o", ms=4, mfc="none", color="tab:red", label="search evaluations")
    ax.axvline(np.log2(sel.params["sigma"]), color="tab:red", lw=0.8, ls="--")
    ax.set_xlabel("log2 sigma")
    ax.set_ylabel("D(V1, V2)")
    ax.set_title(f"LD Fig. 4: two spirals (n = {len(y)}), {len(pts)} evaluations", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path = Path(outdir) / "ld_fig4_objective_spirals.png"
    fig.savefig(path)
    return [path]


def ld_decision_boundaries(outdir: Path, seed: int) -> list[Path]:
    """LD Fig. 5: decision boundaries of the LD-C1 SVM (sigma by LD, C = 1) on four 2-D sets;
    support vectors circled."""
    from matplotlib.figure import Figure

    from svmtune.tuner import SVMTuner

    sets = _two_d_sets(seed)
    fig = Figure(figsize=(4 * len(sets), 4), dpi=90)
    axes = np.atleast_1d(fig.subplots(1, len(sets)))
    for ax, (name, (X, y)) in zip(axes, sets.items()):
        tuner = SVMTuner(method="ld_c1", preprocess="none", random_state=seed).fit(X, y)
        lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
        g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], 200), np.linspace(lo[1], hi[1], 200))
        G = np.c_[g0.ravel(), g1.ravel()]
        f = tuner.decision_function(G).reshape(g0.shape)
        ax.contourf(g0, g1, f, levels=20, cmap="RdBu_r", alpha=0.35)
        ax.contour(g0, g1, f, levels=[-1, 0, 1], colors="k", linestyles=["--", "-", "--"])
        for c, col in ((0, "tab:blue"), (1, "tab:red")):
            ax.plot(*X[y == c].T, ".", ms=3, color=col)
        est = getattr(tuner, "estimator_", None)
        sv = getattr(est, "support_vectors_", None)
        if sv is not None:
            ax.plot(*sv.T, "o", ms=5, mfc="none", mec="k", mew=0.5)
        acc = float(np.mean(tuner.predict(X) == y))
        ax.set_title(
            f"{name}: sigma = {tuner.best_params_['sigma']:.3g}, C = 1, train acc {acc:.3f}",
            fontsize=8,
        )
    fig.tight_layout()
    path = Path(outdir) / "ld_fig5_decision_boundaries.png"
    fig.savefig(path)
    return [path]


def ld_golden_vs_dense(outdir: Path, seed: int) -> list[Path]:
    """Acceptance check: the LD width search (coarse scan + golden section, LD-C1's
    defaults) against the argmax of a dense 1000-point scan of log2 sigma over the same range,
    on the whole preprocessed data of each Table 1 set.  Reports the two widths, the objective
    at each, the number of interior local maxima of the dense curve (multimodality) and the
    search's evaluation count; plots every curve with both widths."""
    from matplotlib.figure import Figure

    from svmtune.criteria.likelihood import ld_curve
    from svmtune.methods.ld import LDC1

    x = np.linspace(*LD_LOG2_RANGE, DENSE_POINTS)
    step = float(x[1] - x[0])
    sel_proto = LDC1()
    rows = []
    fig = Figure(figsize=(16, 12), dpi=60)
    axes = fig.subplots(4, 5).ravel()
    for ax, task in zip(axes, TASKS):
        X, y = H.standardised_task_data(task)
        scheme = task.tuner_params.get("multiclass", "ovr")
        D = ld_curve(X, y, 2.0**x, reduce=sel_proto.multiclass, scheme=scheme)
        with H.Stopwatch() as sw:
            sel = LDC1().select(X, y, random_state=seed, multiclass=scheme)
        xg = float(np.log2(sel.params["sigma"]))
        xd = float(x[int(np.argmax(D))])
        Dg = float(ld_curve(X, y, [2.0**xg], reduce=sel_proto.multiclass, scheme=scheme)[0])
        n_max = H.count_local_maxima(D)
        agree = abs(xg - xd) <= max(sel_proto.sigma_xtol, step)
        rows.append(
            {
                "task": task.name,
                "n": X.shape[0],
                "log2_sigma_golden": xg,
                "log2_sigma_dense": xd,
                "abs_diff_log2": abs(xg - xd),
                "tolerance_log2": max(sel_proto.sigma_xtol, step),
                "D_golden": Dg,
                "D_dense_max": float(D.max()),
                "rel_gap": float((D.max() - Dg) / D.max()) if D.max() > 0 else 0.0,
                "dense_local_maxima": n_max,
                "n_objective_evals": int(sel.info["n_objective_evals"]),
                "search_seconds": sw.seconds,
                "agree": "yes" if agree else ("no (multimodal)" if n_max > 1 else "no"),
            }
        )
        ax.plot(x, D, "-", color="black", lw=1)
        ax.axvline(xd, color="tab:blue", lw=0.8)
        ax.axvline(xg, color="tab:red", lw=0.8, ls="--")
        ax.set_title(f"{task.name} ({n_max} local max)", fontsize=8)
        ax.tick_params(labelsize=6)
    for ax in axes[len(TASKS) :]:
        ax.set_visible(False)
    fig.suptitle("LD objective vs log2 sigma (blue: dense argmax, red dashed: golden section)")
    fig.subplots_adjust(left=0.04, right=0.99, bottom=0.04, top=0.93, wspace=0.2, hspace=0.3)
    out = Path(outdir)
    png = out / "ld_golden_vs_dense.png"
    fig.savefig(png)
    return [H.write_csv(out / "ld_golden_vs_dense.csv", rows), png]


SUITE = Suite(
    name="ld-paper",
    description=(
        "LD paper (Menezes, Torres & Braga 2019) Sec. 5: the 18 data sets of Table 1, 10-fold "
        "CV accuracy of CV-CV (the paper's CV grid, the yardstick), LD-C1, LD-CV and SVC(); "
        "glass and segmentation are kept multiclass (one-vs-one SVMs, as SVC()), unlike the "
        "paper's unspecified one-vs-all binary tasks."
    ),
    tasks=TASKS,
    methods=METHODS,
    protocol=Protocol(kind="kfold", n_splits=10),
    seed=0,
    published=PUBLISHED,
    figures=[ld_tables],
    experiments=[
        ld_golden_vs_dense,
        ld_likelihood_space,
        ld_objective_curve,
        ld_decision_boundaries,
    ],
    yardsticks={"grid": "CV-CV", "default": "default"},
)
