"""The package's folders are layers: a lower layer never imports a higher one, and
`import reflect` loads none of the heavy libraries (they come with the first use)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "shared" / "reflect"
RUNTIME = PKG.parent / "course_runtime"
SANDBOX = PKG.parent / "course_sandbox"
LAYERS = [
    "records",
    "testing",
    "model",
    "tasks",
    "judging",
    "memory",
    "strategies",
    "evaluation",
]


def layer_of(module: str) -> int:
    """Layer index of a dotted module inside reflect, by its longest listed prefix ('model.llm' -> the
    model layer); the package root is the top."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in LAYERS:
            return LAYERS.index(".".join(parts[:n]))
    return len(LAYERS)


def imports_of(path: Path) -> list[tuple[str, int]]:
    """(imported reflect module, line) for every import in a file, relative ones resolved."""
    here = path.relative_to(PKG).with_suffix("").parts
    package = here[:-1] if path.name != "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                target = ".".join([*base, node.module] if node.module else base)
                names = (
                    [target]
                    if node.module
                    else [f"{target}.{a.name}".strip(".") for a in node.names]
                )
            elif (node.module or "").startswith("reflect"):
                names = [node.module.removeprefix("reflect").strip(".")]
            else:
                continue
            out += [(n, node.lineno) for n in names if n]
        elif isinstance(node, ast.Import):
            out += [
                (a.name.removeprefix("reflect.").strip("."), node.lineno)
                for a in node.names
                if a.name.startswith("reflect.")
            ]
    return out


def test_every_module_sits_in_a_layer_folder():
    loose = sorted(p.name for p in PKG.glob("*.py") if p.name not in {"__init__.py", "records.py"})
    assert {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()} <= {
        layer.split(".")[0] for layer in LAYERS
    }
    assert loose == [], f"modules outside a layer folder: {loose}"


def test_no_layer_imports_a_higher_one():
    bad = []
    for path in PKG.rglob("*.py"):
        mod = ".".join(path.relative_to(PKG).with_suffix("").parts)
        if mod == "__init__":
            continue  # the package root re-exports from every layer, lazily
        for target, line in imports_of(path):
            if layer_of(target) > layer_of(mod):
                bad.append(
                    f"{path.relative_to(PKG)}:{line} ({LAYERS[layer_of(mod)]}) imports {target}"
                )
    assert bad == [], "\n".join(bad)


def test_the_layer_check_would_see_an_upward_import(tmp_path, monkeypatch):
    fake = tmp_path / "reflect"
    (fake / "model").mkdir(parents=True)
    (fake / "model" / "x.py").write_text("from ..strategies.scored import scored_reflection\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake)
    ((target, _),) = imports_of(fake / "model" / "x.py")
    assert target == "strategies.scored" and layer_of(target) > layer_of("model.x")


def test_the_runtime_and_the_sandbox_sit_above_the_package_which_imports_neither():
    """`course_runtime` (model file, server manager, `connect`) imports the client's layer, `reflect.model`, only;
    `course_sandbox` the bottom of the package only (records' thread-safe parsing, the platform check); and no
    module of `reflect` imports either, by name or lazily, nor the client's libraries (openai, httpx): a lesson
    connects through `course_runtime.connect`, a loop is given its `chat`, and `Task.run` finds the sandbox through
    the entry point group `reflect.sandbox`."""
    above = []
    for path in RUNTIME.glob("*.py"):
        above += [t for t, _ in imports_of_runtime(path) if not t.startswith("model")]
    for path in SANDBOX.glob("*.py"):
        above += [t for t, _ in imports_of_runtime(path) if t not in ("records", "model.config")]
    assert above == []
    back = sorted(
        f"{p.relative_to(PKG)}: {name}"
        for p in PKG.rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, ast.Import | ast.ImportFrom)
        for name in [getattr(n, "module", None) or "", *(a.name for a in n.names)]
        if name.startswith(
            (
                "course_runtime",
                "course_sandbox",
                "course_checks",
                "course_notebook",
                "course_bench",
                "openai",
                "httpx",
            )
        )
    )
    strings = (
        sorted(  # a lazy import by a module's name in a string (import_module("course_runtime..."))
            str(p.relative_to(PKG))
            for p in PKG.rglob("*.py")
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and n.value.startswith(("course_runtime.", "course_sandbox."))
            and " " not in n.value
        )
    )
    assert back == [] and strings == []


def test_the_layer_check_would_see_an_import_back_up(tmp_path, monkeypatch):
    fake = tmp_path / "reflect"
    (fake / "tasks").mkdir(parents=True)
    (fake / "tasks" / "task.py").write_text("from course_sandbox import run_code\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake)
    with pytest.raises(AssertionError):
        test_the_runtime_and_the_sandbox_sit_above_the_package_which_imports_neither()


def test_the_sandbox_is_the_installed_entry_point_and_its_absence_is_a_clear_error(monkeypatch):
    from importlib import metadata

    import course_sandbox
    from reflect.tasks import task

    assert task.sandbox() is course_sandbox.run_code
    task.sandbox.cache_clear()
    monkeypatch.setattr(metadata, "entry_points", lambda group: [])
    try:
        with pytest.raises(RuntimeError, match="course.py setup"):
            task.sandbox()
    finally:
        task.sandbox.cache_clear()


def imports_of_runtime(path: Path) -> list[tuple[str, int]]:
    """(reflect module, line) for every `reflect` import of a runtime module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reflect"):
            out.append((node.module.removeprefix("reflect").strip("."), node.lineno))
    return out


def test_the_courses_kernel_starts_without_pyplot():
    """The kernel class loads before IPython picks matplotlib's inline backend: a pyplot imported then
    (as the notebook layer's plots do) would fix the "agg" backend, and no lesson's figure would show."""
    code = "import course_runtime.kernel, sys; print('matplotlib.pyplot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_import_reflect_loads_no_heavy_library():
    heavy = ("openai", "httpx", "pydantic", "vcr", "matplotlib", "ipywidgets", "langgraph")
    code = f"import reflect, sys; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
    used = subprocess.run(
        [
            sys.executable,
            "-c",
            "import reflect, sys; reflect.CachedChat; print('reflect.model.cache' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert used == "True"  # the name still works: it is imported on first use
