"""The referee's paired comparison: its statistic against the paired t statistic, weights and
groups, and its false-switch rate on candidates of equal quality, simulated."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from svmtune.loo.paired import paired_comparison, paired_z
from svmtune.loo.referee import l2_loo_outputs, referee_error, row_losses


def test_z_is_the_paired_t_statistic():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=50), rng.normal(0.3, 1.0, size=50)
    expected = stats.ttest_rel(a, b).statistic
    assert paired_z(a - b) == pytest.approx(expected, rel=1e-12)
    cmp = paired_comparison(a, b, loss="xent")
    assert cmp.z == pytest.approx(expected, rel=1e-12) and cmp.units == 50
    assert cmp.mean == pytest.approx(np.mean(a - b))
    assert cmp.se == pytest.approx(np.std(a - b, ddof=1) / np.sqrt(50))
    assert "xent" in cmp.describe()


def test_no_difference_is_no_evidence_and_a_constant_one_is_certain():
    assert paired_z(np.zeros(10)) == 0.0
    assert paired_z(-np.ones(10)) == -np.inf
    assert paired_z(np.ones(10)) == np.inf


def test_equal_weights_change_nothing_and_zero_weights_drop_rows():
    rng = np.random.default_rng(1)
    d = rng.normal(size=40)
    assert paired_z(d, sample_weight=np.full(40, 3.0)) == pytest.approx(paired_z(d))
    w = np.r_[np.ones(30), np.zeros(10)]
    assert paired_z(d, sample_weight=w) == pytest.approx(paired_z(d[:30]))


def test_groups_take_the_standard_error_over_groups():
    rng = np.random.default_rng(2)
    d = rng.normal(size=30)
    # one row per group: the rows' statistic
    assert paired_z(d, groups=np.arange(30)) == pytest.approx(paired_z(d))
    # rows repeated within their group carry no more evidence than the group
    g = np.repeat(np.arange(30), 4)
    cmp = paired_comparison(np.repeat(d, 4), np.zeros(120), groups=g)
    assert cmp.units == 30 and cmp.z == pytest.approx(paired_z(d))


def test_losses_must_be_of_the_same_rows():
    with pytest.raises(ValueError, match="same rows"):
        paired_comparison(np.zeros(3), np.zeros(4))


def test_false_switch_rate_on_candidates_of_equal_quality():
    """Two candidates whose errors are equally likely on every row (each row's pair of 0/1
    losses drawn from one joint law, correlated as two SVMs' errors are): a one-sided test at
    z = 1.645 switches in about 5 % of 4,000 simulated comparisons (a binomial 99.9 % band);
    the lowest of the two point estimates switches about half the time it is not tied."""
    rng = np.random.default_rng(3)
    n, sims, z = 300, 4000, 1.645
    p_both, p_one = 0.10, 0.04  # both wrong; exactly one wrong (either one, equally)
    switched = minimum = 0
    for _ in range(sims):
        u = rng.uniform(size=n)
        both = u < p_both
        a_only = (u >= p_both) & (u < p_both + p_one)
        b_only = (u >= p_both + p_one) & (u < p_both + 2 * p_one)
        ea, eb = (both | a_only).astype(float), (both | b_only).astype(float)
        switched += paired_z(ea - eb) < -z
        minimum += ea.mean() < eb.mean()
    rate = switched / sims
    band = 3.3 * np.sqrt(0.05 * 0.95 / sims)
    assert abs(rate - 0.05) < band + 0.01, rate  # the normal approximation's own slack
    assert minimum / sims > 0.4


def test_row_losses_agree_with_the_referee_error():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    for k in (2, 3):
        y = np.arange(40) % k
        K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
        tasks = [2.0 * (y == 1) - 1.0] if k == 2 else [2.0 * (y == c) - 1.0 for c in range(k)]
        outs = l2_loo_outputs(K, tasks, 1.0)
        err, xent = row_losses(y, outs)
        assert err.mean() == pytest.approx(referee_error(y, outs))
        expected = sum(np.log1p(np.exp(-2 * t * f)) for t, f in zip(tasks, outs))
        np.testing.assert_allclose(xent, expected)
