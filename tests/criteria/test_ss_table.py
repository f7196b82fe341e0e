"""The C_opt table builder (S&S ratio §4): analytic losses by Monte Carlo, QPs by cvxopt."""

from __future__ import annotations

import json

import numpy as np
import pytest

from svmtune.criteria.ss_copt import ExpPiece, load_copt_table
from svmtune.criteria.ss_table import (
    build_table,
    c_opt_from_curve,
    expected_error,
    expected_hinge_loss,
    fit_exp_piece,
    gaussian_margin_hinge,
    hinge_curves,
    linear_svm_path,
    linear_svm_qp,
    main,
    simulate_two_gaussians,
)
from svmtune.kernels import Kernel
from svmtune.svm import fit_l1_svm


def test_simulated_classes():
    X, y = simulate_two_gaussians((3000, 2000), 2.0, (0.5, 0.25), dim=3, random_state=0)
    assert X.shape == (5000, 3) and np.sum(y == 1) == 2000
    np.testing.assert_allclose(X[y == -1].mean(0), [0, 0, 0], atol=0.05)
    np.testing.assert_allclose(X[y == 1].mean(0), [2, 0, 0], atol=0.05)
    np.testing.assert_allclose(X[y == -1].std(0), 0.5, rtol=0.05)
    np.testing.assert_allclose(X[y == 1].std(0), 0.25, rtol=0.05)
    noise = np.random.default_rng(1).standard_normal((20, 2))
    A, _ = simulate_two_gaussians((10, 10), 1.0, (0.1, 0.1), noise=noise)
    B, _ = simulate_two_gaussians((10, 10), 1.0, (0.2, 0.2), noise=noise)
    np.testing.assert_allclose(B[:10], 2 * A[:10])
    C, _ = simulate_two_gaussians((10, 10), 1.0, (np.array([0.1, 1.0]), 0.1), noise=noise)
    np.testing.assert_allclose(C[:10, 1], noise[:10, 1])
    with pytest.raises(ValueError):
        simulate_two_gaussians((0, 10), 1.0, (0.1, 0.1))
    with pytest.raises(ValueError):
        simulate_two_gaussians((10, 10), 1.0, (0.1, 0.1), noise=noise[:5])


def test_gaussian_margin_hinge_monte_carlo():
    rng = np.random.default_rng(0)
    for mean, std in [(0.3, 0.5), (2.0, 0.4), (-1.0, 2.0), (1.0, 1e-3)]:
        m = rng.normal(mean, std, 1_000_000)
        mc = np.maximum(0.0, 1.0 - m)
        assert gaussian_margin_hinge(mean, std) == pytest.approx(
            mc.mean(), abs=5 * mc.std() / 1000 + 1e-9
        )
    assert gaussian_margin_hinge(0.25, 0.0) == pytest.approx(0.75)
    assert gaussian_margin_hinge(1.5, 0.0) == 0.0


@pytest.mark.parametrize("sigmas", [(0.3, 0.3), (0.2, 0.45), (np.array([0.3, 0.8]), 0.3)])
def test_expected_losses_monte_carlo(sigmas):
    w, b = np.array([2.5, -0.7]), -1.1
    X, y = simulate_two_gaussians((300_000, 200_000), 1.0, sigmas, random_state=1)
    m = y * (X @ w + b)
    prior = 0.4
    # the two classes are averaged with the given prior, so reweight the sample
    wts = np.where(y > 0, prior / 200_000, (1 - prior) / 300_000)
    hinge_mc = np.sum(wts * np.maximum(0.0, 1.0 - m))
    err_mc = np.sum(wts * (m < 0))
    assert expected_hinge_loss(w, b, d=1.0, sigmas=sigmas, prior_pos=prior) == pytest.approx(
        hinge_mc, rel=0.01
    )
    assert expected_error(w, b, d=1.0, sigmas=sigmas, prior_pos=prior) == pytest.approx(
        err_mc, rel=0.02, abs=1e-4
    )
    # stacked (w, b)
    W = np.vstack([w, 2 * w])
    B = np.array([b, 2 * b])
    H = expected_hinge_loss(W, B, d=1.0, sigmas=sigmas, prior_pos=prior)
    assert H.shape == (2,)
    assert H[0] == pytest.approx(expected_hinge_loss(w, b, d=1.0, sigmas=sigmas, prior_pos=prior))


def _cvxopt_linear_svm(X, y, C):
    cvxopt = pytest.importorskip("cvxopt")
    n, p = X.shape
    # variables (w, b, xi): min 1/2 |w|^2 + C sum xi, -y(Xw + b) - xi <= -1, -xi <= 0
    P = np.zeros((p + 1 + n, p + 1 + n))
    P[:p, :p] = np.eye(p)
    q = np.r_[np.zeros(p + 1), C * np.ones(n)]
    G = np.zeros((2 * n, p + 1 + n))
    G[:n, :p] = -(y[:, None] * X)
    G[:n, p] = -y
    G[:n, p + 1 :] = -np.eye(n)
    G[n:, p + 1 :] = -np.eye(n)
    h = np.r_[-np.ones(n), np.zeros(n)]
    cvxopt.solvers.options["show_progress"] = False
    cvxopt.solvers.options["abstol"] = 1e-10
    cvxopt.solvers.options["reltol"] = 1e-10
    cvxopt.solvers.options["feastol"] = 1e-10
    M = cvxopt.matrix
    sol = cvxopt.solvers.qp(M(P + 1e-12 * np.eye(len(q))), M(q), M(G), M(h))
    x = np.array(sol["x"]).ravel()
    return x[:p], x[p]


@pytest.mark.parametrize("C", [0.1, 3.0, 100.0])
def test_linear_svm_qp_against_cvxopt_and_libsvm(C):
    X, y = simulate_two_gaussians((30, 25), 1.0, (0.35, 0.35), random_state=2)
    w, b = linear_svm_qp(X, y, C)
    w_ref, b_ref = _cvxopt_linear_svm(X, y, C)
    np.testing.assert_allclose(w, w_ref, atol=1e-4 * max(1, np.abs(w_ref).max()))
    assert b == pytest.approx(b_ref, abs=1e-4 * max(1, abs(b_ref)))
    sol = fit_l1_svm(y, C, X=X, kernel=Kernel("linear"), tol=1e-8)
    w_lib = sol.dual_coef[sol.support] @ X[sol.support]
    np.testing.assert_allclose(w, w_lib, atol=1e-3 * max(1, np.abs(w).max()))


def test_linear_svm_path_matches_individual_fits():
    Cs = 2.0 ** np.arange(-2, 9, 1.0)
    for r in (0.05, 0.4):  # separable (hard-margin shortcut) and overlapping
        X, y = simulate_two_gaussians((40, 40), 1.0, (r, r), random_state=3)
        W, B = linear_svm_path(X, y, Cs)
        Wq, Bq = linear_svm_path(X, y, Cs, max_libsvm_iter=0)  # QP from the second C on
        for k, C in enumerate(Cs):
            w, b = linear_svm_qp(X, y, C)
            tol = 1e-3 * max(1.0, np.abs(w).max())
            np.testing.assert_allclose(W[k], w, atol=tol)
            np.testing.assert_allclose(Wq[k], w, atol=tol)
            assert B[k] == pytest.approx(b, abs=tol)
    with pytest.raises(ValueError, match="increasing"):
        linear_svm_path(X, y, Cs[::-1])


def test_c_opt_from_curve_rules():
    x = np.arange(-4, 8.01, 0.5)
    m = (x - 2.3) ** 2 + 1.0
    assert c_opt_from_curve(x, m) == pytest.approx(2.3)
    # boundary minimum: no refinement
    assert c_opt_from_curve(x, (x - 20.0) ** 2) == pytest.approx(8.0)
    # flat after the hard margin: 1-SE rule takes the first C within one SE of the minimum
    flat = np.where(x < 3, 1.0 + 0.1 * (3 - x), 1.0)
    se = np.full_like(x, 0.05)
    assert c_opt_from_curve(x, flat, se, rule="1se") == pytest.approx(2.5)
    with pytest.raises(ValueError, match="se_loss"):
        c_opt_from_curve(x, flat, rule="1se")
    with pytest.raises(ValueError, match="rule"):
        c_opt_from_curve(x, flat, se, rule="max")
    with pytest.raises(ValueError):
        c_opt_from_curve(x[:2], m[:2])


def test_fit_exp_piece_recovers_constants():
    r = np.linspace(0.02, 0.16, 12)
    true = ExpPiece(0.7345, 33.6915, -0.5247)
    fit = fit_exp_piece(r, true(r))
    np.testing.assert_allclose([fit.a, fit.b, fit.c], [true.a, true.b, true.c], rtol=1e-4)
    falling = ExpPiece(5164.4657, -21.2514, -0.8548)
    r2 = np.linspace(1 / 6, 0.3, 8)
    fit2 = fit_exp_piece(r2, falling(r2))
    np.testing.assert_allclose(fit2(r2), falling(r2), rtol=1e-6)
    with pytest.raises(ValueError):
        fit_exp_piece(r[:2], true(r)[:2])


def test_optimal_c_scales_as_one_over_d_squared():
    """The table is built at d = 1; at separability d its loss curve is that of C * d^2."""
    Cs = 2.0 ** np.arange(-2, 6, 1.0)
    h1, _ = hinge_curves([0.2], Cs, n_per_class=(30, 30), runs=2, d=1.0, seed=4)
    h2, _ = hinge_curves([0.2], Cs / 4.0, n_per_class=(30, 30), runs=2, d=2.0, seed=4)
    np.testing.assert_allclose(h1, h2, rtol=1e-3, atol=1e-6)


def test_build_table_tiny_and_cli(tmp_path):
    kw = dict(
        ratios=[0.05, 0.1, 0.15, 0.2, 0.25, 0.3],
        log2_C=np.arange(-2, 8.01, 1.0),
        runs=3,
        seed=1,
        n_per_class=(25, 25),
        n_boot=10,
    )
    a = build_table(**kw)
    b = build_table(**kw)
    assert a["log2_c_opt"] == b["log2_c_opt"]  # reproducible from the seed
    for key in (
        "command",
        "seed",
        "runs",
        "ratios",
        "log2_C",
        "log2_c_opt",
        "log2_c_opt_lo",
        "log2_c_opt_hi",
        "log2_c_opt_1se",
        "fit",
        "paper",
        "mean_hinge",
        "peak",
    ):
        assert key in a
    assert np.all(np.array(a["log2_c_opt_lo"]) <= np.array(a["log2_c_opt_hi"]))
    assert len(a["mean_hinge"]) == 6 and len(a["mean_hinge"][0]) == 11
    out = tmp_path / "t.json"
    argv = [
        "--out",
        str(out),
        "--runs",
        "2",
        "--n-per-class",
        "20",
        "--ratio-grid",
        "0.05",
        "0.3",
        "0.05",
        "--ratio-grid",
        "0.4",
        "0.6",
        "0.1",
        "--log2-C",
        "-2",
        "6",
        "1",
        "--n-boot",
        "5",
    ]
    assert main(argv) == 0
    table = json.loads(out.read_text())
    assert table["command"].startswith("python -m svmtune.criteria.ss_table --out")
    assert table["runs"] == 2 and table["seed"] == 0 and table["n_per_class"] == [20, 20]
    assert len(table["ratios"]) == 9 and table["fit"]["tail"] is not None
    assert table["fit"]["r_max"] == pytest.approx(0.6)
    curve = load_copt_table(out)
    assert np.all(curve(np.linspace(0, 0.6, 13)) > 0)
    with pytest.raises(SystemExit):
        main(["--out", str(out), "--runs", "1"])


def test_shipped_table_is_consistent_with_its_own_data():
    from importlib import resources

    text = resources.files("svmtune.criteria").joinpath("data/ss_copt_table.json").read_text()
    table = json.loads(text)
    assert table["command"].startswith("python -m svmtune.criteria.ss_table")
    for key in ("seed", "runs", "n_per_class", "dim", "log2_C", "ratios", "versions"):
        assert key in table
    r = np.array(table["ratios"])
    C = 2.0 ** np.array(table["log2_c_opt"])
    fit = table["fit"]
    # the shipped pieces are the fits of the shipped optima (no hand-edited constants)
    for name, mask in [
        ("rising", r < fit["r_break"]),
        ("falling", (r >= fit["r_break"]) & (r <= fit["r_kernel"] + 1e-12)),
        ("tail", r >= fit["r_kernel"] - 1e-12),
    ]:
        ref = fit_exp_piece(r[mask], C[mask])
        piece = ExpPiece(**fit[name])
        np.testing.assert_allclose(piece(r[mask]), ref(r[mask]), rtol=1e-6)
    # C_opt rises then falls, with its peak near the paper's break at sigma / d = 1/6
    assert abs(table["peak"]["ratio"] - 1 / 6) < 0.05


@pytest.mark.slow
def test_shipped_table_regenerates_within_its_simulation_error():
    """The builder run again, with the shipped table's seed, runs, sizes and C grid, on three
    of its ratios (one per piece: rising, near the peak, falling): every run reuses its
    draws, so the mean hinge curves must land within one standard error of the shipped ones
    (which they reproduce to rounding with the same libraries; libsvm's tolerance and
    library versions move them far less than that), and the argmin C_opt of each within the
    shipped bootstrap band."""
    from importlib import resources

    text = resources.files("svmtune.criteria").joinpath("data/ss_copt_table.json").read_text()
    table = json.loads(text)
    ratios = np.array(table["ratios"])
    x = np.array(table["log2_C"])
    picked = [0.06, 0.14, 0.3]
    H, _ = hinge_curves(
        picked,
        2.0**x,
        n_per_class=tuple(table["n_per_class"]),
        runs=table["runs"],
        dim=table["dim"],
        seed=table["seed"],
    )
    for k, r in enumerate(picked):
        i = int(np.flatnonzero(np.isclose(ratios, r))[0])
        mean = H[:, k].mean(axis=0)
        shipped = np.array(table["mean_hinge"][i])
        se = np.array(table["se_hinge"][i])
        # the shipped numbers are rounded to 6 decimals (se to 7)
        np.testing.assert_array_less(np.abs(mean - shipped), se + 1e-6, err_msg=f"ratio {r}")
        copt = c_opt_from_curve(x, mean)
        assert table["log2_c_opt_lo"][i] - 1e-6 <= copt <= table["log2_c_opt_hi"][i] + 1e-6, r
