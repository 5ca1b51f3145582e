"""Every public name in the package says what it is for: modules, functions, classes, methods."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "shared" / "reflect"


def undocumented(root: Path = PKG) -> list[str]:
    """Public modules, functions, classes and methods without a docstring."""
    missing = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(root)
        if not ast.get_docstring(tree):
            missing.append(f"{where}: module")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                if not ast.get_docstring(node):
                    missing.append(f"{where}:{node.lineno} {node.name}")
                for m in node.body if isinstance(node, ast.ClassDef) else []:
                    if (
                        isinstance(m, ast.FunctionDef)
                        and not m.name.startswith("_")
                        and not ast.get_docstring(m)
                    ):
                        missing.append(f"{where}:{m.lineno} {node.name}.{m.name}")
    return missing


def test_every_public_name_has_a_docstring():
    assert undocumented() == []


def test_the_check_sees_a_missing_docstring(tmp_path):
    (tmp_path / "m.py").write_text(
        '"""A module."""\n\ndef f():\n    return 1\n\nclass C:\n    """C."""\n\n    def g(self):\n        pass\n'
    )
    assert undocumented(tmp_path) == ["m.py:3 f", "m.py:9 C.g"]
