"""``svmtune predict`` on model files that are not what ``select --out`` wrote: crafted
skops files that would run code, damaged and truncated files."""

from __future__ import annotations

import pytest

from .test_commands import assert_one_line_error, csv_file, run  # noqa: F401 (fixture)


@pytest.fixture
def skops_model(csv_file, tmp_path):  # noqa: F811
    path, _ = csv_file
    model = tmp_path / "model.skops"
    run("select", path, "--method", "default", "--out", model)
    return model, path


def test_predict_refuses_crafted_sklearn_callable_and_runs_nothing(skops_model, tmp_path):
    from .._model_files import call_node, with_attribute

    model, data = skops_model
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    node = call_node("sklearn.datasets._species_distributions", "remove", str(victim))
    crafted = tmp_path / "crafted.skops"
    crafted.write_bytes(with_attribute(model.read_bytes(), "x_", node))
    r = run("predict", crafted, data, ok=False)
    assert_one_line_error(r, "never holds: sklearn.datasets._species_distributions.remove", 2)
    assert victim.read_text() == "keep me" and "prediction" not in r.output


@pytest.mark.parametrize("cut", ["truncated", "empty"])
def test_predict_names_a_damaged_model_and_does_not_suggest_trusting_it(skops_model, cut):
    """A save interrupted by a full disk left part of the file (or none of it)."""
    model, data = skops_model
    content = model.read_bytes()
    model.write_bytes(content[: len(content) // 2] if cut == "truncated" else b"")
    for args in [(), ("--trust-pickle",)]:
        r = run("predict", *args, model, data, ok=False)
        assert_one_line_error(r, f"model file {model} is damaged or truncated", 1)
        assert "trust-pickle" not in r.output and "joblib" not in r.output
