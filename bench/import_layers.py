"""The import graph of verimut's source, counted: modules, import edges, the longest chain, imports between packages.

    .venv/bin/python bench/import_layers.py [SRC]     (default: src/verimut of this checkout)

A chain is a path of modules each importing the next (function-level imports too); its length counts modules.
"Between packages" counts the edges whose two ends sit in different top-level folders of src/verimut (a module
directly in src/verimut is its own package). docs/development.md has the figures before and after issue 28.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import Counter
from pathlib import Path


def modules(src: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = ("verimut", *path.relative_to(src).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name and t != "verimut":
                out.add(t)
    return out


def package(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def main(argv: list[str]) -> None:
    src = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "src" / "verimut"
    mods = modules(src)
    graph = {n: imports(n, p, set(mods)) for n, p in mods.items()}

    @functools.cache
    def chain(n: str) -> tuple[str, ...]:
        longest: tuple[str, ...] = ()
        for m in graph[n]:
            c = chain(m)
            if len(c) > len(longest):
                longest = c
        return (n, *longest)

    edges = [(a, b) for a, bs in graph.items() for b in bs]
    between = Counter((package(a), package(b)) for a, b in edges if package(a) != package(b))
    longest = max((chain(n) for n in graph), key=len)
    print(f"modules: {len(mods)}  import edges: {len(edges)}  longest chain: {len(longest)} modules")
    print("  " + " -> ".join(longest))
    print(f"edges between packages: {sum(between.values())} over {len(between)} package pairs")
    for (a, b), n in sorted(between.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {a} -> {b}: {n}")


if __name__ == "__main__":
    main(sys.argv[1:])
