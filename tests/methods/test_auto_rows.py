"""auto's rows to memory (:mod:`svmtune.methods._auto_rows`): subsamples of NumPy, sparse and
dask ``X``, SVC()'s width as a reduction, and the all-rows stage and final model of a dask
``X`` too large to gather."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import svmtune._dask_inputs as dask_inputs
from svmtune.methods._auto_rows import default_sigma, gather_refusal, in_memory_note, take_rows
from svmtune.methods._fidelity import ALL_ROWS_PATH
from svmtune.methods.auto import Auto
from svmtune.methods.base import SelectionContext, TrainingData, get_selector

da = pytest.importorskip("dask.array")


def _problem(n=900, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * rng.normal(size=n)
    return X, (score > np.median(score)).astype(int)


def _too_large(monkeypatch, X) -> None:
    """The door's memory rule refuses ``X`` by one float (a quarter of the memory is its
    share): its subsamples still gather."""
    monkeypatch.setattr(dask_inputs, "available_memory", lambda: 4 * 8 * X.size - 8)


@pytest.mark.parametrize("rows", [[3, 7, 8, 40], [40, 3, 8, 7, 3], []])
def test_take_rows_gives_the_rows_in_the_order_asked(rows):
    X, _ = _problem(60)
    rows = np.asarray(rows, dtype=int)
    got = take_rows(da.from_array(X, chunks=(9, 2)), rows)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_array_equal(got, X[rows])
    np.testing.assert_array_equal(take_rows(X, rows), X[rows])
    csr = sp.csr_matrix(X)
    assert sp.issparse(take_rows(csr, rows))
    np.testing.assert_array_equal(take_rows(csr, rows).toarray(), X[rows])


def test_gather_refusal_follows_the_doors_memory_rule(monkeypatch):
    X, _ = _problem(100)
    Xd = da.from_array(X, chunks=30)
    assert gather_refusal(X) is None and gather_refusal(Xd) is None
    assert "fits in memory" in in_memory_note(Xd) and in_memory_note(X) == ""
    monkeypatch.setattr(dask_inputs, "available_memory", lambda: 4 * 8 * X.size)
    assert gather_refusal(Xd) is None  # exactly the share: it fits
    _too_large(monkeypatch, X)
    why = gather_refusal(Xd)
    assert why is not None and "100 rows x 3 columns" in why and "svmtune gathers" in why
    assert gather_refusal(X) is None and in_memory_note(Xd) == ""


@pytest.mark.parametrize("weights", ["none", "zeros"])
def test_default_sigma_of_a_dask_x_is_svc_scale(weights):
    """Two reductions give :class:`~svmtune.methods.default.DefaultSVC`'s ``gamma="scale"``
    width, weighted alike (off-centre columns, so the mean of the entries counts)."""
    X, y = _problem(300, 4, seed=2)
    X = X * np.array([1.0, 3.0, 0.2, 1.0]) + np.array([0.5, -2.0, 0.0, 4.0])
    w = None
    if weights == "zeros":
        w = np.linspace(0.1, 2.0, 300)
        w[::5] = 0.0
    want = get_selector("default").run(TrainingData(X, y, w), SelectionContext()).params
    got = default_sigma(TrainingData(da.from_array(X, chunks=(70, 3)), y, w))
    assert got == pytest.approx(want["sigma"], rel=1e-12)
    assert default_sigma(TrainingData(X, y, w)) == want["sigma"]


def test_a_dask_x_too_large_skips_the_all_rows_stage_and_ends_low_rank(monkeypatch):
    """Where ``X`` does not fit, the all-rows stage is skipped (``C`` carried, the reason in
    ``history``) and the final model is the low-rank L2-SVM; the stages before it are the
    NumPy run's."""
    X, y = _problem(6000, 2, seed=1)
    auto = Auto(rank=60, budget=1.2, all_rows_evals=4)
    ref = auto.run(TrainingData(X, y), SelectionContext(random_state=0))
    assert ref.info["plan"][-1]["path"] == ALL_ROWS_PATH
    _too_large(monkeypatch, X)
    got = auto.run(TrainingData(da.from_array(X, chunks=1000), y), SelectionContext(random_state=0))
    last = len(got.info["plan"]) - 1
    skipped = [h for h in got.history if h["stage"] == last]
    assert len(skipped) == 1 and skipped[0]["origin"] == "carried"
    assert skipped[0]["referee"].startswith("not scored: X is a dask array of 6,000 rows")
    assert skipped[0].get("estimate_l2") is None and skipped[0]["rows"] == 6000
    before = [(h["origin"], h["sigma"], h["C"]) for h in ref.history if h["stage"] < last]
    mine = [(h["origin"], h["sigma"], h["C"]) for h in got.history if h["stage"] < last]
    assert [o for o, _, _ in mine] == [o for o, _, _ in before]
    np.testing.assert_allclose([p[1:] for p in mine], [p[1:] for p in before], rtol=1e-8)
    assert got.final_model == "lowrank" and got.info["family"] == "lowrank"
    assert got.info["final_rule"].startswith("the low-rank L2-SVM, fitted in X's row blocks")
    assert 0.0 <= got.estimate <= 0.5
