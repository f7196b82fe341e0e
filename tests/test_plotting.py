"""svmtune.plot_landscape (svmtune.plotting) and select --plot."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest

import svmtune
from svmtune import SVMTuner

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    return X, (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)


def _fit(method, X, y, params=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SVMTuner(method=method, method_params=params, random_state=0).fit(X, y)


def _points(ax):
    """The (x, y) offsets of each scatter collection of an axes."""
    return [c.get_offsets() for c in ax.collections if hasattr(c, "get_offsets")]


def test_gradient_path_and_chosen_point(data, tmp_path):
    import matplotlib.pyplot as plt

    t = _fit("rbsvm", *data)
    out = tmp_path / "l.png"
    fig = svmtune.plot_landscape(t, path=str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    assert "objective" in ax.get_title()
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "search path"]
    xs = np.log2([h["sigma"] for h in t.history_])
    np.testing.assert_allclose(line.get_xdata(), xs)  # every step, in order
    star = _points(ax)[-1]
    np.testing.assert_allclose(
        star[0], np.log2([t.best_params_["sigma"], t.best_params_["C"]]), rtol=1e-9
    )
    # no held-out error computed along a gradient path: one panel (and its colour bar)
    assert len([a for a in fig.axes if a.get_xlabel() == "log2 sigma"]) == 1
    plt.close(fig)


def test_esdr_criterion_beside_the_cv_error(data):
    import matplotlib.pyplot as plt

    t = _fit("esdr", *data)
    fig = svmtune.plot_landscape(t)
    panels = [a for a in fig.axes if a.get_xlabel() == "log2 sigma"]
    assert len(panels) == 1 and "CV loss" in panels[0].get_title()  # C stage rows only
    a = _fit("auto", *data)
    fig2 = svmtune.plot_landscape(a)
    assert [p.get_title() for p in fig2.axes if p.get_xlabel() == "log2 sigma"] == [
        "auto: LOO error (the referee's)"
    ]
    plt.close("all")


def test_no_landscape_without_c(data):
    # ld_c1: one C for every candidate width; S&S's C follows its C_opt curve, a path
    with pytest.raises(ValueError, match="no .*landscape|no \\(sigma, C\\) pairs"):
        svmtune.plot_landscape(_fit("ld_c1", *data))
    import matplotlib.pyplot as plt

    plt.close(svmtune.plot_landscape(_fit("ss", *data)))


def test_select_plot_writes_a_png(tmp_path):
    from click.testing import CliRunner

    from svmtune.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    path = tmp_path / "d.csv"
    rows = ["a,b,label"] + [f"{a},{b},{int(a > 0)}" for a, b in X]
    path.write_text("\n".join(rows) + "\n")
    png = tmp_path / "land.png"
    args = ["select", str(path), "--method", "grid", "--param", "log2_sigma=(-1,2,1)"]
    args += ["--param", "log2_C=(-1,2,1)", "--param", "n_splits=3", "--plot", str(png)]
    r = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG" and "plot written to" in r.output
    bad = CliRunner().invoke(main, ["select", str(path), "--method", "ld_c1", "--plot", str(png)])
    assert bad.exit_code == 1 and "cannot write --plot" in bad.output
