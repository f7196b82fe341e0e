"""The likelihood-space distance (LD) of Menezes, Torres & Braga (2019) for the RBF width.

* Class likelihood of a point (LD eq. (9)):  ``B(x, C_j) = 1/N_j sum_{k in C_j} K(x, x_k)``;
  the training samples mapped to ``(B(x, C_1), B(x, C_2))`` form the likelihood space (Fig. 2b).
* Class similarity (eq. (10)):  ``S_ij = 1/N_i sum_{k in C_i} B(x_k, C_j)``, i.e. the
  class-block mean ``M_ij`` of the kernel matrix over all ordered pairs (self-pairs included:
  as sigma -> 0, ``S_ii -> 1/N_i``, as the paper states).
* ``V = [[S_11, S_12], [S_21, S_22]]`` with rows ``V_1``, ``V_2`` (eq. (11)), and the objective
  (eq. (12)-(13))  ``D(V_1, V_2) = ||V_1 - V_2|| cos(V_1, V_2)``, maximised over sigma (eq. (14)).

Both limits give ``D -> 0``: sigma -> 0 makes ``V_1 ⟂ V_2`` (cos = 0), sigma -> inf makes
``V_1 = V_2 = (1, 1)``.

Multiclass (the paper converts glass and segmentation to one-vs-all problems): each class
``c`` against the union of the others gives a 2 x 2 ``V`` built from the k x k block means
(:func:`ovr_similarities`, no further pass over the data), and one width is chosen for all
tasks by maximising the **mean** of the per-task objectives (``reduce="mean"``; ``"min"``
maximises the worst task).  For a one-vs-one final SVM the tasks are the class pairs
(``scheme="ovo"``, :func:`ovo_similarities`).

With sample weights, ``N_j`` and the sums become weight totals and weighted sums.
"""

from __future__ import annotations

import numpy as np

from svmtune.criteria._common import BlockStats, _check_class_weights, encode_classes
from svmtune.criteria.blocks import RBFBlocks, rbf_class_sums

__all__ = [
    "REDUCTIONS",
    "class_likelihoods",
    "likelihood_map",
    "class_similarities",
    "ovr_similarities",
    "ovo_similarities",
    "ld_distance",
    "ld_objective",
    "ld_curve",
]

REDUCTIONS = ("mean", "min")
SCHEMES = ("ovr", "ovo")


def class_likelihoods(
    X: np.ndarray,
    y: np.ndarray,
    sigmas,
    *,
    X_eval: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    chunk_size: int = 2**20,
) -> np.ndarray:
    """``B(x, C_j)`` of LD eq. (9) for every evaluation point, class and width.

    Returns an array ``(s, m, k)`` (``m`` evaluation points, default the training samples,
    each including itself in its own class average).
    """
    sums = rbf_class_sums(
        X, y, sigmas, X_eval=X_eval, sample_weight=sample_weight, chunk_size=chunk_size
    )
    codes, k = encode_classes(y)
    w = None if sample_weight is None else np.asarray(sample_weight, float)
    return sums / np.bincount(codes, weights=w, minlength=k)


def likelihood_map(X: np.ndarray, y: np.ndarray, sigma: float, **options) -> np.ndarray:
    """The training samples mapped into likelihood space at one width (LD Fig. 2b): ``(n, k)``."""
    if np.ndim(sigma) != 0:
        raise ValueError(f"likelihood_map takes one width sigma, got shape {np.shape(sigma)}")
    return class_likelihoods(X, y, float(sigma), **options)[0]


def class_similarities(stats: BlockStats) -> np.ndarray:
    """``V`` of LD eq. (11): the class similarities ``S_ij`` (eq. (10)), shape ``(s, k, k)``.

    ``S_ij`` is the mean over ``x`` in ``C_i`` of ``B(x, C_j)``, which is the class-block mean
    of the kernel matrix.
    """
    return stats.means


def _check_means(means) -> np.ndarray:
    """``means`` as a float array of ``(s, k, k)`` class-block means, finite."""
    M = np.asarray(means, float)
    if M.ndim != 3 or M.shape[1] != M.shape[2]:
        raise ValueError(f"means must be class-block means of shape (s, k, k), got {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError("means contains NaN or infinity")
    return M


def ovr_similarities(means: np.ndarray, class_weights: np.ndarray) -> np.ndarray:
    """2 x 2 similarity matrices of the one-vs-rest tasks from the k x k block means.

    For task ``c``: class 1 is ``c`` and class 2 the union ``R`` of the others, with
    ``S_cR = sum_{b != c} W_b S_cb / W_R`` and ``S_RR = sum_{a, b != c} W_a W_b S_ab / W_R^2``.

    Parameters
    ----------
    means : array (s, k, k)
    class_weights : array (k,)

    Returns
    -------
    array (s, k, 2, 2)
    """
    M = _check_means(means)
    W = _check_class_weights(class_weights, M.shape[-1])
    k = W.shape[0]
    out = np.empty(M.shape[:-2] + (k, 2, 2))
    for c in range(k):
        r = np.arange(k) != c
        wr = W[r]
        WR = wr.sum()
        out[..., c, 0, 0] = M[..., c, c]
        out[..., c, 0, 1] = M[..., c, :][..., r] @ wr / WR
        out[..., c, 1, 0] = out[..., c, 0, 1]
        out[..., c, 1, 1] = np.einsum("...ab,a,b->...", M[..., r, :][..., :, r], wr, wr) / WR**2
    return out


def ld_distance(V: np.ndarray) -> np.ndarray:
    """``D(V_1, V_2) = ||V_1 - V_2|| cos(V_1, V_2)`` (LD eq. (12)-(13)) of 2 x 2 matrices ``V``.

    ``V[..., 0, :]`` is ``V_1`` and ``V[..., 1, :]`` is ``V_2``.  A zero vector (impossible for
    a kernel with a positive diagonal) gives ``D = 0``.
    """
    V = np.asarray(V, float)
    if V.shape[-2:] != (2, 2):
        raise ValueError(f"V must end in a 2 x 2 similarity matrix, got shape {V.shape}")
    v1, v2 = V[..., 0, :], V[..., 1, :]
    n1 = np.linalg.norm(v1, axis=-1)
    n2 = np.linalg.norm(v2, axis=-1)
    dot = np.sum(v1 * v2, axis=-1)
    dist = np.linalg.norm(v1 - v2, axis=-1)
    den = n1 * n2
    cos = np.divide(dot, den, out=np.zeros_like(dot), where=den > 0)
    return dist * cos


def ovo_similarities(means: np.ndarray) -> np.ndarray:
    """2 x 2 similarity matrices of the one-vs-one tasks (class pairs ``a < b``).

    The block means of the two classes are the ``k x k`` ones restricted to the pair, so no
    further pass over the data is needed.

    Parameters
    ----------
    means : array (s, k, k)

    Returns
    -------
    array (s, k (k - 1) / 2, 2, 2), pairs in the order ``(0, 1), (0, 2), ..., (k-2, k-1)``
    """
    M = _check_means(means)
    a, b = np.triu_indices(M.shape[-1], k=1)
    out = np.empty(M.shape[:-2] + (a.size, 2, 2))
    out[..., 0, 0] = M[..., a, a]
    out[..., 0, 1] = M[..., a, b]
    out[..., 1, 0] = M[..., b, a]
    out[..., 1, 1] = M[..., b, b]
    return out


def ld_objective(stats: BlockStats, *, reduce: str = "mean", scheme: str = "ovr") -> np.ndarray:
    """The LD objective for every width in ``stats``, shape ``(s,)`` (LD eq. (13)-(14)).

    Binary: ``D`` of the 2 x 2 similarity matrix.  Multiclass: ``D`` of every binary task of
    the final SVM -- one-vs-rest (``scheme="ovr"``, the paper's conversion) or the class pairs
    of libsvm's one-vs-one (``scheme="ovo"``) -- reduced by its mean (default) or minimum.
    """
    if reduce not in REDUCTIONS:
        raise ValueError(f"multiclass reduction must be one of {REDUCTIONS}, got {reduce!r}")
    if scheme not in SCHEMES:
        raise ValueError(f"multiclass scheme must be one of {SCHEMES}, got {scheme!r}")
    if stats.n_classes == 2:
        return ld_distance(stats.means)
    if scheme == "ovo":
        per_task = ld_distance(ovo_similarities(stats.means))
    else:
        per_task = ld_distance(ovr_similarities(stats.means, stats.class_weights))
    return per_task.mean(axis=-1) if reduce == "mean" else per_task.min(axis=-1)


def ld_curve(
    X: np.ndarray,
    y: np.ndarray,
    sigmas,
    *,
    reduce: str = "mean",
    scheme: str = "ovr",
    sample_weight: np.ndarray | None = None,
    **blocks_options,
) -> np.ndarray:
    """The LD objective against sigma (LD Fig. 4); ``blocks_options`` go to ``RBFBlocks``."""
    blocks = RBFBlocks(X, y, sample_weight=sample_weight, **blocks_options)
    return ld_objective(blocks.stats(sigmas), reduce=reduce, scheme=scheme)
