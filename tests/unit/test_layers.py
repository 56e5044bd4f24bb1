"""The house without loops: no import circles, and no import from a lower layer to a
higher one. Imports under ``TYPE_CHECKING`` count too: a type-only circle is still one
the reader has to hold in their head."""

from __future__ import annotations

import ast
from pathlib import Path

import trawl

ROOT = Path(trawl.__file__).parent

# Lowest first; a module may import from its own layer and the ones before it.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "trawl._version",
        "trawl._native",  # C (csrc/), its stub here: imports nothing of trawl
        "trawl.errors",
        "trawl.clock",
        "trawl.models",
        "trawl.jobs",
        "trawl.roles",
        "trawl.urls",
        "trawl.logs",
        "trawl.ranking",
        "trawl.ticker",
        "trawl.pickling",
        "trawl.memory",
        "trawl.locks",  # imports nothing of trawl
        "trawl.lru",  # imports nothing of trawl
        "trawl.scratch",
    ),
    ("trawl.config", "trawl.config_load", "trawl.rules"),
    ("trawl.dedup",),
    ("trawl.storage",),
    ("trawl.archive", "trawl.frontier"),
    ("trawl.fetch", "trawl.parse"),
    ("trawl.index",),
    (
        "trawl.crawl",
        "trawl.crawl_roles",
        "trawl.wire",
        "trawl.records",
        "trawl.space",
        "trawl.telemetry",
        "trawl.progress",
        "trawl.stats",
        "trawl.export",
        "trawl.export_links",
    ),
    ("trawl.api", "trawl.service", "trawl.web", "trawl.cli", "trawl.demo", "trawl.demo_search"),
    ("trawl", "trawl.__main__", "trawl.testing"),
)


def _modules() -> dict[str, Path]:
    out = {}
    # A compiled module counts by its stub (``trawl/_native.pyi``).
    for path in [*ROOT.rglob("*.py"), *ROOT.rglob("*.pyi")]:
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "trawl":
                    continue
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    deps.add(sub if sub in mods else node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.split(".")[0] == "trawl")
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def _layer(module: str) -> int:
    best = (-1, -1)
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if module == p or module.startswith(p + "."):
                best = max(best, (len(p), i))
    assert best[1] >= 0, f"{module} has no layer: add it to LAYERS"
    return best[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    wrong = sorted(
        f"{m} -> {d}" for m, deps in _graph().items() for d in deps if _layer(d) > _layer(m)
    )
    assert wrong == []


def _outside_imports(path: Path) -> set[str]:
    """Top-level names of the checkout's own trees (tests, bench) that ``path`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n.split(".")[0] for n in names if n.split(".")[0] in {"tests", "bench"})
    return found


def test_the_package_imports_nothing_from_the_tests_or_bench_trees() -> None:
    # The hostile test web lives in tests/testweb/ and is not shipped; a shipped module
    # importing it (or anything else of the checkout) would break an installed trawl.
    wrong = sorted(
        f"{name} -> {dep}" for name, path in _modules().items() for dep in _outside_imports(path)
    )
    assert wrong == []
