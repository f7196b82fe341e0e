from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel

from svmtune.kernels import (
    Kernel,
    KernelColumns,
    as_kernel,
    gamma_from_sigma,
    kernel_block,
    kernel_columns,
    kernel_dlogparams,
    rbf_columns,
    rbf_from_sqdist,
    sigma_from_gamma,
    squared_distances,
)


def test_sigma_gamma_roundtrip():
    for s in [1e-3, 0.5, 1.0, 7.0, 300.0]:
        assert gamma_from_sigma(s) == pytest.approx(1 / (2 * s * s))
        assert sigma_from_gamma(gamma_from_sigma(s)) == pytest.approx(s)
    for bad in (0.0, -1.0, np.nan, np.inf, np.float64(-2.0), np.array([1.0, 0.0])):
        with pytest.raises(ValueError, match="sigma must be a positive finite number"):
            gamma_from_sigma(bad)
    # Python floats, numpy scalars and arrays give the same bits
    s = np.exp(np.random.default_rng(0).uniform(-20, 20, 1000))
    assert [gamma_from_sigma(float(v)) for v in s] == list(gamma_from_sigma(s))
    assert [gamma_from_sigma(v) for v in s] == list(gamma_from_sigma(s))
    with pytest.raises(ValueError, match="gamma must be a positive finite number"):
        sigma_from_gamma(-1.0)


def test_squared_distances_safe():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4)) * 1e4 + 1e6  # catastrophic cancellation territory
    D = squared_distances(X)
    assert np.all(D >= 0) and np.all(np.diag(D) == 0) and np.array_equal(D, D.T)
    ref = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert np.allclose(D, ref, rtol=1e-6, atol=1e-6 * ref.max())


@pytest.mark.parametrize("name", ["rbf", "linear", "poly", "sigmoid"])
def test_kernels_match_sklearn(name):
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(20, 3)), rng.normal(size=(7, 3))
    k = Kernel(name, sigma=1.3, gamma=0.4, degree=3, coef0=0.5)
    if name == "rbf":
        ref = rbf_kernel(Y, X, gamma=gamma_from_sigma(1.3))
    elif name == "linear":
        ref = Y @ X.T
    elif name == "poly":
        ref = polynomial_kernel(Y, X, degree=3, gamma=0.4, coef0=0.5)
    else:
        ref = sigmoid_kernel(Y, X, gamma=0.4, coef0=0.5)
    assert np.allclose(k(Y, X), ref, atol=1e-12)
    K = k(X)
    assert np.array_equal(K, K.T)
    # params round-trip through the best_params_ dict
    assert Kernel.from_params(k.params()).params() == k.params()


@pytest.mark.parametrize(
    "kernel,param",
    [
        (Kernel("rbf", sigma=0.9), "log_sigma"),
        (Kernel("poly", gamma=0.3, degree=2, coef0=1.0), "log_gamma"),
        (Kernel("sigmoid", gamma=0.3, coef0=0.2), "log_gamma"),
        (Kernel("poly", gamma=0.3, degree=3, coef0=1.0), "coef0"),
    ],
)
def test_kernel_derivatives_central_differences(kernel, param):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(15, 3))
    dK = kernel_dlogparams(X, kernel)[param]
    h = 1e-6

    def at(delta):
        if param == "log_sigma":
            return Kernel("rbf", sigma=kernel.sigma * np.exp(delta))(X)
        if param == "log_gamma":
            return Kernel(
                kernel.name,
                gamma=kernel.gamma * np.exp(delta),
                degree=kernel.degree,
                coef0=kernel.coef0,
            )(X)
        return Kernel(
            kernel.name, gamma=kernel.gamma, degree=kernel.degree, coef0=kernel.coef0 + delta
        )(X)

    fd = (at(h) - at(-h)) / (2 * h)
    assert np.allclose(dK, fd, rtol=1e-6, atol=1e-8)


def test_invalid_kernels():
    with pytest.raises(ValueError, match="unknown kernel"):
        Kernel("laplace")
    with pytest.raises(ValueError, match="sigma must be a positive finite number"):
        Kernel("rbf", sigma=0.0)
    with pytest.raises(ValueError, match="degree"):
        Kernel("poly", degree=0)


def test_kernel_columns_equal_the_matrix_and_are_computed_once():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    D2 = squared_distances(X)
    full = rbf_from_sqdist(D2, 1.3)
    asked = []

    def compute(idx):
        asked.append(idx.copy())
        return rbf_from_sqdist(D2[:, idx], 1.3)

    K = KernelColumns(40, compute)
    assert K.shape == (40, 40) and K.n_computed == 0
    a = np.array([5, 2, 5, 30])  # unordered, repeated
    assert np.array_equal(K.columns(a), full[:, a])  # exactly: elementwise the same values
    assert K.columns(a).flags.f_contiguous == full[:, a].flags.f_contiguous  # same layout
    assert K.n_computed == 3 and [list(x) for x in asked] == [[2, 5, 30]]
    rows = np.array([0, 39, 5])
    assert np.array_equal(K.block(rows, np.array([2, 7])), full[np.ix_(rows, [2, 7])])
    assert [list(x) for x in asked[1:]] == [[7]]  # only the new column
    for step in range(0, 40, 9):  # the store grows several times
        assert np.array_equal(K.columns(np.arange(step, 40)), full[:, step:])
    assert np.array_equal(K.full(), full) and K.n_computed == 40
    assert sum(len(x) for x in asked) == 40  # every column computed once
    assert np.array_equal(rbf_columns(D2, 1.3).columns(a), full[:, a])
    assert kernel_columns(full, a) is not full and np.array_equal(kernel_columns(K, a), full[:, a])
    assert np.array_equal(kernel_block(full, rows, a), kernel_block(K, rows, a))
    assert as_kernel(K) is K and as_kernel([[1, 0], [0, 1]]).dtype == float


@pytest.mark.parametrize(
    "kernel",
    [Kernel("rbf", sigma=0.8), Kernel("linear"), Kernel("poly", degree=2, gamma=0.5, coef0=1.0)]
    + [Kernel("sigmoid", gamma=0.1, coef0=-0.5)],
    ids=["rbf", "linear", "poly", "sigmoid"],
)
def test_kernel_columns_of_points_equal_the_kernel_matrix(kernel):
    X = np.random.default_rng(1).normal(size=(60, 4))
    K = KernelColumns.of(X, kernel)
    a = np.array([7, 0, 59, 7])
    np.testing.assert_allclose(K.columns(a), kernel(X)[:, a], rtol=1e-12, atol=1e-14)
    assert K.n_computed == 3 and K.source[1] is kernel and np.array_equal(K.source[0], X)
    if kernel.name == "rbf":  # the diagonal exactly, as in the symmetric matrix
        assert np.array_equal(K.columns(a)[a, np.arange(4)], np.ones(4))


def test_kernel_columns_computed_in_blocks_read_as_one_matrix(monkeypatch):
    """Columns are computed at most COLUMN_BLOCK at a time and kept in their blocks; reads
    across blocks give the values and the memory layout of indexing one array."""
    import svmtune.kernels as kmod

    monkeypatch.setattr(kmod, "COLUMN_BLOCK", 3)
    X = np.random.default_rng(2).normal(size=(30, 2))
    full = rbf_from_sqdist(squared_distances(X), 0.7)
    sizes = []

    def compute(idx):
        sizes.append(idx.size)
        return full[:, idx]

    K = KernelColumns(30, compute)
    K.columns(np.array([4, 9, 1, 20, 11]))  # two blocks: [1, 4, 9], [11, 20]
    K.columns(np.array([0, 9]))  # one more
    assert sizes == [3, 2, 1] and K.n_computed == 6
    a, rows = np.array([20, 0, 4, 9, 20, 11, 1]), np.array([29, 0, 4, 4])
    for got, want in ((K.columns(a), full[:, a]), (K.block(rows, a), full[np.ix_(rows, a)])):
        assert np.array_equal(got, want)
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == (
            want.flags.c_contiguous,
            want.flags.f_contiguous,
        )
    assert sizes == [3, 2, 1]  # nothing recomputed


def test_kernel_columns_reject_a_wrong_shape():
    K = KernelColumns(5, lambda idx: np.zeros((5, idx.size + 1)))
    with pytest.raises(ValueError, match="shape"):
        K.columns(np.array([1]))


@pytest.mark.parametrize("n", [1, 7, 512, 513, 1100])
def test_blockwise_symmetrise_equals_the_plain_formula(n):
    from svmtune.kernels import _symmetrise

    D = np.random.default_rng(n).random((n, n))
    want = 0.5 * (D + D.T)
    got = _symmetrise(D.copy())
    assert np.array_equal(got, want) and np.array_equal(got, got.T)


# --- input validation at the public boundary ------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"name": "poly", "coef0": np.nan}, ValueError, "coef0 must be finite"),
        ({"name": "sigmoid", "coef0": np.inf}, ValueError, "coef0 must be finite"),
        ({"name": "poly", "degree": np.nan}, ValueError, "degree must be a positive integer"),
        ({"name": "rbf", "sigma": "1"}, TypeError, "sigma must be a real number"),
        ({"name": "rbf", "sigma": None}, TypeError, "sigma must be a real number"),
    ],
)
def test_kernel_rejects_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Kernel(**kwargs)


def test_from_params_validates():
    with pytest.raises(ValueError, match="degree must be a positive integer, got 2.5"):
        Kernel.from_params({"kernel": "poly", "degree": 2.5})
    with pytest.raises(ValueError, match="need 'sigma' or 'gamma'"):
        Kernel.from_params({"kernel": "rbf"})
    assert Kernel.from_params({"kernel": "poly", "degree": 2.0}).degree == 2


@pytest.mark.parametrize("name", ["linear", "poly", "sigmoid"])
def test_non_rbf_kernels_reject_bad_points(name):
    X = np.random.default_rng(0).normal(size=(6, 2))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        Kernel(name)(bad)
    with pytest.raises(ValueError, match="Y contains NaN or infinity"):
        Kernel(name)(X, bad)
    with pytest.raises(ValueError, match="must be a 2-D array"):
        Kernel(name)(X[:, 0])
    with pytest.raises(ValueError, match="must be a 2-D array"):
        kernel_dlogparams(X[:, 0], Kernel(name))


def test_kernel_functions_need_a_kernel_object():
    X = np.zeros((3, 2))
    with pytest.raises(TypeError, match="kernel must be a svmtune.kernels.Kernel"):
        kernel_dlogparams(X, "rbf")


@pytest.mark.parametrize("sigma", [0.0, -1.0, np.nan, np.inf])
def test_rbf_helpers_reject_bad_sigma(sigma):
    from svmtune.kernels import rbf_dlogsigma

    D2 = squared_distances(np.random.default_rng(0).normal(size=(5, 2)))
    K = rbf_from_sqdist(D2, 1.0)
    for call in (
        lambda: rbf_from_sqdist(D2, sigma),
        lambda: rbf_dlogsigma(K, D2, sigma),
        lambda: rbf_columns(D2, sigma),
    ):
        with pytest.raises(ValueError, match="sigma must be a positive finite number"):
            call()


def test_rbf_columns_needs_a_square_matrix():
    D2 = squared_distances(np.random.default_rng(0).normal(size=(5, 2)))
    with pytest.raises(ValueError, match="D2 must be a square 2-D array"):
        rbf_columns(D2[0], 1.0)


@pytest.mark.parametrize("shape", [(300, 5), (200, 50), (7, 3)])
def test_unchecked_squared_distances_are_the_checked_ones(shape):
    """``_squared_distances`` (rows checked once at the door) gives the numbers of
    ``squared_distances`` (scikit-learn's checked ``euclidean_distances``) bit for bit, with
    and without ``Y``, so that skipping the check moves no selection."""
    from svmtune.kernels import _squared_distances

    rng = np.random.RandomState(shape[0])
    X = rng.randn(*shape) * rng.uniform(0.1, 10.0, shape[1])
    Y = rng.randn(shape[0] // 2 + 1, shape[1])
    np.testing.assert_array_equal(_squared_distances(X), squared_distances(X))
    np.testing.assert_array_equal(_squared_distances(X, Y), squared_distances(X, Y))
