"""Per-thread warning recorders (:mod:`svmtune._warnings`)."""

from __future__ import annotations

import threading
import warnings

import pytest

from svmtune._warnings import recorded_warnings


def _warn_in_turns(tag: str, barrier: threading.Barrier, logs: dict, n: int = 5) -> None:
    with recorded_warnings() as log:
        for i in range(n):
            barrier.wait()  # both threads are inside their recorders, warning in turn
            warnings.warn(f"{tag} {i}", UserWarning, stacklevel=1)
            barrier.wait()
    logs[tag] = [str(w.message) for w in log]


def test_threads_record_their_own_warnings_and_the_state_is_restored():
    filters, show = warnings.filters[:], warnings.showwarning
    barrier, logs = threading.Barrier(2), {}
    threads = [threading.Thread(target=_warn_in_turns, args=(t, barrier, logs)) for t in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every warning once ("always": the same line warns each time) and only in its own list
    assert logs == {t: [f"{t} {i}" for i in range(5)] for t in "ab"}
    assert warnings.filters == filters
    assert warnings.showwarning is show


def test_a_thread_not_recording_keeps_the_process_handler(monkeypatch):
    shown = []
    monkeypatch.setattr(warnings, "showwarning", lambda m, *a, **k: shown.append(str(m)))
    inside, done = threading.Event(), threading.Event()

    def recorder(out: list) -> None:
        with recorded_warnings() as log:
            inside.set()
            done.wait(10)
            warnings.warn("recorded", UserWarning, stacklevel=1)
        out.extend(str(w.message) for w in log)

    out: list[str] = []
    t = threading.Thread(target=recorder, args=(out,))
    t.start()
    inside.wait(10)
    warnings.warn("not recorded", UserWarning, stacklevel=1)  # this thread: no recorder open
    done.set()
    t.join()
    assert out == ["recorded"]
    assert shown == ["not recorded"]


def test_recorders_nest_within_a_thread():
    with recorded_warnings() as outer:
        warnings.warn("first", UserWarning, stacklevel=1)
        with recorded_warnings() as inner:
            warnings.warn("second", UserWarning, stacklevel=1)
        warnings.warn("third", UserWarning, stacklevel=1)
    assert [str(w.message) for w in outer] == ["first", "third"]
    assert [str(w.message) for w in inner] == ["second"]
    assert inner[0].category is UserWarning and inner[0].filename == __file__


def test_svmtune_warnings_name_the_first_line_outside_svmtune(tmp_path):
    """However deep inside svmtune a warning is raised, it names the caller's line."""
    import numpy as np

    from svmtune import SVMTuner
    from svmtune.datasets import load_file

    f = tmp_path / "amounts.csv"
    f.write_text("amount;x;label\n" + "".join(f"1,{i:03d};{i};{i % 2}\n" for i in range(30)))
    with pytest.warns(UserWarning, match="decimal comma or separate thousands") as rec:
        load_file(f)
    assert {r.filename for r in rec} == {__file__}
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), np.repeat([0, 1], 20)
    # a bound warning raised in the gradient search, four calls below SVMTuner.fit
    tuner = SVMTuner(method="rbsvm", method_params={"log2_sigma": (5.0, 6.0)})
    with pytest.warns(Warning) as rec:
        tuner.fit(X, y)
    assert rec and {r.filename for r in rec} == {__file__}


def test_every_warning_in_svmtune_uses_user_stacklevel():
    """A fixed ``stacklevel`` is right for one call path only (see ``user_stacklevel``)."""
    import ast
    from pathlib import Path

    import svmtune

    fixed = []
    for path in Path(svmtune.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "warn"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "warnings"
            ):
                level = {k.arg: ast.unparse(k.value) for k in node.keywords}.get("stacklevel")
                if level != "user_stacklevel()":
                    fixed.append(f"{path.name}:{node.lineno}")
    assert not fixed, fixed
