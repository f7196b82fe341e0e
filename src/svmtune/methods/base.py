"""The selector contract every method implements, and the method registry.

A *selector* turns training data into hyperparameters.  :meth:`Selector.run` receives a
:class:`TrainingData` -- standardised features ``X`` (n, d), integer-encoded labels ``y`` in
``0..k-1`` (k >= 2, every class present with at least two samples), optional
``sample_weight`` and ``groups``, all validated once by :class:`svmtune.SVMTuner`'s door --
and a :class:`SelectionContext` (kernel, random state, jobs, multiclass scheme); it returns
a :class:`Selection`.  :meth:`Selector.select` is the same for direct callers, with the
checks of the selector's own domain (kernel, groups) first.  Selectors are configured by
keyword arguments (``SVMTuner(method_params=...)``) and must not keep state between calls.

Multiclass: a selector either handles ``k > 2`` itself (CV-based searches score multiclass
accuracy of SVMs built with the final model's ``multiclass`` scheme; data indices take the
minimum over class pairs) or decomposes with
:func:`ovr_tasks` and combines the binary criteria into one objective, so that every method
returns one set of hyperparameters.
"""

from __future__ import annotations

import importlib
import inspect
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d

from svmtune._labels import ovr_tasks, pm1
from svmtune._validation import validate_sample_weight
from svmtune.methods._constraints import Constraint, validate_options

__all__ = [
    "Selection",
    "Selector",
    "SelectionContext",
    "TrainingData",
    "METHODS",
    "get_selector",
    "available_methods",
    "method_options",
    "selector_class",
    "ovr_tasks",
    "pm1",
    "require",
    "GROUP_METHODS",
    "YARDSTICKS",
    "sparse_fit_refusal",
]


#: how far past [0, 1] an ``estimate`` may lie by rounding (and is clipped to it)
ESTIMATE_ROUNDING = 1e-9


#: the final models a selection can ask for (``Selection.final_model``)
FINAL_MODELS = ("l1", "l2", "lowrank")


@dataclass
class Selection:
    """What a selector found.

    Attributes
    ----------
    params : dict
        Chosen hyperparameters, keys among kernel, sigma, gamma, C, class_weight, degree,
        coef0 (becomes ``SVMTuner.best_params_``, where a ``class_weight`` keyed here by
        the encoded labels ``0..k-1`` is keyed by the labels of ``classes_``).
    estimate : float or None
        The method's own estimate of the error rate in [0, 1] (LOO error, span-rule, CV
        error, ...), or None for methods that have none.
    criterion : float or None
        The value of whatever the method optimised at the chosen point.
    n_svm_fits : int
        SVM trainings spent selecting (not counting the final fit).
    history : list of dict
        The path or the evaluated candidates, one dict per evaluation.
    final_model : {"l1", "l2", "lowrank"}
        The SVM the hyperparameters were chosen for: libsvm's hinge-loss SVC, the exact
        squared-hinge L2-SVM or the L2-SVM on a Nystroem kernel
        (:class:`svmtune.estimators_lowrank.LowRankL2SVC`, rank ``info["rank"]``).
    info : dict
        Method-specific diagnostics (e.g. S&S's d and sigma, number of objective evaluations).
    sample_weight : ndarray or None
        Per-sample weights chosen by the method (instance-weight selection); the final SVM is
        fitted with them instead of the user's ``sample_weight`` (which they already include).
    """

    params: dict[str, Any]
    estimate: float | None = None
    criterion: float | None = None
    n_svm_fits: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    final_model: str = "l1"
    info: dict[str, Any] = field(default_factory=dict)
    sample_weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.estimate is not None:
            e = float(self.estimate)
            # a weighted error rate sum(w * wrong) / sum(w) may round past 1 (or below 0)
            # by a few ulps when the weights are tiny or huge: that is the bound itself
            if -ESTIMATE_ROUNDING <= e < 0.0 or 1.0 < e <= 1.0 + ESTIMATE_ROUNDING:
                self.estimate = min(max(e, 0.0), 1.0)
            elif not (0.0 <= e <= 1.0):
                raise ValueError(f"estimate must be an error rate in [0, 1], got {self.estimate}")
        if self.final_model not in FINAL_MODELS:
            raise ValueError(f"final_model must be one of {FINAL_MODELS}, got {self.final_model!r}")


@dataclass(frozen=True, eq=False)
class TrainingData:
    """The training data a selector receives, validated and encoded once by the caller.

    Attributes
    ----------
    X : ndarray of shape (n, d) or CSR matrix
        Standardised features, float64 (a CSR matrix for methods with ``accepts_sparse``).
    y : ndarray of shape (n,)
        Labels encoded ``0..k-1``.
    sample_weight : ndarray of shape (n,) or None
    groups : ndarray of shape (n,) or None
        Integer group codes (taken by the methods whose :meth:`Selector.holdout` is
        ``"folds"`` or ``"groups"``).
    sqdist : ndarray of shape (n, n) or None
        The squared distances between the rows of ``X``, where the caller has computed them
        already (``auto``'s exact stages); the exact kernel-matrix methods use them instead of
        computing them again.
    """

    X: Any
    y: np.ndarray
    sample_weight: np.ndarray | None = None
    groups: np.ndarray | None = None
    sqdist: np.ndarray | None = None

    @classmethod
    def checked(cls, X, y, sample_weight=None, groups=None) -> TrainingData:
        """The data of a direct caller of :meth:`Selector.select`, checked as the tuner's door
        checks its own: ``X`` finite and 2-D (float64; a sparse one as CSR), ``y`` one label
        per row, the weights by :func:`svmtune._validation.validate_sample_weight`, the groups
        one per row."""
        X = check_array(X, accept_sparse="csr", dtype=np.float64, input_name="X")
        y = column_or_1d(y)
        check_consistent_length(X, y, *(() if groups is None else (groups,)))
        sw = validate_sample_weight(sample_weight, X.shape[0])
        return cls(X, y, sw, None if groups is None else column_or_1d(groups))


@dataclass(frozen=True)
class SelectionContext:
    """What a selection runs under, besides its data and its options.

    Attributes
    ----------
    kernel : str
        The kernel family to select for (:meth:`Selector.check_kernel`).
    random_state : int, RandomState or None
    n_jobs : int or None
        Parallel jobs of the methods that fit SVMs on several candidates.
    multiclass : {"ovr", "ovo"}
        The decomposition of the final SVM for ``k > 2`` classes (see :meth:`Selector.select`).
    """

    kernel: str = "rbf"
    random_state: Any = None
    n_jobs: int | None = None
    multiclass: str = "ovr"


#: the methods that can keep ``groups`` together (named in the error of the others):
#: K-fold cross-validation (``holdout() == "folds"``) or leave-one-group-out closed forms
#: (``"groups"``); tests/methods check the list against every method's :meth:`holdout`
GROUP_METHODS = (
    "the cross-validated methods (grid, random, tpe, optuna, halving, cv_cv, esdr, dbtc, j4, "
    "ld, and span_rule with criterion='cv') and the leave-one-group-out ones (rbsvm, "
    "rbsvm_lowrank, auto)"
)


class Selector(ABC):
    """Base class of the selection methods.

    Subclasses set ``name`` and implement :meth:`run` (data validated by the caller, one
    signature for every method); :meth:`select` is its checked entry for direct callers.
    ``__init__`` takes the method's options as keyword arguments and validates them against
    the class's declared ``_parameter_constraints`` (see :mod:`svmtune.methods._constraints`;
    the dicts of the base classes are merged in), raising ``ValueError`` for out-of-range
    options, so that ``SVMTuner(method_params=...)`` fails with a clear message.
    """

    name: ClassVar[str] = ""
    #: kernels the method can select for
    kernels: ClassVar[tuple[str, ...]] = ("rbf",)
    #: what :meth:`holdout` returns unless the method's options decide it
    held_out: ClassVar[str] = "none"
    #: whether :meth:`select` takes a scipy sparse (CSR) ``X`` without densifying it
    accepts_sparse: ClassVar[bool] = False
    #: whether :meth:`run` takes ``X`` as rows standardised as they are read, never whole: a
    #: dask array (standardised lazily, never gathered) or, for a dense NumPy ``X``,
    #: :class:`svmtune._standardised_rows.StandardisedRows` (no standardised copy held); for
    #: the others the tuner's door gathers a dask ``X`` where it fits in memory and
    #: standardises a NumPy ``X`` into a copy
    accepts_lazy_rows: ClassVar[bool] = False
    #: whether the selection's time and memory grow as ``n^2`` whatever its options (pair
    #: statistics of every two rows): a composition runs it only where exact work is affordable
    pairwise: ClassVar[bool] = False
    #: the final model whose closed-form leave-one-out error rate ``Selection.estimate`` is,
    #: where it is one (``"l2"``: the L2-SVM's, RBSVM eq. (27)); a referee comparing models
    #: by that estimate can take it as it is (:mod:`svmtune.methods.auto`)
    loo_family: ClassVar[str | None] = None
    #: whether its candidates form a grid fixed in advance (a plot draws no path through them)
    grid: ClassVar[bool] = False
    #: whether the selection reads a statistic of X's entries that centring changes (not
    #: only distances): a sparse X, scaled without centring, would change it
    reads_centring: ClassVar[bool] = False
    #: optional modules :meth:`select` imports, with the extra that installs them
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: option name -> admissible kinds of value (:mod:`svmtune.methods._constraints`)
    _parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {}

    def select(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        groups: np.ndarray | None = None,
        kernel: str = "rbf",
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        multiclass: str = "ovr",
    ) -> Selection:
        """Choose hyperparameters on ``(X, y)``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Standardised features (a CSR matrix for methods with ``accepts_sparse``).
        y : ndarray of shape (n_samples,)
            Labels encoded ``0..k-1``.
        sample_weight : ndarray of shape (n_samples,), optional
        groups : ndarray of shape (n_samples,), optional
            Integer group codes.  Taken by the methods whose :meth:`holdout` is ``"folds"``
            or ``"groups"``, which keep every group on one side of each held-out split;
            the others raise a ``ValueError`` naming the methods that take groups
            (:meth:`check_groups`).
        kernel : str, default="rbf"
            The kernel family to select for (:meth:`check_kernel`).
        random_state : int, RandomState or None
        n_jobs : int or None
            Parallel jobs of the methods that fit SVMs on several candidates.
        multiclass : {"ovr", "ovo"}, default="ovr"
            The decomposition of the final SVM for ``k > 2`` classes
            (``SVMTuner(multiclass=...)``: ``"ovr"`` or libsvm's ``"ovo"``).
            Cross-validated searches score candidates built the same way; a data criterion
            with a natural decomposition for each scheme uses the matching one (LD); the
            others keep the decomposition their paper defines (documented per method).

        Returns
        -------
        Selection

        Notes
        -----
        Checks the kernel (:meth:`check_kernel`), the groups (:meth:`check_groups`) and the
        data (:meth:`TrainingData.checked`), then runs :meth:`run`.  :class:`svmtune.SVMTuner`
        makes these checks at its door and calls :meth:`run` with the data it validated.
        """
        self.check_kernel(kernel)
        self.check_groups(groups)
        return self.run(
            TrainingData.checked(X, y, sample_weight, groups),
            SelectionContext(kernel, random_state, n_jobs, multiclass),
        )

    @abstractmethod
    def run(self, data: TrainingData, context: SelectionContext) -> Selection:
        """Choose hyperparameters on ``data``, validated by the caller (:meth:`select`, or
        the tuner's door): nothing here checks again what that checked."""

    def estimate_at(
        self, data: TrainingData, context: SelectionContext, params: dict[str, Any]
    ) -> Selection:
        """The method's own error estimate of the model at ``params`` without a search:
        a :class:`Selection` of ``params`` with its ``estimate``, ``n_svm_fits`` and
        ``info`` (what a referee composing methods asks, :mod:`svmtune.methods.auto`).
        Methods with a closed-form estimate implement it; the others raise
        ``NotImplementedError``."""
        raise NotImplementedError(f"method {self.name!r} has no estimate at a given point")

    def holdout(self) -> str:
        """What the method holds out to judge a candidate, which decides whether it can
        respect ``SVMTuner.fit(groups=...)``.

        ``"folds"``: K-fold cross-validation; :meth:`run` keeps every group of
        ``groups`` (integer group codes, one per sample) on one side of each split
        (:func:`svmtune.search.cv.make_folds`).  ``"groups"``: a leave-one-out closed form
        that holds out single rows, or with ``groups`` each whole group
        (:mod:`svmtune.loo.rbsvm_groups`).  ``"rows"``: leave-one-out closed forms, bounds or
        estimates, which hold out single rows and cannot keep a group together.  ``"none"``
        (the default): a data criterion or a fixed rule that holds nothing out, so groups
        change nothing.
        """
        return self.held_out

    def history_score(self, row: dict[str, Any], selection: Selection) -> float:
        """``cv_results_``' ``mean_test_score`` of a history ``row`` that has no CV loss:
        1 - the leave-one-out estimate the method records for that candidate, NaN where it
        records none (the default).  :mod:`svmtune._results` asks the method, as
        scikit-learn's searches take a method's own columns through ``more_results``."""
        return float("nan")

    def history_fit_time(self, row: dict[str, Any]) -> float:
        """Seconds the candidate of ``row`` cost, where the method records them under a key
        of its own (the standard ``fit_time``, ``eval_time`` and ``time_fit`` are read by
        :mod:`svmtune._results`); NaN (the default) otherwise."""
        return float("nan")

    def check_groups(self, groups: Any) -> None:
        """Raise a ``ValueError`` when ``groups`` is given to a method that cannot use it
        (:meth:`holdout` is ``"rows"`` or ``"none"``), naming the methods that can."""
        if groups is None:
            return
        how = self.holdout()
        if how not in ("folds", "groups"):
            what = (
                "holds out single rows (leave-one-out)"
                if how == "rows"
                else "holds no rows out to judge its candidates"
            )
            raise ValueError(
                f"method {self.name!r} {what} and takes no groups; groups are taken by "
                f"{GROUP_METHODS}"
            )

    def check_requirements(self) -> None:
        """Raise an ``ImportError`` saying what to install when a module of :attr:`requires`
        is missing (:func:`require`), so that a command fails before any work."""
        for module, extra in self.requires:
            require(module, self.name, extra)

    def check_kernel(self, kernel: str) -> None:
        """Raise a ``ValueError`` unless the method selects for kernel family ``kernel``."""
        if kernel not in self.kernels:
            raise ValueError(
                f"method {self.name!r} selects hyperparameters for kernels {self.kernels}, "
                f"not {kernel!r}"
            )

    @classmethod
    def _constraints(cls) -> dict[str, list[Constraint | None]]:
        """The declared constraints of this class and its bases (the subclass's win)."""
        out: dict[str, list[Constraint | None]] = {}
        for k in reversed(cls.__mro__):
            out.update(vars(k).get("_parameter_constraints", {}))
        return out

    def _validate_options(self, **options: Any) -> dict[str, Any]:
        """``options`` checked and converted by the declared constraints
        (:func:`svmtune.methods._constraints.validate_options`)."""
        return validate_options(self._constraints(), options)

    def _set_options(self, **options: Any) -> None:
        """Set ``options`` as attributes, checked and converted by the declared constraints
        (:meth:`_validate_options`): the one step of every selector's ``__init__``."""
        for key, value in self._validate_options(**options).items():
            setattr(self, key, value)


def require(module: str, method: str, extra: str = "baselines") -> ModuleType:
    """Import the optional dependency ``module`` that method ``method`` needs.

    Optional dependencies (hyperopt, Optuna) are imported when a selection runs, never when
    :mod:`svmtune` or :mod:`svmtune.methods` is imported.

    Raises
    ------
    ImportError
        ``method 'tpe' needs hyperopt: pip install "svmtune[baselines]"`` when the module
        is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f'method {method!r} needs {module}: pip install "svmtune[{extra}]"'
        ) from exc


# Method name -> "module:Class".  Modules are imported on first use.
METHODS: dict[str, str] = {
    "auto": "svmtune.methods.auto:Auto",
    "default": "svmtune.methods.default:DefaultSVC",
    "grid": "svmtune.methods.grid:GridSearch",
    "random": "svmtune.methods.random_search:RandomSearch",
    "tpe": "svmtune.methods.tpe:HyperoptTPE",
    "optuna": "svmtune.methods.optuna_tpe:OptunaTPE",
    "halving": "svmtune.methods.halving:HalvingSearch",
    "rbsvm": "svmtune.methods.rbsvm:RBSVM",
    "rbsvm_lowrank": "svmtune.methods.rbsvm_lowrank:RBSVMLowRank",
    "span": "svmtune.methods.gradient_baselines:SpanSVM",
    "radius_margin": "svmtune.methods.gradient_baselines:RMSVM",
    "radius_margin_lowrank": "svmtune.methods.radius_margin_lowrank:RMSVMLowRank",
    "span_lowrank": "svmtune.methods.span_lowrank:SpanSVMLowRank",
    "esdr": "svmtune.methods.esdr:ESDRCV",
    "dbtc": "svmtune.methods.esdr:DBTCCV",
    "j4": "svmtune.methods.esdr:J4CV",
    "ld": "svmtune.methods.ld:LDCV",
    "ld_c1": "svmtune.methods.ld:LDC1",
    "cv_cv": "svmtune.methods.ld:CVCV",
    "span_rule": "svmtune.methods.span_rule:SpanRule",
    "ss": "svmtune.methods.ss_ratio:SSRatio",
}


#: the methods every other is compared against (the benchmark's yardsticks and the demo's
#: reference rows), by role: a 10-fold grid search and scikit-learn's ``SVC()``; modules
#: outside the registry ask here rather than name them
YARDSTICKS: dict[str, str] = {"grid": "grid", "default": "default"}


def available_methods() -> list[str]:
    """Names of the registered selection methods."""
    return sorted(METHODS)


def selector_class(name: str) -> type[Selector]:
    """The selector class registered as ``name`` (its module imported on first use)."""
    module, cls = METHODS[name].split(":")
    return getattr(importlib.import_module(module), cls)


def method_options(name: str) -> list[str]:
    """Names of the options (``method_params`` keys) of the method registered as ``name``.

    Read from the keyword-only parameters of the selector's ``__init__``, following
    ``**options`` on to the base classes' ``__init__``.
    """
    names: list[str] = []
    for k in selector_class(name).__mro__:
        if k is object or "__init__" not in vars(k):
            continue
        params = inspect.signature(vars(k)["__init__"]).parameters.values()
        names += [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return names


def get_selector(name: str, params: dict[str, Any] | None = None) -> Selector:
    """Instantiate the selector registered as ``name`` with options ``params``."""
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(
            f"unknown method {name!r}; choose one of: {', '.join(available_methods())}"
        )
    if params is not None and not isinstance(params, dict):
        raise ValueError(
            f"invalid method_params for method {name!r}: a dict of its options is needed, "
            f"got {type(params).__name__}"
        )
    options = method_options(name)
    unknown = sorted(set(params or {}) - set(options))
    if unknown:
        known = f"its options are: {', '.join(options)}" if options else "it has no options"
        raise ValueError(
            f"invalid method_params for method {name!r}: no option "
            f"{', '.join(map(repr, unknown))}; {known}"
        )
    klass = selector_class(name)
    try:
        return klass(**(params or {}))
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        if isinstance(exc, ValueError) and any(
            re.search(rf"\b{re.escape(k)}\b", msg) for k in params or {}
        ):
            raise  # the option's check named it (every declared constraint does)
        # a rule between options (or a conversion outside the constraints): say whose
        raise ValueError(f"invalid method_params for method {name!r}: {msg}") from None


def sparse_fit_refusal(method: str, selector, final_model: str) -> str | None:
    """Why ``SVMTuner`` cannot fit a sparse ``X`` with this selector (an instance, or its
    class where no options are known) and final model, or None where it can: the one rule
    of :meth:`svmtune.SVMTuner.fit`, its tags (``input_tags.sparse``) and the command line's sparse
    svmlight reader (:mod:`svmtune.cli._select`)."""
    if not selector.accepts_sparse:
        ok = [m for m in sorted(METHODS) if selector_class(m).accepts_sparse]
        return (
            f"method {method!r} computes dense kernel matrices or data statistics from "
            f"X and takes no sparse X; the methods that do (libsvm on sparse rows, or a "
            f"Nystroem factor from sparse dot products): "
            f"{', '.join(ok)}; or pass X.toarray() if it fits in memory"
        )
    if final_model == "l2" or getattr(selector, "final_model", "l1") == "l2":
        return (
            "the final L2-SVM is solved on a dense kernel matrix and takes no sparse X; use "
            "final_model='l1', 'lowrank' or 'auto'"
        )
    return None
