"""Hypothesis strategies for the fuzz suite: option values, data, weights, labels, files."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

#: odd values every option of every method meets (types, non-finite, signs, containers)
ODD_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        2,
        3,
        -1,
        10**30,
        0.0,
        0.5,
        -0.5,
        1e-300,
        1e300,
        float("nan"),
        float("inf"),
        -float("inf"),
        "x",
        "",
        "false",
        "auto",
        "l1",
        "grid",
        "rbf",
        [],
        [1],
        (0, 1),
        (0, 1, 1),
        (1, 0),
        (-1, 1, 0.5),
        (0, 1, 0),
        (1, 2, 3, 4),
        {"a": 1},
        {"sigma": 1.0, "C": 1.0},
        np.float64("nan"),
        np.int64(2),
        np.bool_(True),
        np.array([1.0, 2.0]),
    ]
)

#: small numbers for options of a fit (budgets kept small so that a case runs fast)
SMALL_VALUES = st.one_of(
    st.integers(-2, 4),
    st.floats(-4, 4, allow_nan=False),
    st.sampled_from([float("nan"), float("inf"), 1e-12, 1e12, True, False, None, "x"]),
    st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.sampled_from([1, 2, 0, -1, 0.5])),
)

#: cheap settings of the expensive methods (a fit in well under a second on tiny data)
LIGHT = {
    "grid": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 3},
    "halving": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 3},
    "random": {"n_iter": 3, "n_splits": 3},
    "tpe": {"max_evals": 3, "n_startup": 2, "n_splits": 3},
    "optuna": {"n_trials": 3, "n_startup": 2, "n_splits": 3},
    "cv_cv": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2), "n_splits": 3},
    "span_rule": {"log2_sigma": (-2, 2, 2), "log2_C": (-2, 2, 2)},
    "rbsvm": {"max_iter": 5},
    "span": {"max_iter": 5},
    "radius_margin": {"max_iter": 5},
    "rbsvm_lowrank": {"max_iter": 5},
    "span_lowrank": {"max_iter": 5},
    "radius_margin_lowrank": {"max_iter": 5},
    "esdr": {"n_splits": 3},
    "dbtc": {"n_splits": 3},
    "j4": {"n_splits": 3},
    "ld": {"n_splits": 3},
}

#: options whose generated value may make a case slow however small the data (budgets,
#: grids, repetitions): the fit fuzz keeps their light value
BUDGETS = {
    "n_iter",
    "max_evals",
    "n_trials",
    "n_candidates",
    "log2_sigma",
    "log2_C",
    "log2_C_pos",
    "log2_C_neg",
    "sigmas",
    "Cs",
    "A_values",
    "B_values",
    "max_iter",
    "max_eval",
    "restarts",
    "jump_restarts",
    "n_components",
    "max_exact",
}


@st.composite
def datasets(draw, *, max_n: int = 24, max_d: int = 3):
    """``(X, y, sample_weight)``: tiny classification data with odd corners (duplicate rows,
    constant or huge or tiny columns, NaN or infinity cells, string labels, 2-3 classes,
    rare classes, zero or extreme weights, a 1-D or 3-D X now and then)."""
    n = draw(st.one_of(st.integers(2, 6), st.integers(8, max_n), st.integers(8, max_n)))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    k = draw(st.sampled_from([2, 2, 2, 3]))
    labels = draw(
        st.sampled_from(
            [np.arange(k), np.array(["no", "yes", "maybe"][:k]), np.array([-1.0, 1.0, 7.5][:k])]
        )
    )
    kind = draw(st.sampled_from(["balanced"] * 4 + ["rare", "one_class", "random"]))
    if kind == "balanced":
        y = labels[np.arange(n) % k]
    elif kind == "rare":
        y = labels[(np.arange(n) < 2).astype(int)]
    elif kind == "one_class":
        y = labels[np.zeros(n, dtype=int)]
    else:
        y = labels[rng.integers(0, k, n)]
    X = X + 1.5 * np.unique(y, return_inverse=True)[1].reshape(-1, 1)  # separable-ish
    corner = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "none",
                "dup",
                "const",
                "scale_big",
                "scale_small",
                "nan",
                "inf",
                "int",
            ]
        )
    )
    if corner == "dup" and n >= 4:
        X[n // 2 :] = X[: n - n // 2]
    elif corner == "const":
        X[:, 0] = 3.0
    elif corner == "scale_big":
        X *= draw(st.sampled_from([1e12, 1e100, 1e160]))
    elif corner == "scale_small":
        X *= draw(st.sampled_from([1e-12, 1e-100, 1e-160]))
    elif corner == "nan":
        X[rng.integers(0, n), rng.integers(0, d)] = np.nan
    elif corner == "inf":
        X[rng.integers(0, n), rng.integers(0, d)] = np.inf
    elif corner == "int":
        X = np.round(X).astype(int)
    shape = draw(st.sampled_from(["2d"] * 12 + ["1d", "3d"]))
    if shape == "1d":
        X = X[:, 0]
    elif shape == "3d":
        X = X[:, :, None]
    wkind = draw(st.sampled_from(["none"] * 4 + ["uniform", "random", "zeros", "extreme", "bad"]))
    if wkind == "none":
        w = None
    elif wkind == "uniform":
        w = np.full(n, draw(st.sampled_from([1e-12, 0.5, 3.0, 1e6, 1e12])))
    elif wkind == "random":
        w = rng.uniform(0.1, 3.0, n)
    elif wkind == "zeros":
        w = np.where(rng.uniform(size=n) < 0.3, 0.0, 1.0)
    elif wkind == "extreme":
        w = np.ones(n)
        w[rng.integers(0, n)] = draw(st.sampled_from([1e-200, 1e200, 1e90, 1e-90]))
    else:
        w = draw(
            st.sampled_from(
                [np.full(n, np.nan), -np.ones(n), np.zeros(n), np.ones(n + 1), "x", np.inf]
            )
        )
    return X, y, w


@st.composite
def csv_texts(draw):
    """Text that is, or is nearly, a CSV/TSV file: a header or none, delimiters mixed,
    quotes, missing cells, ragged rows, long fields, decimal commas, junk."""
    delim = draw(st.sampled_from([",", ",", ";", "\t", "|", " ", "  "]))
    tidy = draw(st.booleans())  # numbers and a few categories: mostly a readable file
    n_cols = draw(st.integers(2 if tidy else 1, 5))
    n_rows = draw(st.integers(0, 12))
    number = st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.6g}")
    odd = st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(-(10**20), 10**20).map(str),
        st.sampled_from(["", "?", "NA", "a", "b", "yes", "no", '"q,uoted"', '"', "1,5", "ä", "#"]),
        st.text(max_size=6),
    )
    cell = st.one_of(number, number, st.sampled_from(["a", "b", ""])) if tidy else odd
    rows = []
    if tidy or draw(st.booleans()):
        header = [f"c{j}" for j in range(n_cols - 1)] + [
            draw(st.sampled_from(["label", "class", "target"] * 3 + ["y"]))
        ]
        rows.append(delim.join(header))
    for _ in range(n_rows):
        width = n_cols if tidy or draw(st.integers(0, 9)) else draw(st.integers(1, n_cols + 2))
        rows.append(delim.join(draw(cell) for _ in range(width)))
    if draw(st.integers(0, 19)) == 0 and rows:
        rows[draw(st.integers(0, len(rows) - 1))] += "x" * draw(st.sampled_from([1000, 140_000]))
    return draw(st.sampled_from(["\n", "\r\n"])).join(rows) + draw(st.sampled_from(["", "\n"]))


@st.composite
def svmlight_texts(draw):
    """``label index:value ...`` lines with odd labels, indices (0, huge, past int64,
    unsorted, repeated), values, comments and qid fields."""
    lines = []
    for _ in range(draw(st.integers(0, 10))):
        label = draw(
            st.sampled_from(["0", "1", "-1", "+1", "2"] * 3 + ["1.5", "nan", "x", "1e400"])
        )
        feats = []
        for _ in range(draw(st.integers(0, 4))):
            idx = draw(
                st.one_of(
                    st.integers(0, 12),
                    st.integers(1, 12),
                    st.integers(1, 12),
                    st.sampled_from([10**6, 2 * 10**6, 10**7, 2 * 10**9, 10**20, -1]),
                )
            )
            val = draw(st.sampled_from(["1", "0.5", "-2e3"] * 4 + ["nan", "inf", "1e400", "x", ""]))
            feats.append(f"{idx}:{val}")
        if draw(st.integers(0, 3)):  # mostly increasing, as the format requires
            feats = sorted(set(feats), key=lambda f: int(f.split(":")[0]))
        extra = draw(st.sampled_from([""] * 6 + [" # comment", " qid:3", " 3", ":"]))
        lines.append(" ".join([label, *feats]) + extra)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@st.composite
def arff_texts(draw):
    """ARFF/KEEL text: attributes of every kind, odd nominal lists, data rows ragged or not."""
    n_attr = draw(st.integers(0, 4))
    kinds = st.sampled_from(
        ["numeric", "real", "integer [0, 5]", "{a, b}", "{0, 1}", "string", "date", "{", "bogus"]
    )
    lines = [draw(st.sampled_from(["@relation r", "@RELATION 'x y'", "", "% comment"]))]
    for j in range(n_attr):
        lines.append(f"@attribute a{j} {draw(kinds)}")
    lines.append(f"@attribute class {draw(st.sampled_from(['{p, n}', 'numeric', '{}']))}")
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["@inputs a0", "@outputs class", "@outputs a0, class"])))
    lines.append(draw(st.sampled_from(["@data", "@DATA", ""])))
    cell = st.sampled_from(["1", "0.5", "a", "b", "p", "n", "?", "'q'", "<null>", "", "x,y"])
    for _ in range(draw(st.integers(0, 8))):
        lines.append(",".join(draw(cell) for _ in range(draw(st.integers(1, n_attr + 2)))))
    return "\n".join(lines) + "\n"


#: raw bytes: any bytes, with a bias towards text-like ones and byte-order marks
RAW_BYTES = st.one_of(
    st.binary(max_size=400),
    st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x1f\x8b", b""]).flatmap(
        lambda head: st.binary(max_size=200).map(lambda tail: head + tail)
    ),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
