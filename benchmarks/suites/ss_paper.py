"""The ss-paper suite: S&S-RB against grid-search CV (Shamsi & Beheshti, "S&S ratio").

Reproduces, on the paper's data sets that svmtune bundles (MANIFEST.md, papers column E):

* **Table 2**: F1 and run time of 5-fold grid-search CV with F1 scoring ("CV (F1)") and with
  hinge-loss scoring ("CV (Hinge)") against S&S-RB ("S&S-RB", method ``"ss"`` with its
  defaults: directional spread, LOO estimates, regenerated C_opt table).  Three more S&S-RB
  rows are cheap variants ("S&S-RB iso": isotropic spread; "S&S-RB paper": the paper's
  in-sample estimates and its printed C_opt curve without the ``1/d^2`` rescaling, and no
  width discarded for repeated rows; "S&S-RB balanced", beyond the paper: the default
  with ``SVMTuner(class_weight="balanced")``, every class weighted ``n / (k n_c)`` in the
  S&S statistics and the SVM fit, for the F1 of a minority class), plus the yardsticks
  (default SVC, 10-fold grid search).
* **Table 1** (``d``, ``sigma``, ``S&S_min`` per data set) as an experiment
  (:func:`_ss_experiments.table1_experiment`) computed by the pure
  functions of :mod:`svmtune.criteria.ss_core`, both spread variants, paper beside ours.
* **Fig. 11** (F1 against S&S) as a PNG from the S&S-RB result rows
  (:func:`fig11_f1_vs_ss`), the paper's Table 1/Table 2 points beside ours.
* The spread-variant study (which of directional / isotropic predicts C_opt better), an
  experiment (:func:`_ss_experiments.spread_copt_experiment`).

Protocol: the paper does not say how its F1 was measured; here 5-fold stratified CV (one row
per fold and method), the grid searches run an inner 5-fold CV on the training part.

Differences from the paper (deliberate, documented):

* The paper's grid search also ranges over kernels (RBF, polynomial, sigmoid); ours is RBF
  only, log2 sigma and log2 C in [-8, 8] with step 2 (81 candidates, 405 SVM fits at 5
  folds), as in the quick suite, to fit this machine.  S&S-RB searches RBF widths (its
  default); the grid's smaller grid favours no method in particular.
* Not bundled: mnist_784 (only MNIST digit pairs are), so it has no task.
* ``penbased_1(5,8,9)`` is read as KEEL's penbased restricted to the digits 5, 8 and 9
  (``Task.classes``): 3 x 1055 = 3165 rows of 16 features, the size Table 1 prints.  Every
  method reaches 99.5-100 % F1 there, where Table 2 prints 81.2-81.5 %, so the paper's set
  (or its scoring) may differ in more than its size shows.
* "adult" (48842 rows in the paper) uses ``adult_train`` subsampled to 10000 rows and
  "eeg-eye-state" is subsampled to 5000 rows (stratified, suite seed): a single grid-search
  cell on the full sets costs hours of CPU here.  Everything else is used whole.
* Table 2's "diabetes" is Table 1's "pima" (same 768 x 8 set); the task is named "diabetes".
* The multiclass tasks (balance, breast tissue, hayes-roth, iris, newthyroid,
  penbased_1(5,8,9), tae, waveform-5000) fit one-vs-one SVMs for every method
  (``Task.tuner_params={"multiclass": "ovo"}``), as ``SVC()`` does and as S&S's
  worst-class-pair rule (eq. (31)) reads the problem: with one-vs-rest the final fit alone
  (k binary SVMs on all samples) costs 3-4 ``SVC()`` fits on iris, which would compare
  decompositions, not selectors.  "CV (Hinge)" then scores each pairwise decision function
  on its two classes (:func:`svmtune.search.cv.fold_error`).  The paper does not say how it
  scored hinge loss for several classes.
* F1 is the runner's: binary tasks the F1 of the second label in sorted order (e.g. the
  minority class of appendicitis), multiclass tasks macro-F1.  The paper does not say which
  F1 it prints; its values are closer to accuracy on several sets, and no one choice of
  positive class comes near all its binary sets (ilpd's 86-88 are nearest the F1 of the
  majority class, 77-83 here; spambase's and banana's are the second label's; see
  ``benchmarks/ss_f1_definitions.md``).  Because the choice of positive class decides issue
  #8's F1 line on ilpd, the suite also runs "CV (macro F1)" (beyond the paper): the grid
  search of "CV (F1)" scoring macro-F1, which singles out no class, on the binary tasks (on
  multiclass tasks it is "CV (F1)"); the acceptance table also compares the macro-F1 of
  S&S-RB and its variants (from the stored confusion matrices) with it.
* "time" is our ``selection_time`` (seconds; S&S-RB: the S&S computation only, the final SVM
  fit is in ``final_fit_time``); the paper's run time includes the final fit.
* Table 1 as printed has ``d`` equal to the S&S column for balance, banana, bands and
  banknote (a negative ``d`` for balance and banana): those four ``d`` values are
  transcription/typesetting errors of the paper; :data:`TABLE1` keeps them as printed and
  :func:`paper_d_implied` gives ``d = 6 sigma 10^(S&S/20)`` from the other two columns.
  Table 1's "breast tissue" has 4 classes (ours, the UCI file, has 6), and its sizes for
  balance (525), hepatitis (80) and banana (5302) differ from our files (625, 155, 5300).
* hayes-roth has 160 rows but only 84 distinct feature vectors (4 ordinal features).
  Repeated rows keep kernel value 1 at every width while distinct rows stop being similar as
  the width shrinks, so the directional, LOO S&S keeps rising down to the smallest candidate
  width.  Before its repeat rule S&S-RB chose sigma = 0.25 on 4 of 5 folds (S&S -10.7 to
  -16.1 dB against Table 1's S&S_min of -1.75) and its F1 was about 32 points below CV's.
  S&S-RB's default now discards the widths at which exact repeats carry at least half of the
  within-class similarity (``max_repeat_share=0.5``): it chooses sigma = 0.71 on every fold,
  and its mean F1 (78.2) is 2.7 points below CV (F1)'s (80.8) on the same folds (stored
  run).  "S&S-RB iso" chooses widths 1.4-32 there (F1 82.7).
* Table 1 values are not ``published`` entries (the report knows no ``d``/``sigma``/``S&S``
  metric); they are printed beside ours by the Table 1 experiment.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from svmtune.bench.suite import MethodSpec, Protocol, Suite, Task

from ._paper_tables import paper_table
from ._ss_experiments import spread_copt_experiment, table1_experiment

__all__ = [
    "SUITE",
    "TABLE1",
    "TABLE2",
    "TASKS",
    "METHODS",
    "PUBLISHED",
    "paper_d_implied",
    "fig11_f1_vs_ss",
    "time_ratio_table",
]

#: the shared coarse grid of both grid searches (log2 units)
_GRID = {"log2_sigma": (-8.0, 8.0, 2.0), "log2_C": (-8.0, 8.0, 2.0)}

#: Table 1 as printed (paper_tables/ss_paper.json): task -> (d, sigma, S&S_min).  Task names
#: are ours (Table 2's names; "diabetes" is printed as "pima")
TABLE1: dict[str, tuple[float, float, float]] = paper_table("ss_paper", "1")

#: Table 2 as printed: task -> (F1: CV (F1), CV (Hinge), S&S-RB; time s: same order)
TABLE2: dict[str, tuple[float, float, float, float, float, float]] = paper_table("ss_paper", "2")

#: one-vs-one final SVMs for the multiclass tasks (see the module docstring)
_OVO = {"multiclass": "ovo"}

#: Table 2 data sets we have, smallest first (cheapest cells first)
TASKS: list[Task] = [
    Task("appendicitis", "appendicitis"),
    Task("breast tissue", "breast_tissue", tuner_params=_OVO),
    Task("iris", "iris", tuner_params=_OVO),
    Task("tae", "tae", tuner_params=_OVO),
    Task("hepatitis", "hepatitis"),
    Task("hayes-roth", "hayes_roth", tuner_params=_OVO),
    Task("newthyroid", "new_thyroid", tuner_params=_OVO),
    Task("heart", "heart_statlog"),
    Task("haberman", "haberman"),
    Task("bands", "bands"),
    Task("ilpd", "ilpd"),
    Task("balance", "balance_scale", tuner_params=_OVO),
    Task("australian", "australian"),
    Task("diabetes", "pima"),
    Task("mammographic", "mammographic"),
    Task("banknote authentication", "banknote"),
    Task("penbased_1(5,8,9)", "penbased", classes=(5, 8, 9), tuner_params=_OVO),
    Task("spambase", "spambase"),
    Task("waveform-5000", "waveform_5000", tuner_params=_OVO),
    Task("banana", "banana"),
    Task("eeg-eye-state", "eeg_eye_state", subsample=5000),
    Task("adult", "adult_train", subsample=10000),
]

#: beyond the paper: S&S-RB with classes weighted n / (k n_c) (SVMTuner's class_weight)
BALANCED_LABEL = "S&S-RB balanced"
#: beyond the paper: the grid search of "CV (F1)" scoring macro-F1 (the mean F1 of every
#: class) on binary tasks too; on multiclass tasks it is "CV (F1)" (the same scoring, folds
#: and seeds), so it runs on the binary tasks only
MACRO_LABEL = "CV (macro F1)"

METHODS: list[MethodSpec] = [
    MethodSpec("default", "default"),
    MethodSpec("S&S-RB", "ss"),
    MethodSpec("S&S-RB iso", "ss", {"spread": "isotropic"}),
    MethodSpec(
        "S&S-RB paper",
        "ss",
        {"estimator": "plain", "curve": "paper", "rescale": False, "max_repeat_share": None},
    ),
    MethodSpec(BALANCED_LABEL, "ss", tuner_params={"class_weight": "balanced"}),
    MethodSpec("CV (F1)", "grid", {**_GRID, "n_splits": 5, "scoring": "f1"}),
    MethodSpec("CV (Hinge)", "grid", {**_GRID, "n_splits": 5, "scoring": "hinge"}),
    MethodSpec("grid-10fold", "grid", {**_GRID, "n_splits": 10}),
    MethodSpec(MACRO_LABEL, "grid", {**_GRID, "n_splits": 5, "scoring": "f1_macro"}),
]

_LABELS = ("CV (F1)", "CV (Hinge)", "S&S-RB")
_TASK_NAMES = {t.name for t in TASKS}

#: Table 2 entries of the tasks we have: F1 (percent) and time (seconds)
PUBLISHED: list[dict] = [
    {"table": "2", "task": task, "method": label, "metric": metric, "value": float(v[i + off])}
    for task, v in TABLE2.items()
    if task in _TASK_NAMES
    for off, metric in ((0, "f1"), (3, "time"))
    for i, label in enumerate(_LABELS)
]


def paper_d_implied(sigma: float, ss: float, alpha: float = 6.0) -> float:
    """``d = alpha sigma 10^(S&S / 20)``: Table 1's ``d`` implied by its ``sigma`` and S&S
    (S&S ratio eq. (9) solved for ``d``)."""
    return float(alpha * sigma * 10.0 ** (ss / 20.0))


def fig11_f1_vs_ss(results: pd.DataFrame, outdir: Path) -> list[Path]:
    """Fig. 11: F1 of S&S-RB against S&S per data set (ours: mean over splits of the test F1
    and of the selected kernel's S&S, ``criterion``), with the paper's points (Table 1 S&S,
    Table 2 S&S-RB F1).  Writes a PNG and the plotted values as CSV."""
    from matplotlib.figure import Figure

    if results.empty or "method" not in results:
        return []
    ok = results[(results["status"] == "ok") & (results["method"] == "S&S-RB")]
    if ok.empty or "criterion" not in ok or "f1" not in ok:
        return []
    ours = (
        ok.groupby("task")[["criterion", "f1"]]
        .mean()
        .rename(columns={"criterion": "ss", "f1": "f1"})
        .assign(f1=lambda t: 100.0 * t["f1"])
    )
    ours = ours[np.isfinite(ours["ss"])]
    paper = pd.DataFrame(
        {t: {"ss": TABLE1[t][2], "f1": TABLE2[t][2]} for t in TABLE2 if t in TABLE1}
    ).T
    fig = Figure(figsize=(6.4, 4.6), dpi=110)
    ax = fig.subplots()
    ax.plot(paper["ss"], paper["f1"], "s", color="tab:gray", alpha=0.6, label="paper")
    ax.plot(ours["ss"], ours["f1"], "o", color="tab:blue", label="svmtune S&S-RB")
    for t, r in ours.iterrows():
        ax.annotate(
            str(t), (r["ss"], r["f1"]), fontsize=6, xytext=(2, 2), textcoords="offset points"
        )
    if len(ours) >= 3:
        rho = ours[["ss", "f1"]].corr(method="spearman").iloc[0, 1]
        ax.set_title(f"Fig. 11: F1 vs S&S (ours: Spearman rho = {rho:.2f}, {len(ours)} sets)")
    else:
        ax.set_title("Fig. 11: F1 vs S&S")
    ax.set_xlabel("S&S (dB)")
    ax.set_ylabel("F1 (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    outdir = Path(outdir)
    png = outdir / "ss_fig11_f1_vs_ss.png"
    fig.savefig(png)
    csv = outdir / "ss_fig11_f1_vs_ss.csv"
    pd.concat({"ours": ours, "paper": paper}, names=["source", "task"]).to_csv(csv)
    return [png, csv]


#: the grid searches S&S-RB is compared with: Table 2's two and the 10-fold yardstick
_CV_LABELS = ("CV (F1)", "CV (Hinge)", "grid-10fold")
#: the method the acceptance criteria are about, and the variants (label: what it is) given the
#: same numbers
ISSUE_LABEL = "S&S-RB"
VARIANTS = {BALANCED_LABEL: "S&S-RB with SVMTuner(class_weight='balanced')"}
#: acceptance check: S&S-RB's F1 at most this many points below grid-search CV on average
F1_MARGIN = 2.0
#: acceptance check: S&S-RB's total time (S&S + one SVM fit) in units of one SVC() fit
MAX_SVC_FITS = 5.0


def macro_f1_from_confusion(confusion) -> float:
    """Macro-F1 of a confusion matrix (rows: true class, columns: predicted): the mean over
    classes of ``2 TP / (2 TP + FP + FN)``, 0 for a class never true nor predicted (as
    scikit-learn's ``f1_score(average="macro", zero_division=0)`` over the same labels)."""
    c = np.asarray(confusion, dtype=float)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
        raise ValueError(f"confusion must be a square matrix of >= 2 classes, got {c.shape}")
    tp = np.diag(c)
    denom = c.sum(axis=0) + c.sum(axis=1)  # 2 TP + FP + FN
    return float(np.mean(np.divide(2.0 * tp, denom, out=np.zeros_like(tp), where=denom > 0)))


def _macro_f1_column(ok: pd.DataFrame) -> pd.Series:
    """Each row's macro-F1: binary tasks from the stored confusion matrix (NaN for rows
    written before it was stored), multiclass tasks the stored ``f1`` (macro already)."""
    binary = ok["n_classes"] == 2
    out = ok["f1"].where(~binary)
    if "confusion" in ok:
        conf = ok.loc[binary, "confusion"]
        has = conf.map(lambda c: isinstance(c, list))
        out.loc[has[has].index] = conf[has].map(macro_f1_from_confusion)
    return out.astype(float)


def _macro_cv_rows(ok: pd.DataFrame) -> pd.DataFrame:
    """The macro-F1 grid search's rows: ``MACRO_LABEL`` on binary tasks, "CV (F1)" on
    multiclass tasks (the same scoring, folds and seeds there, see ``MACRO_LABEL``)."""
    binary = ok["n_classes"] == 2
    macro = ok["method"] == MACRO_LABEL
    return ok[(macro & binary) | ((ok["method"] == "CV (F1)") & ~binary)]


def time_ratio_table(results: pd.DataFrame, outdir: Path) -> list[Path]:
    """Acceptance check per task, and its summary.

    Per task: S&S-RB total time (selection + final fit) in units of one default SVC fit on
    the same fold (mean and max over folds), mean F1 of S&S-RB, CV (F1), CV (Hinge), the
    10-fold grid and the default SVC, the differences S&S-RB - CV in F1 points for each of
    the three grid searches **over the folds both ran** (with their number), and the
    total-time ratios CV / S&S-RB on those folds (selection + final fit for both, as the
    paper's run times).

    Writes ``ss_acceptance.csv`` and ``ss_acceptance.md``: the mean of the F1 differences over
    the tasks where both ran (criterion: at least ``-F1_MARGIN``) and whether the mean time
    of S&S-RB is at most ``MAX_SVC_FITS`` SVC fits on every task; the same columns and lines
    for the variants in ``VARIANTS`` (beyond the paper: shown, not the criterion).
    """
    need = {"selection_time", "final_fit_time", "default_fit_time", "f1", "split"}
    if results.empty or not need <= set(results.columns):
        return []
    ok = results[results["status"] == "ok"].copy()
    if ok.empty:
        return []
    ok["total_time"] = ok["selection_time"] + ok["final_fit_time"]
    ok["time_in_svc_fits"] = ok["total_time"] / ok["default_fit_time"]
    if "n_classes" in ok:
        ok["f1_macro"] = _macro_f1_column(ok)
    f1 = 100.0 * ok.pivot_table(index="task", columns="method", values="f1", aggfunc="mean")
    table = pd.DataFrame(index=f1.index)
    for m in ("S&S-RB", "CV (F1)", "CV (Hinge)", "grid-10fold", "default"):
        if m in f1:
            table[f"F1 {m}"] = f1[m]
    for label in (ISSUE_LABEL, *VARIANTS):
        ss_rows = ok[ok["method"] == label][["task", "split", "f1", "total_time"]]
        if ss_rows.empty:
            continue
        if label != ISSUE_LABEL:
            table[f"F1 {label}"] = f1[label]
        for m in _CV_LABELS:
            cv_rows = ok[ok["method"] == m][["task", "split", "f1", "total_time"]]
            pair = ss_rows.merge(cv_rows, on=["task", "split"], suffixes=("_ss", "_cv"))
            if pair.empty:
                continue
            g = pair.groupby("task")
            table[f"{label} - {m}"] = 100.0 * (g["f1_ss"].mean() - g["f1_cv"].mean())
            table[f"folds {label} & {m}"] = g.size()
            table[f"time {m} / {label}"] = g["total_time_cv"].mean() / g["total_time_ss"].mean()
        if "f1_macro" in ok:
            _macro_columns(table, ok.dropna(subset=["f1_macro"]), label)
        fits = ok[ok["method"] == label].groupby("task")["time_in_svc_fits"]
        table[f"{label} time / SVC fit (max over splits)"] = fits.max()
        table[f"{label} time / SVC fit (mean)"] = fits.mean()
    outdir = Path(outdir)
    path = outdir / "ss_acceptance.csv"
    table.to_csv(path)
    md = outdir / "ss_acceptance.md"
    md.write_text("\n".join(_acceptance_lines(table)) + "\n")
    return [md, path]


def _macro_columns(table: pd.DataFrame, ok: pd.DataFrame, label: str) -> None:
    """From the rows ``ok`` that have a macro-F1 (``f1_macro``), add to ``table`` ``label``'s
    macro-F1 and its difference to the macro-F1 grid search on the same folds: the F1
    line with no class singled out as positive."""
    cols = ["task", "split", "f1_macro"]
    ss_rows = ok[ok["method"] == label][cols]
    pair = ss_rows.merge(_macro_cv_rows(ok)[cols], on=["task", "split"], suffixes=("_ss", "_cv"))
    if pair.empty:
        return
    g = pair.groupby("task")
    ss, cv = 100.0 * g["f1_macro_ss"].mean(), 100.0 * g["f1_macro_cv"].mean()
    table[f"macro F1 {label}"] = ss
    if f"macro F1 {MACRO_LABEL}" not in table:
        table[f"macro F1 {MACRO_LABEL}"] = cv
    table[f"{label} - {MACRO_LABEL} (macro F1)"] = ss - cv
    table[f"folds {label} & {MACRO_LABEL}"] = g.size()


def _acceptance_lines(table: pd.DataFrame) -> list[str]:
    """The markdown summary of :func:`time_ratio_table`'s table: the criteria for
    S&S-RB, then the same numbers for the variants beyond the paper (not the issue's)."""
    lines = ["### Acceptance check: S&S-RB against grid-search CV, same folds", ""]
    lines += _criteria_lines(table, ISSUE_LABEL)
    for label, note in VARIANTS.items():
        if f"{label} time / SVC fit (mean)" in table:
            lines += [
                "",
                f"The same for {label!r}, beyond the paper ({note}):",
                "",
                *_criteria_lines(table, label),
            ]
    return lines + [""]


def _difference_line(table: pd.DataFrame, what: str, diff: str, folds: str, note: str = "") -> str:
    """One line of the F1 criterion: the mean over tasks of ``table[diff]`` (S&S-RB minus a
    grid search, in points) with its fold count, verdict, median and three lowest tasks."""
    d = table[diff].dropna()
    n_folds = int(table[folds].dropna().astype(int).sum())
    worst = d.sort_values().head(3)
    return (
        f"- {what}, mean over the {len(d)} tasks where both ran ({n_folds} shared folds"
        f"{note}): {d.mean():+.2f} points (at least −{F1_MARGIN:g}: "
        f"{'yes' if d.mean() >= -F1_MARGIN else 'NO'}); median {d.median():+.2f}; lowest: "
        + ", ".join(f"{t} {v:+.2f}" for t, v in worst.items())
        + "."
    )


def _criteria_lines(table: pd.DataFrame, label: str) -> list[str]:
    lines = []
    for m in _CV_LABELS:
        col = f"{label} - {m}"
        if col not in table:
            lines.append(f"- F1 against {m}: no task where both ran.")
            continue
        lines.append(_difference_line(table, f"F1 of {label} − {m}", col, f"folds {label} & {m}"))
    col = f"{label} - {MACRO_LABEL} (macro F1)"
    if col in table:
        what = (
            f"Macro-F1 (every class, none singled out as positive; beyond the paper) of "
            f"{label} − {MACRO_LABEL}"
        )
        note = f"; on multiclass tasks {MACRO_LABEL} is CV (F1)"
        lines.append(_difference_line(table, what, col, f"folds {label} & {MACRO_LABEL}", note))
    mean_fits = table[f"{label} time / SVC fit (mean)"].dropna()
    max_fits = table[f"{label} time / SVC fit (max over splits)"].dropna()
    over_mean = mean_fits[mean_fits > MAX_SVC_FITS]
    over_max = max_fits[max_fits > MAX_SVC_FITS]
    if len(mean_fits):
        lines.append(
            f"- {label} total time (S&S + one SVM fit) in SVC() fits, mean over folds: at "
            f"most {MAX_SVC_FITS:g} on every one of {len(mean_fits)} tasks: "
            f"{'yes' if over_mean.empty else 'NO'} (largest {mean_fits.max():.2f}, "
            f"{mean_fits.idxmax()}); single folds above {MAX_SVC_FITS:g}: "
            + (
                ", ".join(f"{t} (max {v:.2f})" for t, v in over_max.items())
                if len(over_max)
                else "none"
            )
            + "."
        )
    return lines


SUITE = Suite(
    name="ss-paper",
    description=(
        "S&S ratio paper (Shamsi & Beheshti): Table 2 (F1 and time of 5-fold grid-search CV "
        "with F1 / hinge scoring vs S&S-RB) on the 22 of its 23 data sets svmtune bundles, "
        "5-fold stratified CV; grid 9 x 9 log2 (step 2) over [2^-8, 2^8]; Table 1 (d, sigma, "
        "S&S) and the spread-variant C_opt study as experiments; Fig. 11 (F1 vs S&S). "
        "Beyond the paper: 'CV (macro F1)', the CV (F1) grid scoring macro-F1, on the binary "
        "tasks only ('not run' on the multiclass tasks, where it is CV (F1))."
    ),
    tasks=TASKS,
    methods=METHODS,
    protocol=Protocol(kind="kfold", n_splits=5),
    seed=0,
    published=PUBLISHED,
    figures=[fig11_f1_vs_ss, time_ratio_table],
    experiments=[
        table1_experiment(TASKS, TABLE1),
        spread_copt_experiment(TASKS),
    ],
    yardsticks={"grid": "grid-10fold", "default": "default"},
)
