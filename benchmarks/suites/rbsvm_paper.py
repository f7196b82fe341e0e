"""The ``rbsvm-paper`` suite: Peng et al., "Regression-based hyperparameter learning for
support vector machines" (RBSVM, IEEE TNNLS 2023), Tables II-VI and Fig. 4.

Tasks: the 20 binary tasks of the paper's Tables II-V (Table I lists the data sets), mapped to
the bundled data (``datasets/data/MANIFEST.md``, papers column "A"):

=============  =====================================  =======================================
task           bundled data                           notes
=============  =====================================  =======================================
breast-cancer  breast_cancer (286 x 9)                categorical, 9 missing cells
spect-heart    spect (267 x 22)                       SPECT train + test concatenated
hepatitis      hepatitis (155 x 19)                   167 missing cells
diabetes       pima (768 x 8)                         Table I "diabetis"
thyroid        new_thyroid, positive = "normal"       Table I: 215 x 5, 2 classes = normal vs
                                                      hyper + hypo (IDA's binary thyroid)
monks-1..3     monks_1, monks_2, monks_3 (432 x 6)    see below
tic-tac-toe    tic_tac_toe (958 x 9)                  categorical
adult          adult_train, stratified subsample of   Table I: 1213 x 14; the paper's
               1213 rows (suite seed)                 subsample itself is not available
crx            crx (690 x 15)                         categorical, 67 missing cells
cmc            cmc, positive = 1 ("no use")           Table I: 2 classes; the paper does not
                                                      say how the 3 classes were made 2: we
                                                      take no-use vs use (long + short term)
twonorm        twonorm (7400 x 20)                    the CV searches are too costly here
balance-1..3   balance_scale, positive = L / B / R    one-vs-rest, the UCI class order L, B, R
german         german (1000 x 20)                     categorical (UCI Statlog, 20 attrs)
australian     australian (690 x 14)                  in Tables II-V but not in Table I
ijcnn1         ijcnn1_train (49990 x 22)              ``options["large"]``: the exact n x n
                                                      methods do not fit; the low-rank ones
                                                      and ``SVC()`` run
skin-nonskin   skin_nonskin, stratified subsample of  Table I: 10000 x 3
               10000 rows (suite seed)
=============  =====================================  =======================================

Monks: the paper describes "monks" as one 432-sample, 3-class set split one-vs-rest into
monks-1..3.  The UCI MONK's problems are three separate binary problems over the same 432
attribute combinations; we use each problem's full 432-sample set (``monks_k``, the UCI
``.test`` files with noise-free labels), which matches Table I's 432 x 6.  Table I also lists
banana (5300 x 2), which has no results in Tables II-V: it is left out.  No Table I data set is
missing from the bundle.

Protocol: stratified 10-fold CV (Table III reports the mean and std over the 10 folds).
Methods (labels as the paper's columns): RBSVM, SpanSVM, RMSVM (defaults: log2 sigma, log2 C in
[-8, 8]), GridSearch (10-fold CV, log2 sigma and log2 C in [-8, 8] step 1: 17 x 17 = 289
candidates; the paper counts 256), RandomSearch and BayesSearch (hyperopt TPE) with 256
candidates each -- the paper's Fig. 4 budget; Table III does not state one -- drawn uniformly
on [2^-8, 2^8] as in the paper, scored by 10-fold CV, plus scikit-learn's ``SVC()`` defaults.
Every method is scored on the same outer folds; model entropy (Table V) is computed by the
runner for every method's chosen hyperparameters.  "RBSVM (libsvm refit)" is RBSVM's selection
with the hinge-loss final model (``final_model="l1"``), beside the paper's L2-SVM.  "RBSVM (open
C)" is RBSVM with log2 C in [-8, 20] instead of the library's default [-8, 8]: the paper's
gradient search is not held to the grid's range (its Table II has RBSVM's C at 481-927 on
monks-2, monks-3 and balance-1..3, and its Sec. IV-B names the grid's limited range as one
reason for the grid's lower accuracy); 2^20 is only a numerical guard (near hard margin on
standardised data).  "RBSVM (eq. 27 at non-SVs)" minimises the paper's J with eq. (27) read
literally at the non-support vectors: their LOO output is taken as the label ``y_i`` (what
eq. (27) gives with ``alpha_i = 0``) instead of the model's exact output ``f(x_i)``
(``nonsupport="label"``; the paper does not say which it computed).  Each variant gets its own
line in the acceptance section.
"GridSearch (L2-SVM)", "RandomSearch (L2-SVM)" and "BayesSearch (L2-SVM)" are the three
searches with the L2-SVM in every CV fit and as the final model (``final_model="l2"``): the
paper's searches trained the L2-SVM (Sec. IV-C: "all the SVM solving algorithms in the
hyperparameter learning algorithms use L2-SVM"), while GridSearch, RandomSearch and
BayesSearch train libsvm's hinge-loss SVC.  The report compares RBSVM with each in a section
of its own, beside the libsvm search and the paper's Tables III and IV.
"SVC() (Platt)" is ``SVC()`` with scikit-learn's Platt scaling (``probability="platt"``): the
yardstick of the report's probability section, which compares the test log-loss and Brier
score of RBSVM's tanh probabilities with it (the paper reports no probabilities);
"RBSVM (libsvm refit + Platt)" is the libsvm refit with Platt scaling, the same SVM as "RBSVM
(libsvm refit)" with the other mapping.
"RBSVM (low-rank)", "SpanSVM (low-rank)" and "RMSVM (low-rank)" are the same searches on a
Nystroem kernel (:mod:`svmtune.methods._lowrank_search`, rank <= 500, libsvm refit); they run
where the exact methods' ``n x n`` matrices do not fit (ijcnn1), and the paper tables print
them in the RBSVM / SpanSVM / RMSVM columns there, named.  On twonorm and skin-nonskin they
run beside the exact methods, on the same folds, as a check of the approximation, and so does
"RBSVM (low-rank)" on the 17 smaller tasks.

What ran on this machine (the result file says so per cell; the report marks the rest "not
run"): every method on the 17 tasks up to n = 1,473 except SpanSVM and RMSVM (low-rank); on
twonorm and skin-nonskin the gradient methods, the RBSVM variants, ``SVC()`` (15-420 s per
selection on 6,660-9,000 training points) and GridSearch (all 10 outer folds, 25-27 CPU-min
per cell on skin-nonskin and 70-84 on twonorm, run over several sessions), not RandomSearch
and BayesSearch (2,560 SVM fits of those sizes per outer fold);
on ijcnn1 (44,991 training points per fold) the three low-rank gradient methods and
``SVC()``, with the model entropy on the Nystroem kernel
(:func:`svmtune.loo.entropy.l2_model_entropy`).

Published numbers: Table III (accuracy and std, %), Table V (entropy) and Tables IV / VI
(Wilcoxon, as ``task = "all tasks"`` entries) are in ``SUITE.published``; Table II (learned
sigma, C) is :data:`~_rbsvm_experiments.PAPER_TABLE_II`.  The suite
figure :func:`~_rbsvm_experiments.paper_tables` prints all of them beside
ours, with the acceptance check check (RBSVM vs GridSearch accuracy and selection-time
ratio per task on the same folds).  The experiment ``runtime_vs_n`` is Fig. 4 (run time vs n on
skin_nonskin subsamples 500..10000); :data:`FIG4_RUN_LIMITS` says which points run here
(after raising a limit, ``svmtune bench --suite rbsvm-paper --max-cells 0
--rerun-experiment runtime_vs_n`` runs the new points only; the points done are kept in its
CSV as they finish).
The experiment ``criterion_along_c`` (beyond the paper) follows RBSVM's criterion along C at
the learned width, from the closed form and from the exact leave-one-out outputs, beside the
test accuracies of the L2-SVM and of libsvm's SVC there; ``criterion_at_paper_point`` (beyond
the paper) evaluates the criterion at our learned point and at the paper's Table II point on
the same folds.
"""

from __future__ import annotations

from svmtune.bench.suite import MethodSpec, Suite

from ._rbsvm_experiments import (
    BAYES_L2_LABEL,
    GRID_L2_LABEL,
    LABEL_NONSV_LABEL,
    LARGE_TASKS,
    LOWRANK_LABEL,
    LOWRANK_RM_LABEL,
    LOWRANK_SPAN_LABEL,
    METHOD_LABELS,
    OPEN_C_LABEL,
    OPEN_C_LOG2_C,
    PLATT_LABEL,
    PROTOCOL,
    RANDOM_L2_LABEL,
    REFIT_LABEL,
    REFIT_PLATT_LABEL,
    SEED,
    SMALL_TASKS,
    TASK_SIZES,
    TASKS,
    CriterionAlongC,
    CriterionAtPaperPoint,
    RuntimeVsN,
    paper_tables,
    published_entries,
)

__all__ = [
    "SUITE",
    "TASKS",
    "METHODS",
    "TASK_SIZES",
    "SMALL_TASKS",
    "LARGE_TASKS",
    "FIG4_RUN_LIMITS",
    "runtime_vs_n",
    "criterion_along_c",
]

_BOX = {"log2_sigma": (-8.0, 8.0), "log2_C": (-8.0, 8.0)}
_GRID = {"log2_sigma": (-8.0, 8.0, 1.0), "log2_C": (-8.0, 8.0, 1.0), "n_splits": 10}
_RANDOM = {"n_iter": 256, "distribution": "uniform", "n_splits": 10, **_BOX}
_BAYES = {"max_evals": 256, "distribution": "uniform", "n_splits": 10, **_BOX}

METHODS: list[MethodSpec] = [
    MethodSpec("RBSVM", "rbsvm"),
    MethodSpec("SpanSVM", "span"),
    MethodSpec("RMSVM", "radius_margin"),
    MethodSpec("GridSearch", "grid", _GRID),
    MethodSpec("RandomSearch", "random", _RANDOM),
    MethodSpec("BayesSearch", "tpe", _BAYES),
    MethodSpec("default", "default"),
    # the paper's searches train the L2-SVM ("all the SVM solving algorithms in the
    # hyperparameter learning algorithms use L2-SVM", Sec. IV-C): the same three searches with
    # the L2-SVM in every CV fit and as the final model, beside their libsvm SVC versions
    MethodSpec(GRID_L2_LABEL, "grid", {**_GRID, "final_model": "l2"}),
    MethodSpec(RANDOM_L2_LABEL, "random", {**_RANDOM, "final_model": "l2"}),
    MethodSpec(BAYES_L2_LABEL, "tpe", {**_BAYES, "final_model": "l2"}),
    # the yardstick for RBSVM's tanh probabilities: SVC() with scikit-learn's Platt scaling
    MethodSpec(PLATT_LABEL, "default", tuner_params={"probability": "platt"}),
    # the same RBSVM selection with the libsvm (hinge-loss) refit the issue offers as an option
    MethodSpec(REFIT_LABEL, "rbsvm", {"final_model": "l1"}),
    # ... and its Platt-scaled probabilities (the same SVM; only the mapping differs)
    MethodSpec(REFIT_PLATT_LABEL, "rbsvm", {"final_model": "l1"}, {"probability": "platt"}),
    # the paper's gradient search is not held to the grid's range (its Table II has RBSVM's C
    # up to 927 > 2^8, and Sec. IV-B names the grid's limited range as a reason for its lower
    # accuracy): the same RBSVM with log2 C up to 20, the library default being [-8, 8]
    MethodSpec(OPEN_C_LABEL, "rbsvm", {"log2_C": OPEN_C_LOG2_C}),
    # the paper's J (eq. (33)) sums eq. (27) over all points; read literally, a non-support
    # vector (alpha_i = 0) enters with its label instead of its exact LOO output f(x_i)
    MethodSpec(LABEL_NONSV_LABEL, "rbsvm", {"nonsupport": "label"}),
    # where the exact methods' n x n matrices do not fit (ijcnn1), the same searches on a
    # Nystroem kernel (rank <= 500, libsvm refit); they stand in for them there
    MethodSpec(LOWRANK_LABEL, "rbsvm_lowrank"),
    MethodSpec(LOWRANK_SPAN_LABEL, "span_lowrank"),
    MethodSpec(LOWRANK_RM_LABEL, "radius_margin_lowrank"),
    # svmtune's default method (beyond the paper): starts, an RBSVM refinement, a referee
    MethodSpec("auto", "auto"),
]

#: Fig. 4 points run on this machine: label -> largest n (the paper goes to 10000).  The
#: 256-candidate searches (the paper's budget, 2560 SVM fits per point) run to n = 2000.
FIG4_RUN_LIMITS: dict[str, int] = {
    "RBSVM": 10000,
    "SpanSVM": 10000,
    "RMSVM": 10000,
    "GridSearch-16": 10000,
    "RandomSearch-16": 10000,
    "BayesSearch-16": 10000,
    "GridSearch-256": 2000,
    "RandomSearch-256": 2000,
    "BayesSearch-256": 2000,
}

#: the Fig. 4 experiment (sizes 500..10000 step 500; only FIG4_RUN_LIMITS are run)
runtime_vs_n = RuntimeVsN(run_limits=dict(FIG4_RUN_LIMITS))

#: beyond the paper: RBSVM's criterion along C at the learned width, closed form (eq. (27))
#: against exact LOO, with the L2 and libsvm test accuracies -- on the tasks where RBSVM's
#: C sits on the box's bound and it trails the grid search (first two folds each)
criterion_along_c = CriterionAlongC()

#: beyond the paper: the same criterion at our learned point and at the paper's Table II
#: point on the same folds (every task with an exact RBSVM, all ten folds)
criterion_at_paper_point = CriterionAtPaperPoint(
    tasks=tuple(t.name for t in TASKS if t.name not in LARGE_TASKS)
)

if tuple(m.label for m in METHODS[:6]) != METHOD_LABELS:  # the paper tables' columns
    raise RuntimeError("rbsvm-paper: METHODS must start with the paper's six columns")

SUITE = Suite(
    name="rbsvm-paper",
    description=(
        "RBSVM paper (Peng et al., IEEE TNNLS 2023) Tables II-VI: 20 binary UCI/LIBSVM tasks, "
        "stratified 10-fold CV; RBSVM, SpanSVM, RMSVM (gradient methods, log2 sigma, log2 C in "
        "[-8, 8]), GridSearch (10-fold CV on the log2 [-8, 8] step-1 grid), RandomSearch and "
        "BayesSearch (256 candidates uniform on [2^-8, 2^8], 10-fold CV), SVC() defaults. "
        "ijcnn1 (49990 samples) is too large for the exact n x n methods: RBSVM, SpanSVM and "
        "RMSVM run there on a Nystroem kernel ('... (low-rank)'). Fig. 4 (run time vs n on "
        "skin_nonskin) is the experiment runtime_vs_n. On the 2-core reference machine the "
        "cells costing hours to days are not run and show as 'not run' (or with the splits "
        "run, e.g. [5/10]): RandomSearch and BayesSearch on twonorm and skin-nonskin (GridSearch "
        "ran there), the three CV searches on ijcnn1, the exact RBSVM, SpanSVM "
        "and RMSVM on ijcnn1, and the L2-SVM searches on twonorm, skin-nonskin and ijcnn1 (one "
        "L2-SVM fit on twonorm costs about 15 libsvm fits). 'SVC() (Platt)' and 'RBSVM "
        "(libsvm refit + Platt)' are the "
        "Platt-scaled yardsticks of the probability section."
    ),
    tasks=TASKS,
    methods=METHODS,
    protocol=PROTOCOL,
    seed=SEED,
    published=published_entries(),
    figures=[paper_tables],
    experiments=[runtime_vs_n, criterion_along_c, criterion_at_paper_point],
    yardsticks={"grid": "GridSearch", "default": "default"},
)
