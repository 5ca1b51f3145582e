"""Execute the course notebooks headless, with one progress line per notebook.

    python tools/run_notebooks.py --live [--only 01]    # `make run`: live model, copies in build/run/
    python tools/run_notebooks.py --record [--only 01]  # `make record`: rewrite cassettes, refresh outputs
    python tools/run_notebooks.py --refresh [--only 01] # `make notebooks`: replay only, refresh outputs

Every mode runs the solved lessons, solutions/NN: a learner's copy cannot run top to bottom
before the learner has built its pieces. --record runs solutions/NN live in record mode, then
executes it in replay and saves its outputs in place (the committed outputs are a real run,
replayed, so nbval in replay compares them exactly), then derives notebooks/NN from it
(tools/build_exercises.py: the same cells and outputs, the learner's cells empty). With COURSE_RECORD_KEEP=1 (`make record NB=03 KEEP=1`) calls
that are already in the cassette are replayed and only new ones go to the model; the
solution's replay then prunes the interactions no longer asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]


def derive(solution: Path, learner: Path, check: bool) -> bool:
    """tools/build_exercises.py's `derive`: the learner copy from its solution."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_exercises", ROOT / "tools" / "build_exercises.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.derive(solution, learner, check)


CELL_TIMEOUT_S = (
    4 * 3600
)  # per cell: live, lesson 06's benchmark cell runs 126 strategy runs (37 min two at a time on 2 cores in a fresh-clone `make run NB=06`; the recording took about 69 min)


def execute(
    path: Path, env: dict[str, str], timeout: int = CELL_TIMEOUT_S
) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits this process's environment
    start = time.perf_counter()
    try:
        NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            extra_arguments=["--log-level=ERROR"],
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    nb.metadata["kernelspec"] = course_kernelspec()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = joined_streams(cell.outputs)
    return nbformat.from_dict(as_saved_by_jupyterlab(nb)), time.perf_counter() - start


def joined_streams(outputs: list) -> list:
    """A cell's outputs with each run of adjacent stdout (or stderr) pieces as one, as JupyterLab shows
    and saves them: where the kernel's flushes cut a printed text depends on the machine's load, and a
    committed notebook should not."""
    out: list = []
    for o in outputs:
        if (
            o.output_type == "stream"
            and out
            and out[-1].output_type == "stream"
            and out[-1].name == o.name
        ):
            out[-1].text += o.text
        else:
            out.append(o)
    return out


def as_saved_by_jupyterlab(node):
    """The notebook's numbers as JupyterLab writes them back. JavaScript has one number type, so a
    float with no fraction (a FloatSlider's 8.0 in the saved widget state) comes back as 8: a
    notebook committed that way is left byte for byte unchanged when a learner opens and saves it."""
    if isinstance(node, float) and node.is_integer():
        return int(node)
    if isinstance(node, dict):
        return {k: as_saved_by_jupyterlab(v) for k, v in node.items()}
    if isinstance(node, list):
        return [as_saved_by_jupyterlab(v) for v in node]
    return node


def course_kernelspec() -> dict[str, str]:
    """The kernelspec the course's environment registers: what JupyterLab writes into a notebook
    it opens. Committing the same means opening a lesson does not modify it."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}


def selected(folder: str, only: str | None) -> list[Path]:
    paths = sorted((ROOT / folder).glob("[0-9][0-9]*_*.ipynb"))
    return [p for p in paths if not only or p.name.startswith(only)]


def run_live(only: str | None) -> int:
    from reflect.model.config import Settings

    live = Settings.from_env().live_backend
    out_dir = ROOT / "build" / "run"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = selected("solutions", only)
    failed = 0
    for i, path in enumerate(paths, 1):
        try:
            nb, secs = execute(path, {"COURSE_BACKEND": live})
        except CellExecutionError as err:
            failed += 1
            print(
                f"[{i}/{len(paths)}] {path.name} on the {live} model: FAILED\n{str(err)[:2000]}",
                flush=True,
            )
            continue
        nbformat.write(nb, out_dir / path.name)
        print(
            f"[{i}/{len(paths)}] {path.name} on the {live} model: ok ({secs:.0f} s) -> build/run/{path.name}",
            flush=True,
        )
    return failed


def run_record(only: str | None) -> int:
    from reflect.model.config import Settings

    source = Settings.from_env().record_from
    paths = selected("solutions", only)
    for i, sol in enumerate(paths, 1):
        _, secs = execute(sol, {"COURSE_BACKEND": "record", "COURSE_RECORD_FROM": source})
        # after a KEEP=1 recording, the solution's replay drops what it no longer asks for
        prune = "1" if os.environ.get("COURSE_RECORD_KEEP") == "1" else ""
        nb, _ = execute(sol, {"COURSE_BACKEND": "replay", "COURSE_REPLAY_PRUNE": prune})
        nbformat.write(nb, sol)
        derive(sol, ROOT / "notebooks" / sol.name, check=False)
        print(
            f"[{i}/{len(paths)}] {sol.name}: recorded live from {source} ({secs:.0f} s), outputs refreshed in replay",
            flush=True,
        )
    return 0


def run_refresh(only: str | None) -> int:
    """Re-execute solutions/ in replay, save their outputs and derive notebooks/ (no model needed)."""
    paths = selected("solutions", only)
    for i, path in enumerate(paths, 1):
        nb, secs = execute(path, {"COURSE_BACKEND": "replay"})
        nbformat.write(nb, path)
        derive(path, ROOT / "notebooks" / path.name, check=False)
        print(
            f"[{i}/{len(paths)}] {path.parent.name}/{path.name} in replay: ok ({secs:.0f} s)",
            flush=True,
        )
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--live", action="store_true")
    mode.add_argument("--record", action="store_true")
    mode.add_argument(
        "--refresh", action="store_true", help="replay only: refresh committed outputs"
    )
    ap.add_argument("--only", help="notebook number prefix, e.g. 01")
    args = ap.parse_args()
    run = run_live if args.live else run_record if args.record else run_refresh
    sys.exit(run(args.only))


if __name__ == "__main__":
    main()
