"""Every public name in the package says what it is for: modules, functions, classes, methods."""

import ast
import re
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


def only_at_home(root: Path = PKG, elsewhere: Path = PKG.parents[1]) -> list[str]:
    """Public module-level names of the package that no other file of the course mentions (code,
    lessons, docs): each could be private, and would then need no docstring."""
    texts = {
        p: set(re.findall(r"\w+", p.read_text(errors="ignore")))
        for folder in ("shared", "tests", "tools", "benchmarks", "notebooks", "solutions", "docs")
        for p in (elsewhere / folder).rglob("*")
        if p.suffix in {".py", ".ipynb", ".md"} and ".egg-info" not in str(p)
    }
    texts |= {p: set(re.findall(r"\w+", p.read_text())) for p in elsewhere.glob("*.[mp][dy]")}
    alone = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets = [node] if isinstance(node, ast.FunctionDef | ast.ClassDef) else []
            if isinstance(node, ast.Assign):
                targets = [t for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                targets = [node.target]
            for name in (getattr(t, "name", None) or getattr(t, "id", "") for t in targets):
                if not name.startswith("_") and not any(
                    name in words for p, words in texts.items() if p != path
                ):
                    alone.append(f"{path.relative_to(root)}: {name}")
    return alone


def test_at_most_30_public_names_are_used_only_in_their_own_file():
    alone = only_at_home()
    assert len(alone) <= 30, alone


def test_the_check_sees_a_name_no_other_file_uses(tmp_path):
    (tmp_path / "shared" / "pkg").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "shared" / "pkg" / "m.py").write_text("A = 1\n_B = 2\n\ndef f():\n    return A\n")
    (tmp_path / "docs" / "m.md").write_text("`f` is documented")
    assert only_at_home(tmp_path / "shared" / "pkg", tmp_path) == ["m.py: A"]
