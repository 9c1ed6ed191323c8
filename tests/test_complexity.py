"""No function of the project is above cyclomatic complexity 20, as radon counts it.

ruff's C901 (pyproject.toml) stops at the same number, but its count leaves out `and`/`or`, so a function can pass
ruff and still hold more paths than a reader can follow (one held 35 by radon's count); radon counts them. Classes
are not checked as wholes (radon sums their methods): each method and nested function is, in nested classes too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("compiler", "stacks", "platform_constructs", "trainctl", "training", "app.py")
MAX_COMPLEXITY = 20


def python_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the checked packages (and app.py), caches left out."""
    found: list[Path] = []
    for name in CHECKED:
        path = root / name
        found += [path] if path.is_file() else [p for p in path.rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(found)


def _functions(blocks: Iterable[Function | Class], prefix: str = "") -> Iterator[tuple[str, Function]]:
    """Every function in radon's blocks with its dotted name, however deeply nested in classes or other functions."""
    for block in blocks:
        name = prefix + block.name
        if isinstance(block, Class):
            yield from _functions([*block.methods, *block.inner_classes], name + ".")
        else:
            yield name, block
            yield from _functions(block.closures, name + ".")


def too_complex(path: Path, root: Path = ROOT) -> list[str]:
    """`file:function:score` for each function of one file above the limit."""
    # cc_visit lists top-level classes' methods beside their classes; they are reached through the classes.
    roots = [block for block in cc_visit(path.read_text()) if isinstance(block, Class) or not block.is_method]
    return [f"{path.relative_to(root)}:{name}:{function.complexity}"
            for name, function in _functions(roots) if function.complexity > MAX_COMPLEXITY]


def test_no_function_is_above_the_limit() -> None:
    files = python_files()
    assert len(files) > 100
    assert [line for path in files for line in too_complex(path)] == []


def _body(branches: int, indent: str) -> str:
    """A function body of complexity `branches + 1`: one path, plus one per `if`."""
    ifs = "".join(f"{indent}if x == {n}:\n{indent}    return {n}\n" for n in range(branches))
    return f"{ifs}{indent}return -1\n"


def test_the_check_names_a_planted_function_and_its_score(tmp_path: Path) -> None:
    """A method, a nested function and a nested class's method at 21 are named; a method at 20, and a class whose
    methods add up past 20, pass."""
    source = tmp_path / "planted.py"
    source.write_text(
        f"class Planted:\n    def busy(self, x):\n{_body(20, ' ' * 8)}\n    def calm(self, x):\n{_body(19, ' ' * 8)}\n"
        f"def outer(x):\n    def inner(x):\n{_body(20, ' ' * 8)}\n    return inner\n\n"
        f"class Outer:\n    class Inner:\n        def deep(self, x):\n{_body(20, ' ' * 12)}"
    )
    assert sorted(too_complex(source, tmp_path)) == ["planted.py:Outer.Inner.deep:21", "planted.py:Planted.busy:21",
                                                     "planted.py:outer.inner:21"]
