"""Grid bracket + golden section / Brent maximisation and the threshold crossing."""

from __future__ import annotations

import numpy as np
import pytest

from svmtune.search.scalar import first_crossing, golden_section_max, grid_then_refine_max


class Counter:
    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, x):
        self.n += 1
        return self.f(x)


def smooth(x):
    return -((x - 1.2345) ** 2) + 0.1 * np.cos(3 * x)


def test_golden_section_finds_interior_maximum_and_counts():
    f = Counter(lambda x: -((x - 0.3) ** 2))
    x, fx, evals, conv = golden_section_max(f, -2.0, 3.0, xtol=1e-6)
    assert conv and abs(x - 0.3) < 1e-6 and fx == pytest.approx(0.0, abs=1e-11)
    assert len(evals) == f.n
    # the interval shrinks by 0.618 per evaluation: ~ log(5 / 1e-6) / log(1.618) + 2
    assert f.n <= int(np.log(5e6) / np.log(1.618)) + 3


def test_golden_section_reuses_known_interior_point():
    c = -1.0 + 2.0 * (3.0 - np.sqrt(5.0)) / 2.0  # the first golden point of [-1, 1]
    f = Counter(lambda x: -((x - 0.3) ** 2))
    x1, _, evals, _ = golden_section_max(f, -1.0, 1.0, c=c, fc=f(c), xtol=1e-3)
    g = Counter(lambda x: -((x - 0.3) ** 2))
    x2, _, _, _ = golden_section_max(g, -1.0, 1.0, xtol=1e-3)
    assert len(evals) == f.n - 1 == g.n - 1 and x1 == pytest.approx(x2, abs=1e-3)


@pytest.mark.parametrize("refine", ["golden", "brent"])
def test_grid_then_refine_matches_dense_scan(refine):
    f = Counter(smooth)
    res = grid_then_refine_max(f, np.arange(-8.0, 9.01, 1.0), refine=refine, xtol=1e-3)
    dense = np.linspace(-8, 9, 1000)
    xd = dense[np.argmax([smooth(x) for x in dense])]
    assert abs(res.x - xd) <= (dense[1] - dense[0]) + 1e-3
    assert res.n_evals == f.n == len(res.xs)
    assert res.fun >= np.max(res.grid_values)
    assert res.bracket[0] <= res.x <= res.bracket[1]


def test_scan_prevents_capture_by_a_local_maximum():
    # a narrow local bump at small x next to the start of the interval, global peak at 4
    def f(x):
        return 0.5 * np.exp(-((x + 7.5) ** 2) / 0.05) + np.exp(-((x - 4.0) ** 2) / 2.0)

    x_plain, _, _, _ = golden_section_max(f, -8.0, -6.0, xtol=1e-4)
    assert abs(x_plain + 7.5) < 1e-3  # golden section alone would stay on the bump
    res = grid_then_refine_max(f, np.arange(-8.0, 9.01, 1.0), xtol=1e-4)
    assert abs(res.x - 4.0) < 1e-3


def test_vectorised_scan_and_boundary_maximum():
    calls = []

    def fg(g):
        calls.append(len(g))
        return g.copy()  # increasing: maximum at the right end

    res = grid_then_refine_max(lambda x: x, np.linspace(0, 1, 6), f_grid=fg, xtol=1e-3)
    assert calls == [6]
    assert res.x == pytest.approx(1.0) and res.bracket == (0.8, 1.0)
    # NaNs count as -inf; ties go to the smallest x
    res = grid_then_refine_max(lambda x: 0.0, [0.0, 1.0, 2.0], refine="none")
    assert res.x == 0.0 and res.n_evals == 3
    res = grid_then_refine_max(lambda x: np.nan if x < 1 else -x, [0.0, 1.0, 2.0], refine="none")
    assert res.x == 1.0


def test_first_crossing():
    f = Counter(lambda x: 1.0 - np.exp(-x))  # increasing to a plateau at 1
    grid = np.arange(0.0, 10.01, 1.0)
    res = first_crossing(f, grid, 0.9, xtol=1e-4)
    assert abs(res.x - np.log(10.0)) < 1e-4 and res.fun >= 0.9
    assert res.n_evals == f.n and res.converged
    vals = np.array([f(x) for x in grid])
    n0 = f.n
    res2 = first_crossing(f, grid, 0.9, grid_values=vals, xtol=1e-4)
    assert res2.n_evals == f.n - n0 and abs(res2.x - res.x) < 1e-12
    with pytest.raises(ValueError, match="level"):
        first_crossing(f, grid, 2.0)


def test_validation():
    with pytest.raises(ValueError, match="refine"):
        grid_then_refine_max(smooth, [0.0, 1.0], refine="newton")
    with pytest.raises(ValueError, match="at least 2"):
        grid_then_refine_max(smooth, [0.0])
    with pytest.raises(ValueError, match="increasing"):
        grid_then_refine_max(smooth, [1.0, 0.0])
    with pytest.raises(ValueError, match="xtol"):
        grid_then_refine_max(smooth, [0.0, 1.0], xtol=0)
    with pytest.raises(ValueError, match="max_evals"):
        golden_section_max(smooth, 0.0, 1.0, max_evals=0)
