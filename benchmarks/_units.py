"""Shared by the benchmark scripts that run checkpointed units of work in parallel."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from joblib import Parallel, delayed

from svmtune.bench.checkpoint import Checkpoint
from svmtune.bench.runner import environment


def run_units(
    ck: Checkpoint,
    units: Sequence[tuple],
    run: Callable[..., dict],
    n_jobs: int,
    key: Callable[[tuple], tuple] = tuple,
) -> dict[tuple, dict]:
    """Run ``run(*unit)`` for the units ``ck`` does not hold yet, ``n_jobs`` at a time, and
    store each result under ``key(unit)`` as it finishes; return every stored result by key."""
    todo = [u for u in units if list(key(u)) not in ck]
    jobs = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(run)(*u) for u in todo)
    for u, value in zip(todo, jobs):
        ck.put(list(key(u)), value)
        print(*key(u), "done", flush=True)
    return {key(u): ck.get(list(key(u))) for u in units if list(key(u)) in ck}


def units_environment(rows: Sequence[dict]) -> tuple[dict, str]:
    """The machine and versions the units ran with (each unit records
    :func:`svmtune.bench.runner.environment`), and a remark when they ran on several."""
    envs = {json.dumps({k: r[k] for k in ("machine", "versions")}) for r in rows}
    env = json.loads(min(envs)) if envs else environment()
    return env, ("" if len(envs) <= 1 else f" (units ran on {len(envs)} machines; the first:)")


def script_args(doc: str, md_name: str, argv=None) -> argparse.Namespace:
    """The command line these scripts share: ``--md`` (the table's file, default ``md_name``)
    and ``--n-jobs`` (units run at once); ``doc``'s first line is the description."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--md", type=Path, default=Path(md_name))
    ap.add_argument("--n-jobs", type=int, default=1, help="units run at once")
    return ap.parse_args(argv)


def publish(md: Path, text: str) -> None:
    """Write the table to ``md`` and print it."""
    md.write_text(text, encoding="utf-8")
    print(text)


def fit_with_default(tuner, X, y, groups=None) -> tuple[dict, object]:
    """Fit ``tuner`` on ``(X, y)`` (with ``groups``, if given) and ``SVC()`` on the tuner's
    preprocessed training data; return the fields every unit records (the choice, its
    estimate, the selection time, the ``SVC()`` fit time, the machine and versions) and the
    fitted ``SVC()``."""
    import time

    from sklearn.svm import SVC

    tuner.fit(X, y, groups=groups)
    t0 = time.perf_counter()
    svc = SVC().fit(tuner.preprocessor_.transform(X), y)
    svc_time = time.perf_counter() - t0
    record = {
        "estimate": tuner.estimate_,
        "sigma": tuner.best_params_["sigma"],
        "C": tuner.best_params_["C"],
        "selection_time": tuner.selection_time_,
        "svc_fit_time": svc_time,
        **environment(),  # the machine and package versions the unit ran with
    }
    return record, svc
