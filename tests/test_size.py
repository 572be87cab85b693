"""The size rule of the code base (docs/design/layers.md#size): a module holds one job
(at most 400 lines), a function does one thing (at most 50 lines of code, its docstring
not counted) and a module's docstring fits a screen (at most 25 lines). Lines are never
joined to pass it: ruff refuses two statements on a line (E701, E702) and lines over 120
characters (E501)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dolb", "benchmarks")
"""The folders the rule holds in: the package, and the project measuring it."""
MODULE_LINES = 400
FUNCTION_LINES = 50
SCREEN_LINES = 25
"""A module docstring's lines at most, its opening and closing quotes' lines included: it
says what the module holds and how to use it; the why goes to docs/design/."""
TEMPLATES = {("dolb/learners/linear/driver.py", "_drive")}
"""Functions that are source templates rather than functions: the linear learners'
per-example loop, whose ``_feed`` lines are expanded into each compiled copy's source
(docs/design/layers.md#size)."""


def modules():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def code_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of ``function`` from its first decorator to its end, less its docstring."""
    first = min([function.lineno, *(decorator.lineno for decorator in function.decorator_list)])
    body = function.body
    documented = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    docstring = body[0].end_lineno - body[0].lineno + 1 if documented else 0
    return function.end_lineno - first + 1 - docstring


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split them by job): {long}"


def test_no_function_is_over_50_lines_of_code():
    long = {}
    for path in modules():
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if function and (name, node.name) not in TEMPLATES and (n := code_lines(node)) > FUNCTION_LINES:
                long[f"{name}:{node.name}"] = n
    assert not long, f"functions over {FUNCTION_LINES} lines of code (split them by step): {long}"


def docstring_lines(tree: ast.Module) -> int:
    """The lines a module's docstring spans in its source, from its opening quotes to its
    closing ones (0 without a docstring)."""
    if ast.get_docstring(tree, clean=False) is None:
        return 0
    return tree.body[0].end_lineno - tree.body[0].lineno + 1


def test_no_module_docstring_is_over_a_screen():
    long = {str(p.relative_to(ROOT)): n for p in modules()
            if (n := docstring_lines(ast.parse(p.read_text(encoding="utf-8")))) > SCREEN_LINES}
    assert not long, (f"module docstrings over {SCREEN_LINES} lines (say what and how; move the why to "
                      f"docs/design/): {long}")


def test_the_rule_counts_code_not_docstrings():
    tree = ast.parse('@decorated\ndef f():\n    """One\n    two."""\n    x = 1\n    return x\n')
    assert code_lines(tree.body[0]) == 4
    assert code_lines(ast.parse("def g(): return 1\n").body[0]) == 1
    assert docstring_lines(ast.parse('"""One\ntwo\n"""\nx = 1\n')) == 3
    assert docstring_lines(ast.parse('"""One line."""\n')) == 1
    assert docstring_lines(ast.parse("x = 1\n")) == 0
