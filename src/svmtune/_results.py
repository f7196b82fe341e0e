"""Search results in scikit-learn's shape: a :class:`~svmtune.methods.base.Selection`'s
history as ``cv_results_`` (the dict of arrays of ``GridSearchCV``), one row per candidate
the method evaluated.

Every method's history is turned into rows by :func:`_rows` (history in, rows out) and the
rows into columns by :func:`format_results`, which follows scikit-learn's
``BaseSearchCV._format_results``: ``params`` (a list of dicts), masked ``param_<name>``
arrays (masked where a row has no such parameter, e.g. the width-only stage of ``esdr``),
``mean_test_score``, ``std_test_score``, ``split<k>_test_score``, ``rank_test_score``
(int32, 1 is best, NaN scores ranked last, all ranked 1 when every score is NaN) and
``mean_fit_time``.

What ``mean_test_score`` holds, per method (higher is better, as in scikit-learn):

* cross-validated searches (``grid``, ``random``, ``tpe``, ``optuna``, ``halving``,
  ``cv_cv``): the mean validation score over the folds: accuracy for ``scoring="error"``,
  F1 for ``"f1"``/``"f1_macro"``, minus the mean hinge loss for ``"hinge"``; the fold
  scores in ``split<k>_test_score``;
* ``esdr``, ``dbtc``, ``j4``, ``ld``: the CV accuracy on the rows of the C stage (at the
  chosen width, with their fold scores); the width stage's rows have no C (``param_C``
  masked), NaN there and in the fold scores, and their index in its own column (``esdr``,
  ...);
* ``auto``: the closed-form leave-one-out accuracy the referee ranks the candidate by
  (1 - the lower of ``estimate_l1`` and ``estimate_l2``, the estimates it has);
* ``span_rule``: 1 - the span-rule leave-one-out estimate (``criterion="span_rule"``) or the
  CV accuracy (``criterion="cv"``); for the bounds (``span_bound``, ``xi_alpha``) NaN except
  on the chosen row, which holds 1 - its span-rule estimate (``estimate_``);
* gradient methods (``rbsvm``, ``span``, ``radius_margin`` and their low-rank versions):
  their criterion is no accuracy (its value is in the ``value`` column), NaN on the path's
  rows except the chosen one, which holds 1 - ``estimate_``, the leave-one-out error of the
  chosen SVM (RBSVM's closed form eq. (27), the span estimate, ...) where the method has
  one (``radius_margin`` has none: NaN);
* ``ld_c1``, ``ss``: NaN: a data index, no error estimate (its value in its own column,
  ``ld``, ``ss``);
* ``default``: one row, scikit-learn's ``SVC()`` point, with NaN (nothing is evaluated).

So ``best_score_ = mean_test_score[best_index_]`` is 1 - ``estimate_`` wherever the method
has an error-rate estimate of its choice (for the CV searches with ``scoring="error"`` the
two are the same CV accuracy; ``span_rule`` with ``criterion="cv"`` ranks by CV, so its
``best_score_`` is the CV accuracy and ``estimate_`` the span-rule estimate), the score of
the chosen row for the other scorings, and NaN only where the method has neither
(``default``, ``ss``, ``ld_c1``, ``radius_margin``).  ``params`` holds every searched
hyperparameter of a row (the fixed C of ``ld_c1``, each kernel's C_opt for ``ss``, the
class weight of ``span_rule``'s class-weight search, keyed by the user's labels), so that
``params[best_index_]`` is ``best_params_`` (``kernel`` only where several are compared).

The history's other scalar fields are kept as columns under their own names (``cv_loss``,
``value``, ``stage``, ``origin``, ``iter``, ``n_resources``, ...).  ``mean_fit_time`` is
the seconds of one evaluation: a fold's fit and validation for the CV searches, a path
evaluation for the gradient methods, a candidate's cost for ``auto``; NaN where the history
has no times.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from scipy.stats import rankdata

from svmtune.methods.base import Selection, Selector

__all__ = ["format_results", "relabel_class_weight", "search_results"]

#: hyperparameters reported as ``param_<name>`` (``gamma`` is ``sigma``'s other name)
PARAM_KEYS = ("kernel", "sigma", "C", "class_weight", "degree", "coef0")
#: history fields consumed into the standard columns
_CONSUMED = ("split_losses", "fit_time", "eval_time", "time_fit", "time_span", "gamma")


def _loss_to_score(loss: float, scoring: str) -> float:
    """A CV loss as scikit-learn's score (higher is better)."""
    return -float(loss) if scoring == "hinge" else 1.0 - float(loss)


def _score_of(row: dict, selector: Selector, selection: Selection, scoring: str) -> float:
    """``mean_test_score`` of one history row (see the module docstring)."""
    if "cv_loss" in row:
        return _loss_to_score(row["cv_loss"], scoring)
    return selector.history_score(row, selection)


def _fit_time_of(row: dict, selector: Selector) -> float:
    for key in ("fit_time", "eval_time"):
        if key in row:
            return float(row[key])
    if "time_fit" in row:
        return float(row["time_fit"]) + float(row.get("time_span", 0.0))
    return selector.history_fit_time(row)


def _rows(selection: Selection, selector: Selector, scoring: str) -> list[dict[str, Any]]:
    """One row per evaluated candidate: ``params``, ``score``, ``split_scores``,
    ``fit_time`` and the history's other scalar fields in ``extra``."""
    history = list(selection.history)
    if not history:  # a fixed rule (default): its point, nothing evaluated
        params = {k: selection.params[k] for k in PARAM_KEYS if k in selection.params}
        return [
            {
                "params": params,
                "score": float("nan"),
                "split_scores": None,
                "fit_time": float("nan"),
                "extra": {},
            }
        ]
    kernels = {h.get("kernel") for h in history}
    rows = []
    for h in history:
        if h.get("stage") == "C" and "sigma" not in h and "sigma" in selection.params:
            # esdr, dbtc, j4, ld: the C stage cross-validates at the chosen width
            h = {"sigma": selection.params["sigma"], **h}
        if selection.info.get("c_search") == "fixed" and "C" not in h and "C" in selection.params:
            # ld_c1 (and c_search="fixed"): every width is judged at the one fixed C
            h = {**h, "C": selection.params["C"]}
        params = {k: h[k] for k in PARAM_KEYS if k in h and (k != "kernel" or len(kernels) > 1)}
        splits = h.get("split_losses")
        score = _score_of(h, selector, selection, scoring)
        if splits is not None and not np.all(np.isfinite(splits)):
            score = float("nan")  # a failed fit (halving's small rounds), as scikit-learn has it
        rows.append(
            {
                "params": params,
                "score": score,
                "split_scores": None
                if splits is None
                else [_loss_to_score(v, scoring) for v in splits],
                "fit_time": _fit_time_of(h, selector),
                "extra": {
                    k: v
                    for k, v in h.items()
                    if k not in PARAM_KEYS
                    and k not in _CONSUMED
                    and (isinstance(v, (numbers.Number, str, np.bool_)) or v is None)
                },
            }
        )
    return rows


def _param_column(values: dict[int, Any], n: int) -> np.ma.MaskedArray:
    """A masked array of one parameter, as scikit-learn builds ``param_<name>``."""
    items = list(values.values())
    try:
        arr = np.array(items)
        dtype = arr.dtype if arr.dtype.kind != "U" and arr.ndim == 1 else object
    except ValueError:
        dtype = np.dtype(object)
    col = np.ma.MaskedArray(np.empty(n, dtype=dtype), mask=True)
    for i, v in values.items():
        col[i] = v
    return col


def _extra_column(values: list[Any]) -> np.ndarray:
    """A history field as a column: float with NaN for missing numbers, else object."""
    present = [v for v in values if v is not None]
    if present and all(
        isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, (bool, np.bool_))
        for v in present
    ):
        return np.array([np.nan if v is None else float(v) for v in values])
    if present and len(present) == len(values) and all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    return np.array(values, dtype=object)


def _rank(scores: np.ndarray) -> np.ndarray:
    """scikit-learn's ``rank_test_score``: 1 is best, ties share the lower rank, NaN last.

    Scores are compared to 12 decimals, so that equal fractions of held-out samples computed
    in two ways (1 - 2/18 and 16/18) tie instead of being ordered by rounding noise.
    """
    if np.isnan(scores).all():
        return np.ones(len(scores), dtype=np.int32)
    filled = np.round(np.nan_to_num(scores, nan=np.nanmin(scores) - 1), 12)
    return rankdata(-filled, method="min").astype(np.int32)


def format_results(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of :func:`_rows` as scikit-learn's ``cv_results_`` dict of arrays."""
    n = len(rows)
    results: dict[str, Any] = {}
    results["mean_fit_time"] = np.array([r["fit_time"] for r in rows], dtype=float)
    by_param: dict[str, dict[int, Any]] = {}
    for i, r in enumerate(rows):
        for k, v in r["params"].items():
            by_param.setdefault(k, {})[i] = v
    for k in sorted(by_param, key=PARAM_KEYS.index):
        results[f"param_{k}"] = _param_column(by_param[k], n)
    results["params"] = [dict(r["params"]) for r in rows]
    n_splits = max((len(r["split_scores"]) for r in rows if r["split_scores"]), default=0)
    splits = np.full((n, n_splits), np.nan)
    for i, r in enumerate(rows):
        if r["split_scores"]:
            splits[i, : len(r["split_scores"])] = r["split_scores"]
    for k in range(n_splits):
        results[f"split{k}_test_score"] = splits[:, k].copy()
    scores = np.array([r["score"] for r in rows], dtype=float)
    results["mean_test_score"] = scores
    if n_splits:
        has = np.array([bool(r["split_scores"]) for r in rows])
        std = np.full(n, np.nan)
        std[has] = splits[has].std(axis=1)
        results["std_test_score"] = std
    results["rank_test_score"] = _rank(scores)
    extra_keys: list[str] = []
    for r in rows:
        extra_keys += [k for k in r["extra"] if k not in extra_keys and k not in results]
    for k in extra_keys:
        results[k] = _extra_column([r["extra"].get(k) for r in rows])
    return results


def _chosen_index(selection: Selection, results: dict[str, Any]) -> int:
    """The row of the chosen hyperparameters: ``auto``'s ``chosen`` row, else the row nearest
    the chosen (sigma, C) in log2 units among the rows with the most chosen parameters
    (the first of equals: the searches choose the first of tied candidates)."""
    if "chosen" in results and results["chosen"].dtype == bool and results["chosen"].any():
        return int(np.flatnonzero(results["chosen"])[0])
    chosen = selection.params
    best, best_key = 0, None
    for i, p in enumerate(results["params"]):
        shared = [k for k in ("sigma", "C") if k in p and k in chosen]
        dist = sum(abs(np.log2(float(p[k])) - np.log2(float(chosen[k]))) for k in shared)
        others = [k for k in ("class_weight", "degree", "coef0") if k in chosen]
        mismatch = sum(p.get(k) != chosen[k] for k in others)
        later = -int(results["iter"][i]) if "iter" in results else 0  # halving: last round
        key = (-len(shared), mismatch, dist, later)
        if best_key is None or key < best_key:
            best, best_key = i, key
    return best


def relabel_class_weight(cw, classes):
    """A ``class_weight`` dict keyed by the labels of ``classes`` (the user's, as
    ``best_params_`` shows them) instead of the encoded labels ``0..k-1`` the selection saw;
    anything else (None, "balanced") as it is."""
    if not isinstance(cw, dict):
        return cw
    labels = np.asarray(classes).tolist()  # plain values, not NumPy scalars
    return {labels[int(k)]: v for k, v in cw.items()}


def _relabel_class_weights(results: dict[str, Any], classes) -> None:
    """:func:`relabel_class_weight` on ``params`` and its column."""
    for p in results["params"]:
        if "class_weight" in p:
            p["class_weight"] = relabel_class_weight(p["class_weight"], classes)
    col = results.get("param_class_weight")
    if col is not None:
        for i in np.flatnonzero(~np.ma.getmaskarray(col)):
            col[i] = relabel_class_weight(col[i], classes)


def _score_chosen_by_estimate(selection: Selection, results: dict[str, Any], best: int) -> None:
    """The chosen row's ``mean_test_score`` is ``1 - estimate`` where the method scores no
    candidate but has an error-rate estimate of its choice (the gradient methods' closed-form
    leave-one-out, ``span_rule``'s bounds): ``best_score_`` is then that accuracy, as a
    scikit-learn user reads it, and the chosen row ranks first."""
    scores = results["mean_test_score"]
    if np.isnan(scores[best]) and selection.estimate is not None:
        scores[best] = 1.0 - float(selection.estimate)
        results["rank_test_score"] = _rank(scores)


def search_results(
    selection: Selection, selector: Selector, scoring: str = "error", classes=None
) -> tuple[dict[str, Any], int, int | None]:
    """``cv_results_``, ``best_index_`` and ``n_splits_`` of a selection.

    Parameters
    ----------
    selection : Selection
        What the selector returned (its ``history``, ``params``, ``info`` and
        ``final_model`` are read).
    selector : Selector
        The method that made it: its :meth:`~svmtune.methods.base.Selector.history_score`
        and :meth:`~svmtune.methods.base.Selector.history_fit_time` fill the rows the
        standard fields do not.
    scoring : str, default="error"
        The CV searches' ``scoring`` option (how a CV loss becomes a score).
    classes : array-like, optional
        The user's labels (``SVMTuner.classes_``): a ``class_weight`` in ``params`` is then
        keyed by them, as in ``best_params_``.

    Returns
    -------
    cv_results : dict
        scikit-learn's ``cv_results_`` layout (see the module docstring), one row per
        evaluated candidate.
    best_index : int
        The row of the method's choice.  For the CV searches it is the first row of rank 1,
        as in ``BaseSearchCV``; for ``halving`` the best of the last round, which may rank
        below a candidate of an earlier, smaller round (as in scikit-learn's
        ``HalvingGridSearchCV``).
    n_splits : int or None
        The number of CV folds of the ``split<k>_test_score`` columns; None for methods
        without folds.
    """
    results = format_results(_rows(selection, selector, scoring))
    n_splits = sum(k.startswith("split") and k.endswith("_test_score") for k in results)
    best = _chosen_index(selection, results)
    _score_chosen_by_estimate(selection, results, best)
    if classes is not None:
        _relabel_class_weights(results, classes)
    return results, best, (n_splits or None)
