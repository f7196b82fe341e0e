"""Kernel functions, parameter conversions and derivatives in log-parameters.

The RBF kernel is parametrised by its width ``sigma`` as in all five papers,

    k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))          (RBSVM eq. (4))

which is scikit-learn's ``gamma = 1 / (2 sigma^2)``.  Every function here is pure:
arrays in, arrays out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.extmath import row_norms

from svmtune._option_values import check_positive, check_real

__all__ = [
    "COLUMN_BLOCK",
    "KERNELS",
    "Kernel",
    "KernelColumns",
    "as_kernel",
    "gamma_from_sigma",
    "kernel_block",
    "kernel_columns",
    "kernel_dlogparams",
    "kernel_matrix",
    "rbf_columns",
    "rbf_dlogsigma",
    "rbf_from_sqdist",
    "rbf_params",
    "sigma_from_gamma",
    "sparse_row_norms",
    "sparse_squared_distances",
    "squared_distances",
]

KERNELS = ("rbf", "linear", "poly", "sigmoid")


def gamma_from_sigma(sigma: float | np.ndarray) -> float | np.ndarray:
    """Convert an RBF width ``sigma`` to scikit-learn's ``gamma = 1 / (2 sigma^2)``."""
    if isinstance(sigma, float):  # the common scalar case without numpy's array round trip
        sigma = check_positive("sigma", sigma)
        return 1.0 / (2.0 * sigma * sigma)
    sigma = np.asarray(sigma, dtype=float)
    if np.any(sigma <= 0) or not np.all(np.isfinite(sigma)):  # check_positive, elementwise
        raise ValueError(f"sigma must be a positive finite number (each), got {sigma}")
    out = 1.0 / (2.0 * sigma**2)
    return float(out) if out.ndim == 0 else out


def rbf_params(sigma: float, C: float, **extra) -> dict:
    """The hyperparameters of an RBF SVM as ``SVMTuner.best_params_`` holds them: ``kernel``,
    the width ``sigma``, scikit-learn's ``gamma = 1 / (2 sigma^2)`` and ``C`` (and ``extra``)."""
    out = {"kernel": "rbf", "sigma": float(sigma), "gamma": float(gamma_from_sigma(sigma))}
    out["C"] = float(C)
    out.update(extra)
    return out


def sigma_from_gamma(gamma: float | np.ndarray) -> float | np.ndarray:
    """Convert scikit-learn's ``gamma`` to the RBF width ``sigma = 1 / sqrt(2 gamma)``."""
    gamma = np.asarray(gamma, dtype=float)
    if np.any(gamma <= 0) or not np.all(np.isfinite(gamma)):
        raise ValueError(f"gamma must be a positive finite number (each), got {gamma}")
    out = 1.0 / np.sqrt(2.0 * gamma)
    return float(out) if out.ndim == 0 else out


def squared_distances(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Pairwise squared Euclidean distances, clipped at zero, exact zeros on the diagonal.

    Uses the expansion ||x||^2 + ||y||^2 - 2 x.y (BLAS speed) and repairs its round-off:
    negative values are clipped and, when ``Y is None``, the diagonal is set to 0.  A scipy
    sparse ``X`` or ``Y`` goes to :func:`sparse_squared_distances` (never densified).
    """
    if sp.issparse(X) or sp.issparse(Y):
        return sparse_squared_distances(X, Y)
    X = np.asarray(X, dtype=float)
    D = euclidean_distances(X, X if Y is None else np.asarray(Y, dtype=float), squared=True)
    return _repaired(D, Y is None)


def _squared_distances(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """:func:`squared_distances` of dense float64 rows that are checked already (finite,
    2-D): scikit-learn's expansion of ``euclidean_distances`` for float64 (its row norms, one
    matrix product), the same numbers without its input checks (``tests/test_kernels.py``
    compares them), for the callers that hold rows checked once at the tuner's door
    (``auto``'s stages, the exact searches' start; issue #55)."""
    XX = row_norms(X, squared=True)[:, np.newaxis]
    Yd, YY = (X, XX.T) if Y is None else (Y, row_norms(Y, squared=True)[np.newaxis, :])
    D = -2 * (X @ Yd.T)
    D += XX
    D += YY
    return _repaired(D, Y is None)


def _repaired(D: np.ndarray, square: bool) -> np.ndarray:
    """``D`` clipped at 0, and for the distances of a set to itself an exact zero diagonal
    and exact symmetry (round-off of the expansion)."""
    np.maximum(D, 0.0, out=D)
    if square:
        np.fill_diagonal(D, 0.0)
        _symmetrise(D)
    return D


def sparse_row_norms(X) -> np.ndarray:
    """Squared Euclidean norms ``||x_i||^2`` of the rows of a scipy sparse matrix, from
    ``X.multiply(X).sum(1)`` (``O(nnz)``; ``X`` is not densified)."""
    return np.asarray(sp.csr_matrix(X).multiply(X).sum(axis=1), dtype=float).ravel()


#: entries of the sparse product ``X Y^T`` formed at once by :func:`_sparse_dot_dense`
SPARSE_PRODUCT_BLOCK = 1 << 20


def _sparse_dot_dense(X, Y) -> np.ndarray:
    """``X Y^T`` of two sparse matrices as a dense ``(n, m)`` array, filled block of rows by
    block from the sparse product's non-zeros: neither ``X`` nor ``Y`` is densified, and the
    sparse product (up to ``n m`` stored entries with their indices) takes at most
    :data:`SPARSE_PRODUCT_BLOCK` entries at a time besides the dense result."""
    X = sp.csr_matrix(X, dtype=float)
    Yt = sp.csr_matrix(sp.csr_matrix(Y, dtype=float).T)
    n, m = X.shape[0], Yt.shape[1]
    out = np.zeros((n, m))
    step = max(1, SPARSE_PRODUCT_BLOCK // max(m, 1))
    for i in range(0, n, step):
        P = sp.csr_matrix(X[i : i + step] @ Yt)
        rows = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
        out[i + rows, P.indices] = P.data  # a CSR product has no duplicate entries
    return out


def sparse_squared_distances(X, Y=None, *, X_norms=None, Y_norms=None) -> np.ndarray:
    """Pairwise squared Euclidean distances of the rows of sparse ``X`` and ``Y``, dense.

    ``||x||^2 + ||y||^2 - 2 x.y`` with the dot products from the sparse product ``X Y^T``
    and the norms from :func:`sparse_row_norms` (or ``X_norms`` / ``Y_norms`` given), clipped
    at 0; when ``Y is None`` the diagonal is 0 and the result symmetric, as in
    :func:`squared_distances`.  ``O(nnz)`` memory besides the ``(n, m)`` result: only kernel
    columns between the rows and a few others (landmarks, a subsample) are ever formed, never
    a dense copy of ``X``.  A dense ``X`` or ``Y`` is taken as sparse.

    Parameters
    ----------
    X : sparse matrix (n, d)
    Y : sparse matrix (m, d), optional
        Default ``X``.
    X_norms, Y_norms : ndarray, optional
        Precomputed squared row norms.

    Returns
    -------
    ndarray (n, m)
    """
    X = sp.csr_matrix(X, dtype=float)
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X contains NaN or infinity; the points must be finite")
    Ys = X if Y is None else sp.csr_matrix(Y, dtype=float)
    if Ys.shape[1] != X.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features, got {X.shape[1]} and {Ys.shape[1]}"
        )
    xx = sparse_row_norms(X) if X_norms is None else np.asarray(X_norms, dtype=float)
    if Y is None:
        yy = xx
    else:
        yy = sparse_row_norms(Ys) if Y_norms is None else np.asarray(Y_norms, dtype=float)
    D = _sparse_dot_dense(X, Ys)
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    np.maximum(D, 0.0, out=D)
    if Y is None:
        np.fill_diagonal(D, 0.0)
        _symmetrise(D)
    return D


def _symmetrise(D: np.ndarray, block: int = 512) -> np.ndarray:
    """``D <- (D + D^T) / 2`` in place, block by block: the values of ``0.5 * (D + D.T)``
    without its two ``n x n`` temporaries and with cache-friendly transposes
    (``docs/notes/cost_measurements.md``)."""
    n = D.shape[0]
    for i in range(0, n, block):
        rows = slice(i, min(i + block, n))
        diag = D[rows, rows]
        diag[...] = 0.5 * (diag + diag.T)
        for j in range(i + block, n, block):
            cols = slice(j, min(j + block, n))
            avg = 0.5 * (D[rows, cols] + D[cols, rows].T)
            D[rows, cols] = avg
            D[cols, rows] = avg.T
    return D


def _check_points(X: np.ndarray, name: str = "X") -> None:
    """Raise unless ``X`` (a float array) is a finite 2-D ``(n_samples, n_features)`` array."""
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (n_samples, n_features), got shape {X.shape}; "
            "reshape a single feature with X.reshape(-1, 1)"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity; the points must be finite")


def _check_kernel(kernel) -> None:
    if not isinstance(kernel, Kernel):
        raise TypeError(
            f"kernel must be a svmtune.kernels.Kernel, got {type(kernel).__name__}; "
            "e.g. Kernel('rbf', sigma=1.0)"
        )


def rbf_from_sqdist(D2: np.ndarray, sigma: float) -> np.ndarray:
    """RBF kernel from squared distances: ``exp(-D2 / (2 sigma^2))`` (RBSVM eq. (4)).

    Computed in one new array (``D2 / -(2 sigma^2)``, the same value as ``-D2 / (2 sigma^2)``,
    then ``exp`` in place): for an ``n x n`` matrix, two fewer ``n^2`` temporaries
    (``docs/notes/cost_measurements.md``).

    Raises
    ------
    ValueError
        If ``sigma`` is not positive and finite.
    """
    check_positive("sigma", sigma)
    D2 = np.asarray(D2, dtype=float)
    out = np.divide(D2, -2.0 * float(sigma) ** 2, out=np.empty_like(D2))
    return np.exp(out, out=out)


#: columns a :class:`KernelColumns` computes per call of its ``compute`` (at most ``n`` times
#: this many values in that call's temporaries)
COLUMN_BLOCK = 256


class KernelColumns:
    """A symmetric ``n x n`` kernel matrix whose columns are computed when first asked for.

    The L2-SVM and its closed-form leave-one-out outputs and gradients only read the
    columns of ``K`` at the support vectors (``K[:, S]``, ``K[S, S]``, ``K[N, S]``); when
    the support set is a small part of the data this saves computing (and holding) the
    whole matrix at every hyperparameter step -- the ``n^2`` kernel evaluations that would
    otherwise dominate a step.  Columns are cached, each computed once and kept in the block
    it was computed in (memory: ``n`` values per column read); the values are those of the
    full matrix (``compute`` is evaluated elementwise on the requested columns).

    Parameters
    ----------
    n : int
        Size of the matrix.
    compute : callable
        ``idx -> K[:, idx]``, an ``(n, len(idx))`` array, for an index array ``idx``.
    source : (X, Kernel), optional
        The training points and kernel the matrix is made of (set by :meth:`of`): they let
        libsvm evaluate the same kernel natively, e.g. for the L2-SVM's starting support set
        (:func:`svmtune.svm.fit_l2_svm`).
    """

    def __init__(
        self,
        n: int,
        compute: Callable[[np.ndarray], np.ndarray],
        *,
        source: tuple[np.ndarray, Kernel] | None = None,
    ) -> None:
        self.shape = (int(n), int(n))
        self._compute = compute
        self.source = source
        self._block = np.full(int(n), -1, dtype=np.intp)  # column j -> its block
        self._local = np.full(int(n), -1, dtype=np.intp)  # column j -> its place in the block
        self._blocks: list[np.ndarray] = []
        self._count = 0

    @classmethod
    def of(cls, X: np.ndarray, kernel: Kernel) -> KernelColumns:
        """The ``n x n`` kernel matrix of the rows of ``X`` by columns: column ``j`` is
        ``kernel(X, X[j])`` (an RBF column has exactly 1 at ``j``).  Equal to ``kernel(X)``
        up to round-off (the whole matrix is symmetrised; its columns are not), and it holds
        ``n`` values per column read instead of ``n^2``."""
        X = np.asarray(X, dtype=float)
        _check_points(X)
        _check_kernel(kernel)

        def compute(idx: np.ndarray) -> np.ndarray:
            K = kernel_matrix(X, X[idx], kernel)
            if kernel.name == "rbf":  # exp(0): what the symmetric matrix has there
                K[idx, np.arange(idx.size)] = 1.0
            return K

        return cls(X.shape[0], compute, source=(X, kernel))

    @property
    def n_computed(self) -> int:
        """How many distinct columns have been computed."""
        return self._count

    def _ensure(self, idx: np.ndarray) -> np.ndarray:
        """Compute the columns of ``idx`` not computed yet (in blocks of at most
        :data:`COLUMN_BLOCK`, which bounds ``compute``'s temporaries); ``idx`` as an index
        array.  Computed columns stay where they are: no copies as the cache grows."""
        idx = np.asarray(idx, dtype=np.intp).ravel()
        missing = idx[self._block[idx] < 0]
        if missing.size:
            new = np.unique(missing)
            for lo in range(0, new.size, COLUMN_BLOCK):
                part = new[lo : lo + COLUMN_BLOCK]
                block = np.asarray(self._compute(part), dtype=float)
                if block.shape != (self.shape[0], part.size):
                    raise ValueError(
                        f"compute returned shape {block.shape} for {part.size} columns"
                    )
                if not np.all(np.isfinite(block)):
                    raise ValueError(
                        "kernel matrix K contains NaN or infinity (in the columns computed); "
                        "the kernel matrix must be finite"
                    )
                self._block[part] = len(self._blocks)
                self._local[part] = np.arange(part.size)
                self._blocks.append(block)
            self._count += new.size
        return idx

    def _gather(self, idx: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """``K[:, idx]`` (``rows`` None) or ``K[np.ix_(rows, idx)]`` from the blocks, laid
        out as NumPy lays out that indexing of one array (Fortran order for columns, C order
        for a block), so products with it take the same BLAS path as with an array."""
        idx = self._ensure(idx)
        blk, loc = self._block[idx], self._local[idx]
        if len(self._blocks) == 1:
            only = self._blocks[0]
            return only[:, loc] if rows is None else only[np.ix_(rows, loc)]
        n_rows = self.shape[0] if rows is None else rows.size
        out = np.empty((n_rows, idx.size), order="F" if rows is None else "C")
        for b in np.unique(blk):
            pos = np.flatnonzero(blk == b)
            src = self._blocks[b]
            out[:, pos] = src[:, loc[pos]] if rows is None else src[np.ix_(rows, loc[pos])]
        return out

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """``K[:, idx]``, a new array laid out as NumPy lays out ``K[:, idx]`` of an array."""
        return self._gather(idx, None)

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``K[np.ix_(rows, cols)]``."""
        return self._gather(cols, np.asarray(rows, dtype=np.intp).ravel())

    def full(self) -> np.ndarray:
        """The whole matrix."""
        return self.columns(np.arange(self.shape[0]))


def as_kernel(K) -> np.ndarray | KernelColumns:
    """``K`` as a float array, or unchanged when it is a :class:`KernelColumns`."""
    return K if isinstance(K, KernelColumns) else np.asarray(K, dtype=float)


def kernel_columns(K: np.ndarray | KernelColumns, idx: np.ndarray) -> np.ndarray:
    """``K[:, idx]`` of an array or a :class:`KernelColumns`."""
    return K.columns(idx) if isinstance(K, KernelColumns) else K[:, idx]


def kernel_block(K: np.ndarray | KernelColumns, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``K[np.ix_(rows, cols)]`` of an array or a :class:`KernelColumns`."""
    if isinstance(K, KernelColumns):
        return K.block(rows, cols)
    return K[np.ix_(rows, cols)]


def rbf_columns(D2: np.ndarray, sigma: float) -> KernelColumns:
    """The RBF kernel of squared distances ``D2`` by columns: the values of
    :func:`rbf_from_sqdist` ``(D2, sigma)`` at the columns read.

    Raises
    ------
    ValueError
        If ``D2`` is not a square 2-D array or ``sigma`` is not positive and finite.
    """
    if np.ndim(D2) != 2 or D2.shape[0] != D2.shape[1]:
        raise ValueError(f"D2 must be a square 2-D array, got shape {np.shape(D2)}")
    check_positive("sigma", sigma)
    return KernelColumns(D2.shape[0], lambda idx: rbf_from_sqdist(D2[:, idx], sigma))


def _check_degree(degree) -> None:
    check_real("polynomial degree", degree)
    if not (np.isfinite(degree) and int(degree) == degree and degree >= 1):
        raise ValueError(f"polynomial degree must be a positive integer, got {degree}")


@dataclass(frozen=True)
class Kernel:
    """A kernel with its parameters.

    Parameters
    ----------
    name : {"rbf", "linear", "poly", "sigmoid"}
    sigma : float
        RBF width (``rbf`` only).
    degree, gamma, coef0 : float
        Polynomial ``(gamma <x, x'> + coef0)^degree`` and sigmoid ``tanh(gamma <x, x'> + coef0)``.
    """

    name: str = "rbf"
    sigma: float = 1.0
    degree: int = 3
    gamma: float = 1.0
    coef0: float = 0.0
    _extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.name not in KERNELS:
            raise ValueError(f"unknown kernel {self.name!r}; choose one of {KERNELS}")
        if self.name == "rbf":
            check_positive("RBF sigma", self.sigma)
        if self.name in ("poly", "sigmoid"):
            check_positive("kernel gamma", self.gamma)
            check_real("kernel coef0", self.coef0)
            if not np.isfinite(self.coef0):
                raise ValueError(f"kernel coef0 must be finite, got {self.coef0}")
        if self.name == "poly":
            _check_degree(self.degree)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Kernel:
        """Build from a ``best_params_``-style dict (keys kernel, sigma/gamma, degree, coef0).

        Raises
        ------
        ValueError
            If an RBF kernel has neither ``sigma`` nor ``gamma``, or a parameter is out of
            range (a polynomial degree that is not a positive integer, e.g. 2.5).
        """
        name = params.get("kernel", "rbf")
        if name == "rbf":
            if "sigma" in params:
                return cls("rbf", sigma=float(params["sigma"]))
            if "gamma" not in params:
                raise ValueError(
                    f"RBF kernel parameters need 'sigma' or 'gamma', got keys {sorted(params)}"
                )
            return cls("rbf", sigma=sigma_from_gamma(float(params["gamma"])))
        degree = params.get("degree", 3)
        if name == "poly":  # no silent truncation of a degree like 2.5
            degree = float(degree)
            _check_degree(degree)
        return cls(
            name,
            degree=int(degree),
            gamma=float(params.get("gamma", 1.0)),
            coef0=float(params.get("coef0", 0.0)),
        )

    def sklearn_params(self) -> dict[str, Any]:
        """Keyword arguments for :class:`sklearn.svm.SVC` that give the same kernel."""
        if self.name == "rbf":
            return {"kernel": "rbf", "gamma": gamma_from_sigma(self.sigma)}
        if self.name == "linear":
            return {"kernel": "linear"}
        return {
            "kernel": self.name,
            "gamma": self.gamma,
            "degree": int(self.degree),
            "coef0": self.coef0,
        }

    def params(self) -> dict[str, Any]:
        """The ``best_params_`` entries describing this kernel."""
        if self.name == "rbf":
            return {"kernel": "rbf", "sigma": self.sigma, "gamma": gamma_from_sigma(self.sigma)}
        if self.name == "linear":
            return {"kernel": "linear"}
        out: dict[str, Any] = {"kernel": self.name, "gamma": self.gamma, "coef0": self.coef0}
        if self.name == "poly":
            out["degree"] = int(self.degree)
        return out

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted, exactly symmetric)."""
        return kernel_matrix(X, Y, self)


def kernel_matrix(X: np.ndarray, Y: np.ndarray | None, kernel: Kernel) -> np.ndarray:
    """Kernel matrix between the rows of ``X`` and ``Y`` (train x train when ``Y`` is None),
    after checking that they are finite 2-D arrays with as many features."""
    _check_kernel(kernel)
    X = np.asarray(X, dtype=float)
    _check_points(X)
    if Y is not None:
        Y = np.asarray(Y, dtype=float)
        _check_points(Y, "Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match")
    return _kernel_matrix(X, Y, kernel)


def _kernel_matrix(X: np.ndarray, Y: np.ndarray | None, kernel: Kernel) -> np.ndarray:
    """:func:`kernel_matrix` of checked float rows (a final estimator's, after its own
    input check; issue #55)."""
    if kernel.name == "rbf":
        return rbf_from_sqdist(_squared_distances(X, Y), kernel.sigma)
    G = X @ (X if Y is None else Y).T
    if Y is None:
        G = 0.5 * (G + G.T)
    if kernel.name == "linear":
        return G
    if kernel.name == "poly":
        return (kernel.gamma * G + kernel.coef0) ** int(kernel.degree)
    return np.tanh(kernel.gamma * G + kernel.coef0)


def rbf_dlogsigma(K: np.ndarray, D2: np.ndarray, sigma: float) -> np.ndarray:
    """Derivative of the RBF kernel matrix with respect to ``log sigma``.

    dK/d(log sigma) = sigma dK/dsigma = K * D2 / sigma^2.

    Raises
    ------
    ValueError
        If ``sigma`` is not positive and finite.
    """
    check_positive("sigma", sigma)
    out = np.divide(D2, float(sigma) ** 2, dtype=float)  # the one new array
    out *= K
    return out


def kernel_dlogparams(X: np.ndarray, kernel: Kernel) -> dict[str, np.ndarray]:
    """Derivatives of the train x train kernel matrix with respect to its log-parameters.

    Returns a dict: ``{"log_sigma": ...}`` for RBF, ``{"log_gamma": ..., }`` for poly and
    sigmoid (plus ``"coef0"``, a plain derivative, since coef0 may be zero or negative),
    ``{}`` for the parameter-free linear kernel.
    """
    _check_kernel(kernel)
    X = np.asarray(X, dtype=float)
    if kernel.name != "rbf":  # squared_distances checks the points of the RBF kernel
        _check_points(X)
    if kernel.name == "rbf":
        D2 = squared_distances(X)
        return {"log_sigma": rbf_dlogsigma(rbf_from_sqdist(D2, kernel.sigma), D2, kernel.sigma)}
    if kernel.name == "linear":
        return {}
    G = X @ X.T
    G = 0.5 * (G + G.T)
    u = kernel.gamma * G + kernel.coef0
    if kernel.name == "poly":
        p = int(kernel.degree)
        base = p * u ** (p - 1)
    else:
        base = 1.0 - np.tanh(u) ** 2
    return {"log_gamma": base * kernel.gamma * G, "coef0": base}
