"""The package's folders are layers: a lower layer never imports a higher one, and
`import reflect` loads none of the heavy libraries (they come with the first use)."""

import ast
import subprocess
import sys
from pathlib import Path

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
    "notebook",
    "bench",
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


def test_the_local_runtime_sits_beside_the_package_above_its_client():
    """`course_runtime` (model file, server manager, connect) reads the client's settings and hands it the
    function that starts the server: it imports `reflect.model` only, and `reflect` imports it only where a
    connection is made (the package root's `connect`, on first use, and the bench command)."""
    below = []
    for path in RUNTIME.glob("*.py"):
        below += [t for t, _ in imports_of_runtime(path) if not t.startswith("model")]
    assert below == []
    users = sorted(
        str(p.relative_to(PKG))
        for p in PKG.rglob("*.py")
        if any(
            isinstance(n, ast.ImportFrom) and (n.module or "").startswith("course_runtime")
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    )
    assert users == ["__init__.py", "bench/__init__.py"]


def test_the_sandbox_sits_beside_the_package_below_its_tasks():
    """`course_sandbox` runs model-written code in its own process: it imports the bottom of the package only
    (records' thread-safe parsing, the platform check), and the package runs code through it from one
    place, the tasks' `Task.run`."""
    below = []
    for path in SANDBOX.glob("*.py"):
        below += [t for t, _ in imports_of_runtime(path) if t not in ("records", "model.config")]
    assert below == []
    users = sorted(
        str(p.relative_to(PKG))
        for p in PKG.rglob("*.py")
        if any(
            isinstance(n, ast.ImportFrom | ast.Import)
            and any(
                name.startswith("course_sandbox")
                for name in [getattr(n, "module", None) or "", *(a.name for a in n.names)]
            )
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    )
    assert users == ["tasks/task.py"]


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
            "import reflect, sys; reflect.connect; print('openai' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert used == "True"  # the name still works: it is imported on first use
