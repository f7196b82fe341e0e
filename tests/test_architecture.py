"""The layers of svmtune, read from its source: no import cycles, modules and functions small.

The import graph is built with :mod:`ast` from ``src/svmtune``: every ``import svmtune.x`` and
``from ... import ...`` of a svmtune module anywhere in a module -- at the top, inside a
function, under ``TYPE_CHECKING`` -- is an edge, so a function-local import cannot hide a
cycle.  Relative imports are resolved against the importing module's package;
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.  An
import of a module's own parent package is no edge (Python has run that package's
``__init__`` before the module itself).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "svmtune"

#: the longest module and function (without its docstring) the layers allow
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
#: a longer function states why in its docstring, after this marker
LENGTH_MARKER = "Length:"


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _source(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module name a ``from ... import`` inside ``module`` imports from."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, else its longest dotted prefix that is one."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The svmtune modules an import statement inside ``module`` imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        source = _source(node, module, is_package)
        names = [
            f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
            for alias in node.names
        ]
    else:
        return set()
    found = {_resolve(n, modules) for n in names if n == "svmtune" or n.startswith("svmtune.")}
    return {t for t in found if t is not None}


def import_graph() -> dict[str, set[str]]:
    """Module -> the svmtune modules it imports (anywhere in its source)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _targets(node, module, is_package, modules):
                if target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), each a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _describe(cycle: frozenset[str], graph: dict[str, set[str]]) -> str:
    """``a -> b -> ... -> a`` through the cycle's modules, from its first in sorted order."""
    start = min(cycle)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in cycle)
        back = start in nxt and len(path) > 1
        fresh = [w for w in nxt if w not in seen]
        if back or not fresh:
            return " -> ".join(path + [start]) + (
                "" if len(seen) == len(cycle) else f" (component: {', '.join(sorted(cycle))})"
            )
        path.append(fresh[0])
        seen.add(fresh[0])


def test_graph_sees_function_local_and_relative_imports():
    """The graph builder itself: an import inside a function and ``from . import`` count."""
    modules = _modules()
    local = ast.parse("def f():\n    from svmtune.svm import fit_l2_svm\n").body[0].body[0]
    assert _targets(local, "svmtune.loo.rbsvm", False, modules) == {"svmtune.svm"}
    rel = ast.parse("from . import sphere\n").body[0]
    assert _targets(rel, "svmtune.loo.rbsvm", False, modules) == {"svmtune.loo.sphere"}
    rel_pkg = ast.parse("from .brute import brute_force_loo\n").body[0]
    assert _targets(rel_pkg, "svmtune.loo", True, modules) == {"svmtune.loo.brute"}
    name = ast.parse("from svmtune.loo import brute_force_loo\n").body[0]
    assert _targets(name, "svmtune.methods.base", False, modules) == {"svmtune.loo"}
    graph = import_graph()
    assert "svmtune._dual_solution" in graph["svmtune.svm"]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset({"a", "b", "c"})
    ]


def test_no_import_cycles():
    """No cycle among the modules of svmtune, but for the pending ones as they are."""
    graph = import_graph()
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


#: the layers, lowest first: a module imports only from its own layer or those below it
#: (docs/ARCHITECTURE.md draws them); a module is placed by its longest listed prefix
LAYERS = [
    (
        "support",
        [
            "svmtune.exceptions",
            "svmtune._warnings",
            "svmtune._jit",
            "svmtune._progress",
            "svmtune._memory",
        ],
    ),
    (
        "kernels and inputs",
        [
            "svmtune._factor",
            "svmtune._kernel_matrix_checks",
            "svmtune._option_values",
            "svmtune._dual_solution",
            "svmtune._loo_losses",
            "svmtune._labels",
            "svmtune.kernels",
            "svmtune.preprocess",
            "svmtune._standardised_rows",
            "svmtune._validation",
            "svmtune._dask_inputs",
        ],
    ),
    (
        "solvers",
        ["svmtune.svm", "svmtune.lowrank", "svmtune.estimators", "svmtune.estimators_lowrank"],
    ),
    ("closed forms and data criteria", ["svmtune.loo", "svmtune.criteria"]),
    ("searches", ["svmtune.search"]),
    ("methods", ["svmtune.methods"]),
    (
        "estimator",
        [
            "svmtune._door",
            "svmtune._final",
            "svmtune._params",
            "svmtune._results",
            "svmtune.tuner",
            "svmtune.persist",
            "svmtune.plotting",
            "svmtune.datasets",
        ],
    ),
    ("benchmark harness", ["svmtune.bench"]),
    ("command line and package", ["svmtune.cli", "svmtune"]),
]


def _layer(module: str) -> int:
    best, rank = "", None
    for k, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, rank = prefix, k
    assert rank is not None, f"{module} is in no layer of LAYERS"
    return rank


def test_imports_go_downwards_only():
    graph = import_graph()
    upward = [
        f"{a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})"
        for a, targets in graph.items()
        for b in targets
        if _layer(b) > _layer(a)
    ]
    assert not upward, "imports against the layers:\n" + "\n".join(sorted(upward))


def _function_lengths(tree: ast.AST):
    """``(name, line, length without the docstring, docstring)`` of every function."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            skip = 0
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                skip = first.end_lineno - first.lineno + 1
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1 - skip, doc


def _size_problems(module: str, path: Path) -> list[str]:
    text = path.read_text()
    out = []
    n = text.count("\n")
    if n > MAX_MODULE_LINES:
        out.append(f"{module}: {n} lines (> {MAX_MODULE_LINES})")
    for name, line, length, doc in _function_lengths(ast.parse(text)):
        if length > MAX_FUNCTION_LINES and LENGTH_MARKER not in doc:
            out.append(
                f"{module}:{line} {name}: {length} lines (> {MAX_FUNCTION_LINES}, no "
                f"{LENGTH_MARKER!r} in its docstring)"
            )
    return out


@pytest.mark.parametrize("module", sorted(_modules()))
def test_module_and_function_sizes(module):
    """At most 600 lines a module and 100 a function (docstring aside) unless the function's
    docstring says why after ``Length:``."""
    problems = _size_problems(module, _modules()[module])
    assert not problems, "\n".join(problems)


def test_no_module_branches_on_a_method_name():
    """Outside the registry (``methods/base.py``: ``METHODS``, ``YARDSTICKS``) no module
    compares a method's name with a registered one: a method's behaviour is asked of its
    selector (class attributes, ``holdout``, hooks), as issue 55 asks.  A comparison counts
    when one side is a registered name and the other reads a method's name (``method``,
    ``.method``, ``method_name``, ``.name``, a refiner); option values that happen to equal a
    method's name (``preprocess == "auto"``) are not method names.  The benchmark's and the
    demo's reference rows are found through ``YARDSTICKS``, the registry's one naming of
    the two reference methods: a comparison with it is no literal, and it is the registry
    that names them."""
    from svmtune.methods.base import METHODS

    def reads_a_method_name(node: ast.AST) -> bool:
        text = ast.unparse(node)
        last = text.rsplit(".", 1)[-1]
        return "method" in last or last in ("name", "mn", "refiner", "r")

    #: modules whose ``method`` is an option of another kind: RBFBlocks' block rule
    #: ("auto", "exact", "histogram")
    other_methods = {"svmtune.criteria.blocks"}
    found = []
    for module, path in _modules().items():
        if module == "svmtune.methods.base" or module in other_methods:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            for i, side in enumerate(sides):
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                named = [v.value for v in values if isinstance(v, ast.Constant)]
                if any(isinstance(v, str) and v in METHODS for v in named) and any(
                    reads_a_method_name(o) for j, o in enumerate(sides) if j != i
                ):
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
