"""Static checks with `ast` (nothing is executed). Each returns a pass flag and a one-line reason.

A hybrid critic combines these cheap, certain checks (format, required names, forbidden
calls) with an LLM verdict on content.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..records import parse_python, parsed


@dataclass(frozen=True)
class CheckResult:
    """One static check: its name, pass flag and a one-line reason."""

    name: str
    passed: bool
    reason: str


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


def parses(code: str) -> CheckResult:
    """The code is valid Python."""
    try:
        parse_python(code)
    except SyntaxError as err:
        return CheckResult("parses", False, f"SyntaxError line {err.lineno}: {err.msg}")
    except ValueError as err:
        return CheckResult("parses", False, f"cannot parse: {err}")
    return CheckResult("parses", True, "the module parses")


def has_function(code: str, name: str, arity: int | None = None) -> CheckResult:
    """The code defines `name` (with `arity` parameters, if given)."""
    tree = parsed(code)
    if tree is None:
        return CheckResult("has_function", False, "the module does not parse")
    fn = _function(tree, name)
    if fn is None:
        return CheckResult("has_function", False, f"no function named {name!r}")
    n = len(fn.args.posonlyargs) + len(fn.args.args)
    if arity is not None and n != arity:
        return CheckResult(
            "has_function", False, f"{name}() takes {n} positional parameters, expected {arity}"
        )
    return CheckResult(
        "has_function",
        True,
        f"{name}() is defined" + (f" with {n} parameters" if arity is not None else ""),
    )


def has_docstring(code: str, name: str) -> CheckResult:
    """The function has a docstring."""
    tree = parsed(code)
    fn = _function(tree, name) if tree else None
    if fn is None:
        return CheckResult("has_docstring", False, f"no function named {name!r}")
    doc = ast.get_docstring(fn)
    if not doc or not doc.strip():
        return CheckResult("has_docstring", False, f"{name}() has no docstring")
    return CheckResult("has_docstring", True, f"{name}() has a docstring")


def has_type_hints(code: str, name: str) -> CheckResult:
    """Every parameter and the return value are annotated."""
    tree = parsed(code)
    fn = _function(tree, name) if tree else None
    if fn is None:
        return CheckResult("has_type_hints", False, f"no function named {name!r}")
    args = [
        a
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        if a.arg not in ("self", "cls")
    ]
    missing = [a.arg for a in args if a.annotation is None]
    if missing:
        return CheckResult(
            "has_type_hints", False, f"parameters without type hints: {', '.join(missing)}"
        )
    if fn.returns is None:
        return CheckResult("has_type_hints", False, f"{name}() has no return type hint")
    return CheckResult("has_type_hints", True, f"{name}() is fully annotated")


def _called_names(node: ast.AST) -> list[tuple[str, int]]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Name):
                found.append((f.id, sub.lineno))
            elif isinstance(f, ast.Attribute):
                found.append(("." + f.attr, sub.lineno))
    return found


def no_forbidden_calls(code: str, forbidden: tuple[str, ...] = ("sorted", ".sort")) -> CheckResult:
    """Names like "sorted" match a plain call; ".sort" matches a method call `x.sort()`."""
    tree = parsed(code)
    if tree is None:
        return CheckResult("no_forbidden_calls", False, "the module does not parse")
    hits = [(n, ln) for n, ln in _called_names(tree) if n in forbidden]
    if hits:
        name, line = hits[0]
        shown = name.lstrip(".") + "()" if not name.startswith(".") else f"the {name}() method"
        return CheckResult("no_forbidden_calls", False, f"uses forbidden {shown} on line {line}")
    return CheckResult(
        "no_forbidden_calls", True, f"no call to {', '.join(f.lstrip('.') for f in forbidden)}"
    )


def raises_exception(code: str, name: str, exc: str) -> CheckResult:
    """The function raises the given exception somewhere."""
    tree = parsed(code)
    fn = _function(tree, name) if tree else None
    if fn is None:
        return CheckResult("raises_exception", False, f"no function named {name!r}")
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            target = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
            if isinstance(target, ast.Name) and target.id == exc:
                return CheckResult(
                    "raises_exception", True, f"{name}() raises {exc} (line {sub.lineno})"
                )
    return CheckResult("raises_exception", False, f"{name}() never raises {exc}")


def run_checks(code: str, spec: dict) -> list[CheckResult]:
    """Run the checks a task asks for. `spec` keys: name, arity, docstring, type_hints, forbidden, raises."""
    results = [parses(code)]
    name = spec.get("name")
    if name:
        results.append(has_function(code, name, spec.get("arity")))
        if spec.get("docstring"):
            results.append(has_docstring(code, name))
        if spec.get("type_hints"):
            results.append(has_type_hints(code, name))
        for exc in spec.get("raises", []):
            results.append(raises_exception(code, name, exc))
    if spec.get("forbidden"):
        results.append(no_forbidden_calls(code, tuple(spec["forbidden"])))
    return results
