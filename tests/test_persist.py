"""Model files (svmtune.persist): skops round trips, the exact allow-list, crafted files that
would run code, archive bombs, damaged files, atomic saves, trusted pickles."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest

from svmtune import SVMTuner
from svmtune.persist import (
    MODEL_TYPES,
    DamagedModelError,
    UntrustedModelError,
    is_skops_file,
    load_model,
    save_model,
)

sio = pytest.importorskip("skops.io")


def _data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y2 = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, "yes", "no")
    y3 = np.array(["a", "b", "c"])[np.argmax(X + 0.3 * rng.normal(size=(60, 3)), axis=1)]
    return X, y2, y3


_CASES = {
    "auto": ({}, "y2"),
    "grid_platt_3_classes": (
        {
            "method": "grid",
            "probability": "platt",
            "method_params": {"log2_sigma": (0, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3},
        },
        "y3",
    ),  # fmt: skip
    "l2_one_vs_rest": ({"method": "rbsvm", "final_model": "l2"}, "y3"),
    "one_vs_one": ({"method": "default", "multiclass": "ovo"}, "y3"),
    "preprocess_auto_categorical": ({"method": "default", "preprocess": "auto"}, "y2"),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_skops_round_trip_identical_predictions(case, tmp_path):
    X, y2, y3 = _data()
    kw, which = _CASES[case]
    y = {"y2": y2, "y3": y3}[which]
    if kw.get("preprocess") == "auto":  # a categorical column: the ColumnTransformer path
        X = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.array(["u", "v", "w"] * 20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuner = SVMTuner(random_state=0, **kw).fit(X, y)
    path = tmp_path / "m.skops"
    assert save_model(tuner, path) == "skops" and is_skops_file(path)
    got = load_model(path)
    assert type(got) is SVMTuner
    np.testing.assert_array_equal(got.predict(X), tuner.predict(X))
    np.testing.assert_array_equal(got.predict_proba(X), tuner.predict_proba(X))
    np.testing.assert_array_equal(got.decision_function(X), tuner.decision_function(X))
    assert got.best_params_ == tuner.best_params_
    np.testing.assert_array_equal(
        got.cv_results_["mean_test_score"], tuner.cv_results_["mean_test_score"]
    )
    # every type the file names beyond skops' defaults is one of MODEL_TYPES
    names = {name for _, name in MODEL_TYPES}
    assert set(sio.get_untrusted_types(file=path)) <= names


def test_saving_leaves_the_model_as_it_was(tmp_path):
    X, y2, _ = _data()
    X = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.array(["u", "v"] * 30))
    tuner = SVMTuner(method="default", preprocess="auto").fit(X, y2)
    before = [vars(s).get("_metadata_request") for s in _steps(tuner.preprocessor_)]
    assert any(r is not None for r in before)  # set_fit_request's requests (a cycle)
    save_model(tuner, tmp_path / "m.skops")
    after = [vars(s).get("_metadata_request") for s in _steps(tuner.preprocessor_)]
    assert after == before


def _steps(est):
    out = [est]
    for v in est.get_params(deep=True).values():
        if hasattr(v, "get_params"):
            out.append(v)
    return out


def test_untrusted_type_refused(tmp_path):
    X, y2, _ = _data()
    tuner = SVMTuner(method="default").fit(X, y2)
    tuner.hook_ = os.system
    path = tmp_path / "crafted.skops"
    sio.dump(tuner, path)
    with pytest.raises(UntrustedModelError, match=r"types an svmtune model never holds: .*system"):
        load_model(path)
    with pytest.raises(UntrustedModelError):  # trusting pickles does not widen the allow-list
        load_model(path, trust_pickle=True)


def test_pickle_needs_trust(tmp_path):
    X, y2, _ = _data()
    tuner = SVMTuner(method="default").fit(X, y2)
    path = tmp_path / "m.skops.joblib"
    assert save_model(tuner, path) == "joblib" and not is_skops_file(path)
    with pytest.raises(UntrustedModelError, match="can run any code.*--trust-pickle"):
        load_model(path)
    np.testing.assert_array_equal(load_model(path, trust_pickle=True).predict(X), tuner.predict(X))
    # a pickle named .skops is still a pickle: recognised by content, not by name
    fake = tmp_path / "fake.skops"
    joblib.dump(tuner, fake)
    with pytest.raises(UntrustedModelError, match="is a joblib/pickle file"):
        load_model(fake)


def test_skops_round_trip_of_a_model_fitted_on_sparse_rows(tmp_path):
    import scipy.sparse as sp

    X, y2, _ = _data()
    S = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    grid = {"log2_sigma": (0, 1, 1), "log2_C": (0, 1, 1), "n_splits": 3}
    tuner = SVMTuner(method="grid", method_params=grid, random_state=0).fit(S, y2)
    assert sp.issparse(tuner.estimator_.support_vectors_)
    save_model(tuner, tmp_path / "m.skops")
    got = load_model(tmp_path / "m.skops")
    np.testing.assert_array_equal(got.decision_function(S), tuner.decision_function(S))


def test_l2_model_file_is_sized_to_its_support_rows(tmp_path):
    """A final L2-SVM's file holds its support rows and coefficients, not the solver's
    factor of the support-set matrix (|S|^2 values: 13.7 MB for 1,291 support rows of 20
    features here, 66 times those rows; issue #63)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=2000, n_features=20, flip_y=0.1, random_state=0)
    tuner = SVMTuner(method="default", final_model="l2").fit(X, y)
    est = tuner.estimator_
    rows = est.support_vectors_.nbytes + est.dual_coef_.nbytes
    assert est.support_vectors_.shape[0] > 1000  # most rows are support rows here
    path = tmp_path / "m.skops"
    save_model(tuner, path)
    # the rows and coefficients, the support indices, the selection's record (~40 kB)
    assert os.path.getsize(path) <= 1.5 * rows + 64 * 1024
    got = load_model(path)
    np.testing.assert_array_equal(got.decision_function(X), tuner.decision_function(X))


def test_an_l2_file_of_an_earlier_svmtune_is_refused_with_how_to_re_save_it(tmp_path):
    """Files written before L2SVC dropped ``solutions_`` name two types no model holds
    now: the refusal says what the file is and how to keep it, and that recipe works."""
    from svmtune.svm import fit_l2_svm

    X, y2, _ = _data()
    tuner = SVMTuner(method="default", final_model="l2").fit(X, y2)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    tuner.estimator_.solutions_ = [fit_l2_svm(K, np.where(y2 == "yes", 1.0, -1.0), 1.0)]
    old = tmp_path / "old.skops"
    sio.dump(tuner, old)  # as save_model wrote it then
    with pytest.raises(UntrustedModelError, match=r"saved by an earlier svmtune.*solutions_"):
        load_model(old)
    model = sio.load(old, trusted=sio.get_untrusted_types(file=old))
    del model.estimator_.solutions_
    save_model(model, tmp_path / "new.skops")
    got = load_model(tmp_path / "new.skops")
    np.testing.assert_array_equal(got.decision_function(X), tuner.decision_function(X))


# ---------------------------------------------------------------------------- MODEL_TYPES
def _schema_types(model) -> set[tuple[str, str]]:
    """The ``(loader, type)`` pairs of the skops file ``save_model`` writes for ``model``."""
    import io
    import tempfile
    import zipfile

    from ._model_files import schema_of

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/m.skops"
        save_model(model, path)
        data = open(path, "rb").read()
        load_model(path)  # within every bound of load_model (MAX_PARSE_RATIO among them)
    found, stack = set(), [schema_of(data)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "__loader__" in item:
                found.add((item["__loader__"], f"{item['__module__']}.{item['__class__']}"))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
    return found


def _pipeline_model():
    """A scikit-learn Pipeline around SVMTuner, as a user builds one for mixed data."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, y2, _ = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(
        k=np.array(["u", "v", "w", None] * 15, dtype=object)
    )
    frame.loc[3, "a"] = np.nan
    columns = ColumnTransformer(
        [
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                  OneHotEncoder(handle_unknown="ignore")), ["k"]),
            ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["a", "b", "c"]),
        ]
    )  # fmt: skip
    pipe = make_pipeline(columns, SVMTuner(method="default", preprocess="none"))
    return pipe.fit(frame, y2), frame


def _models_of_every_kind():
    """Fitted models covering what ``save_model`` writes: every registered method on two and
    three classes with final model l2 and l1 + Platt, and the other options that add types."""
    import scipy.sparse as sp

    from svmtune.methods import available_methods

    from .test_all_methods import _LIGHT

    X, y2, y3 = _data()
    X, y2, y3 = X[:36], y2[:36], y3[:36]
    for method in available_methods():
        light = _LIGHT.get(method)
        yield SVMTuner(method=method, method_params=light, final_model="l2").fit(X, y2)
        yield SVMTuner(
            method=method, method_params=light, final_model="l1", probability="platt"
        ).fit(X, y3)
    yield SVMTuner(method="default", multiclass="ovo").fit(X, y3)
    yield SVMTuner(method="default", final_model="lowrank").fit(X, y3)
    sparse_rows = sp.csr_matrix(np.where(abs(X) > 0.7, X, 0))
    yield SVMTuner(method="default", final_model="lowrank").fit(sparse_rows, y2)
    yield SVMTuner(method="default").fit(sp.csr_matrix(np.where(abs(X) > 0.7, X, 0)), y2)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(k=np.array(["u", "v", None] * 12))
    yield SVMTuner(method="default", preprocess="auto").fit(frame, y2)
    yield SVMTuner(method="default", preprocess="none", random_state=np.random.RandomState(0)).fit(
        X, y2
    )
    yield SVMTuner(method="default", class_weight={0: 1.0, 2: 2.0}).fit(X, np.argmax(X, axis=1))
    for labels in (np.argmax(X, axis=1), y3):  # keyed by NumPy labels: numpy.int64, numpy.str_
        weights = {c: 1.0 + k for k, c in enumerate(np.unique(labels))}
        yield SVMTuner(method="default", class_weight=weights).fit(X, labels)
    yield _pipeline_model()[0]


@pytest.mark.slow  # ~45 fits, every registered method
def test_model_types_are_exactly_what_models_hold():
    """MODEL_TYPES is re-derived from fitted models: a pair missing from it refuses a model
    svmtune wrote; an extra one trusts a type no model holds."""
    found: set[tuple[str, str]] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in _models_of_every_kind():
            found |= _schema_types(model)
    listed = set(MODEL_TYPES)
    assert not found - listed, f"add to MODEL_TYPES: {sorted(found - listed)}"
    assert not listed - found, f"no fitted model holds: {sorted(listed - found)}"
    assert len(MODEL_TYPES) == len(listed)
    assert not any(name.count(".") < 1 for _, name in MODEL_TYPES)


def test_pipeline_around_svmtuner_round_trip(tmp_path):
    pipe, frame = _pipeline_model()
    path = tmp_path / "pipe.skops"
    save_model(pipe, path)
    assert "numpy.dtype" in sio.get_untrusted_types(file=path)  # OneHotEncoder's dtype
    got = load_model(path)
    assert type(got) is type(pipe)
    np.testing.assert_array_equal(got.predict(frame), pipe.predict(frame))
    np.testing.assert_array_equal(got.predict_proba(frame), pipe.predict_proba(frame))


# ---------------------------------------------------------------------------- crafted files
def _fitted_file(tmp_path) -> bytes:
    X, y2, _ = _data()
    save_model(SVMTuner(method="default").fit(X, y2), tmp_path / "m.skops")
    return (tmp_path / "m.skops").read_bytes()


def _payloads(tmp_path):
    """``(name, node, side effect happened?)`` of callables inside scikit-learn that run a
    command, run Python or delete a file when skops constructs them."""
    from ._model_files import call_node

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    ran_shell, ran_python = tmp_path / "shell_ran", tmp_path / "python_ran"
    return [
        (
            "check_output",
            call_node("sklearn.utils._testing", "check_output", ["touch", str(ran_shell)]),
            ran_shell.exists,
        ),
        (
            "assert_run_python_script_without_output",
            call_node(
                "sklearn.utils._testing",
                "assert_run_python_script_without_output",
                f"open({str(ran_python)!r}, 'w').write('x'); print('x')",
            ),
            ran_python.exists,
        ),
        (
            "remove",
            call_node("sklearn.datasets._species_distributions", "remove", str(victim)),
            lambda: not victim.exists(),
        ),
    ]


@pytest.mark.parametrize("where", ["alone", "in_a_model"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_crafted_callables_inside_sklearn_refused_before_anything_runs(tmp_path, which, where):
    from ._model_files import archive, with_attribute

    name, node, happened = _payloads(tmp_path)[which]
    data = archive(node) if where == "alone" else with_attribute(_fitted_file(tmp_path), "x_", node)
    path = tmp_path / "crafted.skops"
    path.write_bytes(data)
    with pytest.raises(UntrustedModelError, match=rf"never holds: .*\.{name} "):
        load_model(path)
    with pytest.raises(UntrustedModelError):
        load_model(path, trust_pickle=True)
    assert not happened()


def test_function_objects_not_listed_refused(tmp_path):
    from ._model_files import function_node, with_attribute

    for module, name in [
        ("sklearn.utils._testing", "check_output"),
        ("svmtune.persist", "save_model"),
        ("svmtune.preprocess", "make_preprocessor"),
    ]:
        path = tmp_path / "f.skops"
        path.write_bytes(with_attribute(_fitted_file(tmp_path), "f_", function_node(module, name)))
        with pytest.raises(UntrustedModelError, match=rf"{module}\.{name} \(FunctionNode\)"):
            load_model(path)


def test_listed_type_under_another_loader_refused(tmp_path):
    """An allowed name is allowed with its own loader only: a ConstructorFromReduceNode of
    SVMTuner would call it with arguments from the file."""
    from ._model_files import call_node, with_attribute

    node = call_node("svmtune.tuner", "SVMTuner")
    path = tmp_path / "m.skops"
    path.write_bytes(with_attribute(_fitted_file(tmp_path), "x_", node))
    with pytest.raises(UntrustedModelError, match="ConstructorFromReduceNode"):
        load_model(path)


def test_other_skops_protocol_refused(tmp_path):
    from ._model_files import archive, json_node

    path = tmp_path / "old.skops"
    path.write_bytes(archive(json_node(1), protocol=0))
    with pytest.raises(UntrustedModelError, match="protocol 0"):
        load_model(path)


# ---------------------------------------------------------------------------- bombs
def _peak_bytes(fn) -> int:
    """Peak bytes Python and NumPy allocate while ``fn`` runs (tracemalloc)."""
    import tracemalloc

    tracemalloc.start()
    try:
        try:
            fn()
        except (UntrustedModelError, DamagedModelError, MemoryError):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_one_array_read_by_many_objects_refused_within_4x(tmp_path):
    """A file whose one array is referenced by 16 objects: skops would read (and build) it 16
    times (compressed, the file would be small: the declared sizes catch that first)."""
    from ._model_files import archive, array_node, list_node, npy

    member = npy(np.random.default_rng(0).random(2**20 // 8))  # 1 MiB
    root = list_node(*[array_node("a.npy") for _ in range(16)])
    data = archive(root, {"a.npy": member})
    path = tmp_path / "bomb.skops"
    path.write_bytes(data)
    with pytest.raises(UntrustedModelError, match="a.npy for 16 objects"):
        load_model(path)
    assert _peak_bytes(lambda: load_model(path)) < 4 * len(member)
    # the same array under one object id (as skops writes a shared array) loads
    shared = list_node(*[array_node("a.npy", ident=7) for _ in range(16)])
    path.write_bytes(archive(shared, {"a.npy": member}))
    assert len(load_model(path)) == 16


def test_declared_sizes_bounded_before_reading(tmp_path):
    import zipfile

    from ._model_files import archive, array_node, npy

    member = npy(np.zeros(2**23 // 8))  # 8 MiB of zeros: ~8 KB deflated, ratio ~1000
    path = tmp_path / "bomb.skops"
    path.write_bytes(archive(array_node("a.npy"), {"a.npy": member}, compression=8))
    assert zipfile.ZipFile(path).getinfo("a.npy").compress_size * 100 < len(member)
    with pytest.raises(UntrustedModelError, match="unpacked bytes"):
        load_model(path)
    assert _peak_bytes(lambda: load_model(path)) < len(member) / 4


def test_npy_header_larger_than_its_data_refused(tmp_path):
    """A .npy header may declare any shape; NumPy allocates it before reading the data."""
    from ._model_files import archive, array_node, npy

    member = npy(np.zeros(4))
    forged = member.replace(b"(4,)", b"(2199023255552,)")  # 2**41 float64 = 16 TiB
    forged = forged[:10] + forged[10:].replace(b" " * 12, b"", 1)  # header length kept
    assert len(forged) == len(member)
    path = tmp_path / "bomb.skops"
    path.write_bytes(archive(array_node("a.npy"), {"a.npy": forged}))
    with pytest.raises(DamagedModelError, match="a.npy declares an array of 17592186044416 bytes"):
        load_model(path)


@pytest.mark.parametrize(
    "items",
    [
        b'{"__loader__": 0}',  # one-key objects: 17 bytes of text, about 200 as a dict
        b"[[], [], []]",  # lists: 2 bytes of text, 56 as a list
        b"123456789012",  # 12-digit ints: 32 bytes as an int
    ],
    ids=["objects", "lists", "ints"],
)
def test_schema_json_parse_bounded_by_4x_the_unpacked_size(tmp_path, items):
    """JSON whose Python objects take many times its text is refused while it is parsed,
    before it takes 4 times the model's unpacked size (no density rule tells it from
    skops' own JSON: one-key objects at 20 bytes a token still parse at 4.7 times)."""
    import zipfile

    text = b'{"protocol": 2, "x": [' + b", ".join([items] * 100_000) + b"]}"
    path = tmp_path / "dense.skops"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("schema.json", text)
    with pytest.raises(UntrustedModelError, match="parse takes more than 4 times"):
        load_model(path)
    assert _peak_bytes(lambda: load_model(path)) < 4 * len(text)


def test_schema_json_past_its_size_bound_refused(tmp_path, monkeypatch):
    import svmtune.persist as persist

    from ._model_files import archive, json_node

    path = tmp_path / "m.skops"
    path.write_bytes(archive(json_node(1)))
    monkeypatch.setattr(persist, "MAX_SCHEMA_BYTES", 100)
    with pytest.raises(UntrustedModelError, match="schema.json of .* bytes \\(at most 100\\)"):
        load_model(path)


def test_schema_json_object_of_no_skops_node_refused(tmp_path):
    import zipfile

    path = tmp_path / "m.skops"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("schema.json", b'{"protocol": 2, "x": [{"a": 1}]}')
    with pytest.raises(UntrustedModelError, match="object that is no skops node"):
        load_model(path)


def test_legit_model_loads_within_4x_its_unpacked_size(tmp_path):
    import zipfile

    X, y2, _ = _data()
    tuner = SVMTuner(method="rbsvm").fit(np.vstack([X] * 5), np.concatenate([y2] * 5))
    path = tmp_path / "m.skops"
    save_model(tuner, path)
    unpacked = sum(i.file_size for i in zipfile.ZipFile(path).infolist())
    assert _peak_bytes(lambda: load_model(path)) < 4 * unpacked


# ---------------------------------------------------------------------------- damaged files
def _saved(tmp_path) -> Path:
    X, y2, _ = _data()
    path = tmp_path / "m.skops"
    save_model(SVMTuner(method="default").fit(X, y2), path)
    return path


@pytest.mark.parametrize("cut", ["half", "last_byte", "middle_chunk", "empty"])
def test_truncated_skops_file_named_damaged(tmp_path, cut):
    path = _saved(tmp_path)
    data = path.read_bytes()
    n = len(data)
    path.write_bytes(
        {
            "half": data[: n // 2],
            "last_byte": data[:-1],
            "middle_chunk": data[: n // 3] + data[n // 3 + 1000 :],
            "empty": b"",
        }[cut]
    )
    with pytest.raises(DamagedModelError, match=r"model file .*m.skops is damaged or truncated"):
        load_model(path)
    with pytest.raises(DamagedModelError):  # trusting pickles changes nothing
        load_model(path, trust_pickle=True)


def test_truncated_pickle_named_damaged(tmp_path):
    X, y2, _ = _data()
    path = tmp_path / "m.joblib"
    save_model(SVMTuner(method="default").fit(X, y2), path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(DamagedModelError, match="pickle stops before its end"):
        load_model(path)
    path.write_bytes(b"a,b,c\n1,2,3\n")  # not a model at all: not steered to trust it
    with pytest.raises(DamagedModelError, match="not a model file .* neither a skops archive"):
        load_model(path)


@pytest.mark.parametrize("suffix", [".skops", ".joblib"])
def test_interrupted_save_leaves_the_old_file(tmp_path, suffix):
    """A save that fails half-way (the file size limit stands in for a full disk) leaves the
    previous model whole and no temporary file."""
    import resource
    import signal

    X, y2, y3 = _data()
    path = tmp_path / f"m{suffix}"
    save_model(SVMTuner(method="default").fit(X, y2), path)
    before = path.read_bytes()
    bigger = SVMTuner(method="default").fit(np.vstack([X] * 20), np.concatenate([y3] * 20))
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 100, hard))
    try:
        with pytest.raises(OSError):
            save_model(bigger, path)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    old = load_model(path, trust_pickle=True)
    np.testing.assert_array_equal(old.classes_, np.unique(y2))
