"""What a user's first selection costs, before and after numba left the default path.

Writes ``benchmarks/first_call.json`` (every measurement) and ``benchmarks/first_call.md``
(the tables, generated from the JSON, never typed).  Each part runs in fresh interpreters,
one per code tree (``PYTHONPATH`` chooses it; the old tree exported from git, read-only),
with one BLAS thread:

1. **First fit** -- the demo's data and split (``parkinsons``, stratified 70/30, seed 0),
   ``SVMTuner(random_state=0).fit`` twice in one process, with ``NUMBA_CACHE_DIR`` an empty
   temporary directory (a fresh installation: nothing compiled) and then again with the cache
   that run filled (a second process); ``"numba" in sys.modules`` after import and after the
   fits; the demo's cost unit, one ``SVC()`` fit (fastest of 5, after the fits).
2. **Import** -- the time of ``import svmtune`` in a fresh process (fastest of 5, old and
   new alternately), and of ``import numba`` alone.
3. **Compile** -- the first call of each numba-compiled function on tiny data, empty cache,
   minus its second call; the factor updates from the old tree, the pair loops (unchanged).
4. **Speed** -- each compiled function against its numpy / scipy counterpart at the sizes
   svmtune uses (fastest of 3): the Givens rank-one update of a Cholesky factor (numba, old)
   against one BLAS ``drot`` per column (new) and a fresh LAPACK factorisation, ``m = 100 ..
   3000``; ``mirror_lower``'s triangle copy (numba, old; blocked numpy, new); and the pair
   loops (numba) against vectorised numpy (row blocks of distances, ``bincount``; and
   ``exp`` of the distances times the class indicator, BLAS), ``n = 100 .. 5000``.
5. **Selections** -- the second (warm) ``SVMTuner.fit`` of ``rbsvm`` and ``auto`` on a
   larger bundled set (``banknote``, 1,372 rows), old tree against new (alternately, fastest
   of 3), to show what the solver's slower update costs where it is used.

The machine is shared with other jobs (2 cores, up to 7 agents), so absolute times are noisy;
the ratios that matter (first fit over warm fit, numba over numpy) are measured within one
process.  Usage::

    git archive <old-commit> src | tar -x -C /tmp/old
    python benchmarks/first_call.py --old /tmp/old/src --new src
    python benchmarks/first_call.py --table      # the .md from the .json only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
OUT_JSON = HERE / "first_call.json"
OUT_MD = HERE / "first_call.md"
FACTOR_SIZES = [100, 300, 1000, 3000]
PAIR_SIZES = [100, 500, 2000, 5000]


def _best(make, reps: int = 3) -> float:
    """Fastest of ``reps`` runs of ``make()()`` (``make`` prepares the inputs, untimed)."""
    times = []
    for _ in range(reps):
        run = make()
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


# ------------------------------------------------------------------------------ workers
def w_first_fit() -> dict:
    t0 = time.perf_counter()
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC

    from svmtune import SVMTuner
    from svmtune.datasets import load_dataset

    out = {"import_s": time.perf_counter() - t0, "numba_after_import": "numba" in sys.modules}
    X, y, _ = load_dataset("parkinsons")
    X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    for k in (1, 2):
        t0 = time.perf_counter()
        tuner = SVMTuner(random_state=0).fit(X_tr, y_tr)
        out[f"fit{k}_s"] = time.perf_counter() - t0
        out[f"selection{k}_s"] = tuner.selection_time_ + tuner.final_fit_time_
        out[f"n_svm_fits{k}"] = tuner.selection_.n_svm_fits
    out["numba_after_fits"] = "numba" in sys.modules
    Xp = tuner.preprocessor_.transform(np.asarray(X_tr)) if tuner.preprocessor_ else X_tr
    out["svc_s"] = _best(lambda: lambda: SVC().fit(Xp, y_tr), 5)
    out["best_params"] = {k: v for k, v in tuner.best_params_.items() if k != "kernel"}
    return out


def w_compile() -> dict:
    """First-call minus second-call time of each compiled function, tiny inputs."""
    out: dict = {}
    t0 = time.perf_counter()
    import numba  # noqa: F401

    out["import numba"] = time.perf_counter() - t0

    def twice(name, call):
        t0 = time.perf_counter()
        call()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        call()
        out[name] = first - (time.perf_counter() - t0)

    import svmtune._factor as F

    if hasattr(F, "warm_up"):  # the old tree: the factor updates are compiled
        L = np.eye(3, order="F")
        twice("_factor._rank_one_update", lambda: F._rank_one_update(L, np.ones(3), 1))
        twice("_factor._copy_triangle", lambda: F._copy_triangle(L, True))
        return out
    import svmtune.criteria._pairloops as P

    X = np.random.default_rng(0).normal(size=(6, 2))
    shift, lo, n_bins = 42, 4000, 400
    floor = float(np.array([lo << shift], dtype=np.int64).view(np.float64)[0])
    kw = {"floor": floor, "shift": shift, "lo": lo, "n_bins": n_bins}
    twice("_pairloops._pair_bin_counts", lambda: P.pair_bin_counts(X, None, None, None, **kw))
    cnt = P.pair_bin_counts(X, None, None, None, **kw)
    twice(
        "_pairloops._coarsen_bins", lambda: P.coarsen_bins(cnt, lo=lo, shift=shift, group_shift=5)
    )
    n = X.shape[0]
    G = np.ones((2, n - 1))
    D, E = np.empty_like(G), np.empty_like(G)
    twice(
        "_pairloops._gram_sqdist",
        lambda: P._gram_sqdist(G, np.ones(n), 0, 0.5, True, D, E),
    )
    twice(
        "_pairloops._rows_sqdist",
        lambda: P._rows_sqdist(X, np.ascontiguousarray(X.T), 0, 2, 0.5, D, E),
    )
    codes = np.arange(n) % 2
    sig = np.array([1.0, 0.3])
    # _accumulate_rows: the one compiled loop left in rbf_class_sums_multi's first call
    twice(
        "_pairloops._accumulate_rows", lambda: P.rbf_class_sums_multi(X, codes, np.ones(n), sig, 2)
    )
    return out


def w_factor_speed() -> dict:
    from scipy.linalg import lapack

    import svmtune._factor as F

    rng = np.random.default_rng(0)
    out: dict = {"update": {}, "fresh": {}, "mirror": {}}
    for m in FACTOR_SIZES:
        A = rng.normal(size=(m, m + 5))
        H = A @ A.T / m + np.eye(m)
        L0 = np.asfortranarray(np.linalg.cholesky(H))
        x0 = rng.normal(size=m)
        if hasattr(F, "warm_up"):
            F.warm_up()  # compile outside the clock

        def upd(L0=L0, x0=x0):
            L, x = L0.copy(order="F"), x0.copy()
            return lambda: F._rank_one_update(L, x, 0)

        out["update"][m] = _best(upd, 5)
        out["fresh"][m] = _best(lambda H=H: lambda: lapack.dpotrf(H, lower=1, clean=1), 5)
        low = np.asfortranarray(np.tril(rng.normal(size=(m, m))))

        def mirror(low=low):
            A = low.copy(order="F")
            return lambda: F.mirror_lower(A)

        out["mirror"][m] = _best(mirror, 5)
    return out


def _numpy_pair_bins(X, floor, shift, lo, n_bins, block=256):
    """The pair histogram by numpy: row blocks of squared distances (differences, as the
    compiled loop), the bit-pattern bin, ``bincount``."""
    n = X.shape[0]
    counts = np.zeros(n_bins)
    for r0 in range(0, n - 1, block):
        r1 = min(r0 + block, n - 1)
        D = np.zeros((r1 - r0, n - r0 - 1))
        for k in range(X.shape[1]):  # the compiled loop's order of the sum: same bits
            diff = X[r0:r1, k, None] - X[None, r0 + 1 :, k]
            D += diff * diff
        mask = np.arange(r0 + 1, n)[None, :] > np.arange(r0, r1)[:, None]
        v = np.maximum(D[mask], floor)
        codes = np.minimum((v.view(np.int64) >> shift) - lo, n_bins - 1)
        counts += np.bincount(codes, minlength=n_bins)
    return counts


def _numpy_class_sums(X, codes, sigmas, n_classes, block=512):
    """``R[s] = exp(-t_s D) W`` by numpy: row blocks of the Gram-expansion distances, one
    ``exp`` per width, the class sums by a BLAS product with the class indicator."""
    n = X.shape[0]
    W = np.eye(n_classes)[codes]
    Xc = X - X.mean(0)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    R = np.empty((len(sigmas), n, n_classes))
    for r0 in range(0, n, block):
        r1 = min(r0 + block, n)
        D = np.maximum(sq[r0:r1, None] + sq[None, :] - 2.0 * Xc[r0:r1] @ Xc.T, 0.0)
        for s, sig in enumerate(sigmas):
            R[s, r0:r1] = np.exp(-D / (2.0 * sig**2)) @ W
    return R


def w_pair_speed() -> dict:
    import svmtune.criteria._pairloops as P

    rng = np.random.default_rng(0)
    shift = 52 - 10
    lo, hi = (np.array([16.0 * 2.0**-40, 16.0]).view(np.int64) >> shift).tolist()
    floor = float(np.array([lo << shift], dtype=np.int64).view(np.float64)[0])
    kw = {"floor": floor, "shift": shift, "lo": lo, "n_bins": hi - lo + 1}
    P.warm_up()  # compile outside the clock
    out: dict = {"bins_numba": {}, "bins_numpy": {}, "sums_numba": {}, "sums_numpy": {}}
    sigmas = 2.0 ** (-0.5 * np.arange(8)) * 3.0  # a sqrt(2) chain, as S&S's
    for n in PAIR_SIZES:
        X = rng.normal(size=(n, 10))
        codes = np.arange(n) % 2
        ones = np.ones(n)
        a = P.pair_bin_counts(X, None, None, None, **kw)
        b = _numpy_pair_bins(X, **kw)
        assert np.array_equal(a, b), "the numpy pair histogram must match"
        out["bins_numba"][n] = _best(
            lambda X=X: lambda: P.pair_bin_counts(X, None, None, None, **kw)
        )
        out["bins_numpy"][n] = _best(lambda X=X: lambda: _numpy_pair_bins(X, **kw))
        Ra = P.rbf_class_sums_multi(X, codes, np.ones(n), sigmas, 2)
        Rb = _numpy_class_sums(X, codes, sigmas, 2)
        assert np.allclose(Ra, Rb, rtol=1e-8, atol=1e-140), "the numpy class sums must match"
        out["sums_numba"][n] = _best(
            lambda X=X, c=codes, w=ones: lambda: P.rbf_class_sums_multi(X, c, w, sigmas, 2)
        )
        out["sums_numpy"][n] = _best(
            lambda X=X, c=codes: lambda: _numpy_class_sums(X, c, sigmas, 2)
        )
    return out


def w_selections() -> dict:
    from svmtune import SVMTuner
    from svmtune.datasets import load_dataset

    X, y, _ = load_dataset("banknote")
    out = {}
    for method in ("rbsvm", "auto"):
        SVMTuner(method=method, random_state=0).fit(X, y)  # warm: imports, compiled code
        t0 = time.perf_counter()
        t = SVMTuner(method=method, random_state=0).fit(X, y)
        out[method] = {"s": time.perf_counter() - t0, "n_svm_fits": t.selection_.n_svm_fits}
    return out


WORKERS = {
    "first_fit": w_first_fit,
    "compile": w_compile,
    "factor_speed": w_factor_speed,
    "pair_speed": w_pair_speed,
    "selections": w_selections,
}


# ------------------------------------------------------------------------------ driver
#: the import's own time, measured in the process (the interpreter's start left out)
IMPORT_CODE = (
    "import time, sys; t = time.perf_counter(); import svmtune; "
    "print(time.perf_counter() - t, 'numba' in sys.modules)"
)
IMPORT_NUMBA = "import time; t = time.perf_counter(); import numba; print(time.perf_counter() - t)"


def _run(src: str, worker: str, cache_dir: str | None = None, code: str | None = None):
    env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["NUMBA_CACHE_DIR"] = cache_dir or tempfile.mkdtemp(prefix="numba-empty-")
    args = ["-c", code] if code else [__file__, "--worker", worker]
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode:
        raise RuntimeError(f"{worker} on {src} failed:\n{res.stderr}")
    if code is None:
        return json.loads(res.stdout.strip().splitlines()[-1])
    return float(res.stdout.split()[0]) if res.stdout.strip() else wall


def measure(old: str, new: str) -> dict:
    doc: dict = {"trees": {"old": old, "new": new}, "first_fit": {}}
    for label, src in (("old", old), ("new", new)):
        cache = tempfile.mkdtemp(prefix="numba-cache-")
        doc["first_fit"][label] = {
            "empty cache": _run(src, "first_fit", cache),
            "filled cache": _run(src, "first_fit", cache),
        }
    # import and the warm selections: old and new alternately, fastest of 5 / 3 per tree,
    # so that a burst of load on the shared machine hits both
    trees = (("old", old), ("new", new))
    imp: dict = {label: [] for label in ("old", "new", "numba alone", "python alone")}
    for _ in range(5):
        for label, src in trees:
            imp[label].append(_run(src, "", code=IMPORT_CODE))
        imp["numba alone"].append(_run(new, "", code=IMPORT_NUMBA))
        imp["python alone"].append(_run(new, "", code="pass"))
    doc["import"] = {k: min(v) for k, v in imp.items()}
    doc["compile"] = {"old": _run(old, "compile"), "new": _run(new, "compile")}
    doc["factor_speed"] = {"old": _run(old, "factor_speed"), "new": _run(new, "factor_speed")}
    doc["pair_speed"] = _run(new, "pair_speed")
    sel: dict = {"old": [], "new": []}
    for _ in range(3):
        for label, src in trees:
            sel[label].append(_run(src, "selections"))
    doc["selections"] = {
        label: {m: min(runs, key=lambda r, m=m: r[m]["s"])[m] for m in runs[0]}
        for label, runs in sel.items()
    }
    return doc


# ------------------------------------------------------------------------------ table
def _ms(s: float) -> str:
    return f"{1e3 * s:.3g}" if s < 1 else f"{1e3 * s:.0f}"


def table(doc: dict) -> str:
    L = [
        "# What a user's first selection costs",
        "",
        "Generated by `benchmarks/first_call.py` from `benchmarks/first_call.json` (do not "
        "edit).  **The machine is shared** (2 cores, up to 7 agents running at once): absolute "
        "times are noisy, and the comparisons that matter are ratios measured in one process "
        "(a first fit over the second fit of the same process; a compiled function over its "
        "numpy / scipy counterpart).  One BLAS thread throughout.  *old*: the tree before "
        "(the L2-SVM factor's updates compiled by numba, imported with svmtune); *new*: "
        "numba imported only at the first call of a data criterion's pair loop.",
        "",
        "## 1. The first `SVMTuner(random_state=0).fit` on the demo's data",
        "",
        "parkinsons, stratified 70/30 split, seed 0 (as `svmtune demo`).  Two fits in one "
        "fresh process; *empty cache*: `NUMBA_CACHE_DIR` an empty directory (a fresh "
        "installation, CI, a read-only site-packages), *filled cache*: a second process with "
        "the cache the first one wrote.  Cost in `SVC()` fits: selection and final fit over "
        "one default `SVC()` fit in the same process (the demo's unit).  Imports: sklearn and "
        "svmtune, timed in the process.",
        "",
        "| tree | numba cache | imports (s) | 1st fit (ms) | 2nd fit (ms) | 1st / 2nd"
        " | 1st fit in SVC() fits | 2nd fit in SVC() fits | SVM fits | numba loaded |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label in ("old", "new"):
        for cache, r in doc["first_fit"][label].items():
            L.append(
                f"| {label} | {cache} | {r['import_s']:.2f} | {_ms(r['fit1_s'])} | "
                f"{_ms(r['fit2_s'])} | {r['fit1_s'] / r['fit2_s']:.1f} | "
                f"{r['selection1_s'] / r['svc_s']:.0f} | {r['selection2_s'] / r['svc_s']:.0f} | "
                f"{r['n_svm_fits1']} | {'yes' if r['numba_after_fits'] else 'no'} |"
            )
    imp = doc["import"]
    L += [
        "",
        "## 2. Import time",
        "",
        "The time of the import statement in a fresh process (fastest of 5, old and new "
        "alternately); `python -c pass`: the whole interpreter's wall time, for scale.",
        "",
        "| command | s |",
        "|---|---:|",
        f"| `python -c pass` | {imp['python alone']:.2f} |",
        f"| `import numba` | {imp['numba alone']:.2f} |",
        f"| `import svmtune`, old | {imp['old']:.2f} |",
        f"| `import svmtune`, new | {imp['new']:.2f} |",
        "",
        "## 3. Compile time of each numba function (empty cache)",
        "",
        "First call minus second call on tiny data, in a fresh process.  The factor's "
        "functions exist in the old tree only; the pair loops are the same in both.",
        "",
        "| function | s |",
        "|---|---:|",
    ]
    for label in ("old", "new"):
        for name, s in doc["compile"][label].items():
            if name == "import numba" and label == "new":
                continue
            L.append(f"| `{name}` | {s:.2f} |")
    fs = doc["factor_speed"]
    L += [
        "",
        "## 4. Speed: compiled against numpy / scipy at the sizes svmtune uses",
        "",
        "### The L2-SVM factor (m: support-set size; fastest of 5, ms)",
        "",
        "Givens rank-one update of a whole `m x m` Cholesky factor (the removal of the first "
        "point, the worst case); a fresh LAPACK `dpotrf` of the same matrix; the copy of a "
        "lower triangle up (`mirror_lower`, used after `potri` / `syrk`).  The solver picks "
        "the update or the fresh factorisation by a cost estimate "
        "(`svmtune.svm._update_is_cheaper`), so the update is used only where it is the "
        "cheaper of the two.",
        "",
        "| m | update, numba (old) | update, BLAS drot (new) | new / old | fresh dpotrf |"
        " mirror, numba (old) | mirror, blocked numpy (new) | new / old |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in map(str, FACTOR_SIZES):
        uo, un = fs["old"]["update"][m], fs["new"]["update"][m]
        mo, mn = fs["old"]["mirror"][m], fs["new"]["mirror"][m]
        L.append(
            f"| {m} | {_ms(uo)} | {_ms(un)} | {un / uo:.1f} | {_ms(fs['new']['fresh'][m])} | "
            f"{_ms(mo)} | {_ms(mn)} | {mn / mo:.1f} |"
        )
    ps = doc["pair_speed"]
    L += [
        "",
        "### The pair loops (n points, 10 features; fastest of 3, ms)",
        "",
        "The pair-distance histogram of one class (`pair_bin_counts`, the n(n-1)/2 pairs; "
        "LD, ESDR, DBTC, J4) and the RBF class sums for 8 widths on a sqrt(2) chain "
        "(`rbf_class_sums_multi`, S&S), numba against vectorised numpy in row blocks "
        "(the same histogram exactly; the same sums to 1e-8).",
        "",
        "| n | histogram, numba | histogram, numpy | numpy / numba | class sums, numba |"
        " class sums, numpy | numpy / numba |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in map(str, PAIR_SIZES):
        a, b = ps["bins_numba"][n], ps["bins_numpy"][n]
        c, d = ps["sums_numba"][n], ps["sums_numpy"][n]
        L.append(f"| {n} | {_ms(a)} | {_ms(b)} | {b / a:.1f} | {_ms(c)} | {_ms(d)} | {d / c:.1f} |")
    sel = doc["selections"]
    L += [
        "",
        "## 5. A larger selection, warm (banknote, 1,372 rows)",
        "",
        "The second fit in one process (imports done, numba compiled in the old tree); old "
        "and new tree in separate processes, alternately, fastest of 3 each: the loaded "
        "machine's noise is in this ratio.",
        "",
        "| method | old (s) | new (s) | new / old | SVM fits old / new |",
        "|---|---:|---:|---:|---|",
    ]
    for method in sel["old"]:
        o, n = sel["old"][method], sel["new"][method]
        L.append(
            f"| {method} | {o['s']:.2f} | {n['s']:.2f} | {n['s'] / o['s']:.2f} | "
            f"{o['n_svm_fits']} / {n['n_svm_fits']} |"
        )
    L += [
        "",
        "## What changed, and why",
        "",
        "* **The L2-SVM factor** (`svmtune._factor`): the Givens update is one BLAS `drot` per "
        "column (scipy), `mirror_lower` a blocked numpy copy.  Table 4: the compiled update "
        "is faster per call, most at small `m`, but there a fresh `dpotrf` costs about as "
        "little, and the solver's estimate (`GIVENS_COLUMN_COST`, `GIVENS_COST` in "
        "`svmtune.svm`) now takes it; from `m` of about a thousand the BLAS update is within "
        "a small factor of the compiled one and far below a fresh factorisation.  Against "
        "that, the compiled versions cost every process numba's import and, in a fresh "
        "installation, their compilation (tables 1 and 3) -- more than the whole default "
        "selection on the demo's data.",
        "* **The pair loops** (`svmtune.criteria._pairloops`): numba pays (table 4: numpy "
        "is several times slower from a few hundred points), so they stay compiled; numba is "
        "imported and applied at their first call (`svmtune._jit`), so only the data "
        "criteria that use them (LD, ESDR, DBTC, J4, S&S) pay for it, once per process.",
        "* **The demo** warms nothing up before it times the selection: its cost column is "
        "what a user's first run costs.",
    ]
    return "\n".join(L) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", choices=sorted(WORKERS))
    ap.add_argument("--old", help="src directory of the tree before")
    ap.add_argument("--new", default=str(HERE.parent / "src"))
    ap.add_argument("--table", action="store_true", help="only rewrite the .md from the .json")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker]()))
        return
    if not args.table:
        if not args.old:
            ap.error("--old SRC is required (see the module docstring)")
        OUT_JSON.write_text(json.dumps(measure(args.old, args.new), indent=1) + "\n")
    OUT_MD.write_text(table(json.loads(OUT_JSON.read_text())))
    print(OUT_MD.read_text())


if __name__ == "__main__":
    main()
