"""Freed memory handed back to the system (issue 64): where glibc can be asked, and ``auto``
asking after each stage, after libsvm's fit in its final-model rule and before the final fit."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

import svmtune._memory as memory
import svmtune.methods._auto_final as final_module
import svmtune.methods.auto as auto_module
import svmtune.tuner as tuner_module
from svmtune import SVMTuner


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_glibc_is_asked_to_trim():
    assert memory._TRIM is not None and memory.release_freed_memory() is True


def test_elsewhere_nothing_is_asked(monkeypatch):
    monkeypatch.setattr(memory, "_TRIM", None)
    assert memory.release_freed_memory() is False


def test_auto_releases_after_each_stage_its_rule_s_libsvm_fit_and_the_selection(monkeypatch):
    calls = []
    for module in (auto_module, final_module, tuner_module):
        name = module.__name__.rsplit(".", 1)[-1]
        monkeypatch.setattr(module, "release_freed_memory", lambda name=name: calls.append(name))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + 0.6 * rng.normal(size=3000) > 0).astype(int)
    t = SVMTuner(random_state=0, method_params={"budget": 5.0, "rank": 60}).fit(X, y)
    stages = len(t.selection_.info["plan"])
    assert stages >= 2 and t.final_model_ != "l2"
    assert calls.count("auto") == stages
    assert calls.count("_auto_final") == 2  # the rule's start and its libsvm fit
    assert calls.count("tuner") == 1
