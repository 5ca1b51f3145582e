"""Open every committed lesson in a real JupyterLab in headless Chromium: `make test-browser`.

For each notebook (a copy, in a scratch folder JupyterLab serves) it asserts what a learner
sees on opening a fresh clone:

- no dialog (a missing kernel, a file JupyterLab cannot read, an error);
- no stderr or error output among the committed outputs;
- every committed picture (image/png, image/svg+xml) is on the page as a decoded image;
- every widget shows its text view (what the course writes for a reader without a kernel), and
  no widget's repr (`VBox(`, `HBox(`, `interactive(`) is on the page;
- the tab is not marked modified once the notebook has settled, and saving it without running
  anything leaves the file byte for byte as committed (JupyterLab's Mermaid renderer, for one,
  rewrites a `text/vnd.mermaid` output on open).

Before the lessons it opens copies of lesson 00 with a fault planted in each (a Mermaid output,
a stderr output, a picture that does not decode, a widget's repr, a kernel that is not installed)
and insists each fault is reported: a check that cannot fail is not run.

Needs Debian's `chromium` and `chromium-driver` (Selenium is pointed at /usr/bin/chromedriver;
nothing is downloaded). JupyterLab runs on a free port of 127.0.0.1 with a random token, with
its own settings and workspace folders, so nothing of the machine's own Jupyter set-up leaks in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from course_runtime.manager import free_port

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
INSTALL = "apt-get install -y chromium chromium-driver"
PICTURES = ("image/png", "image/svg+xml")
REPRS = ("VBox(", "HBox(", "interactive(", "Output(")
SETTLE = 3.0  # seconds a notebook must stay unmodified after its last output rendered


@dataclass
class Finding:
    notebook: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def lessons() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
        (ROOT / "solutions").glob("*.ipynb")
    )


def committed_pictures(nb: dict) -> int:
    """How many outputs a renderer must show as a picture (the richest type JupyterLab picks)."""
    return sum(
        1
        for cell in nb["cells"]
        for out in cell.get("outputs", [])
        if any(kind in out.get("data", {}) for kind in PICTURES)
    )


def committed_widgets(nb: dict) -> list[str]:
    """The text view of every committed widget: what a reader without a kernel sees."""
    return [
        "".join(out["data"].get("text/plain", ""))
        for cell in nb["cells"]
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]


def _add_output(nb: dict, output: dict) -> dict:
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"] = [*cell.get("outputs", []), {"metadata": {}, **output}]
    return nb


def _no_kernel(nb: dict) -> dict:
    nb["metadata"]["kernelspec"] = {
        "display_name": "Gone",
        "language": "python",
        "name": "no-such-kernel",
    }
    return nb


# Faults planted in a copy of the first notebook, each with what the check must say about it.
PLANTED = {
    "a Mermaid output (JupyterLab rewrites it on open)": (
        lambda nb: _add_output(
            nb,
            {
                "output_type": "display_data",
                "data": {"text/vnd.mermaid": "graph TD;\n  a --> b;\n"},
            },
        ),
        "marked modified on open",
    ),
    "a stderr output": (
        lambda nb: _add_output(
            nb, {"output_type": "stream", "name": "stderr", "text": "Traceback: boom\n"}
        ),
        "stderr output on the page",
    ),
    "a picture that does not decode": (
        lambda nb: _add_output(
            nb,
            {
                "output_type": "display_data",
                "data": {"image/png": "bm90IGEgcGljdHVyZQ==\n", "text/plain": "<Figure>"},
            },
        ),
        "decoded images",
    ),
    "a widget showing its repr": (
        lambda nb: _add_output(
            nb,
            {
                "output_type": "display_data",
                "data": {
                    "application/vnd.jupyter.widget-view+json": {
                        "model_id": "0" * 32,
                        "version_major": 2,
                        "version_minor": 0,
                    },
                    "text/plain": "VBox(children=(IntSlider(value=0),))",
                },
            },
        ),
        "a widget shows its repr",
    ),
    "a kernel that is not installed (JupyterLab swaps in its own)": (
        _no_kernel,
        "marked modified on open",
    ),
    "a file that is not a notebook": (lambda nb: '{"cells": [', "a dialog is open"),
}


def missing_browser() -> str | None:
    gone = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if gone:
        return (
            f"{' and '.join(gone)} not found: run `{INSTALL}` (as root), then `make test-browser`"
        )
    return None


@contextlib.contextmanager
def jupyterlab(root: Path, scratch: Path):
    """JupyterLab serving `root` on 127.0.0.1, with its own settings; yields the base URL and token."""
    port, token = free_port(), secrets.token_hex(16)
    settings = scratch / "settings"
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    # Render every cell at once (no virtual scrolling), so every output is on the page to check.
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # No "get notified about Jupyter news?" toast over the page.
    (scratch / "config" / "labconfig").mkdir(parents=True)
    (scratch / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(scratch / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(scratch / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"),
        "COURSE_BACKEND": "replay",
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ServerApp.port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = (scratch / "jupyterlab.log").open("w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise SystemExit(f"JupyterLab exited at start: see {log.name}")
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(
                        f"JupyterLab did not answer within 90 s: see {log.name}"
                    ) from None
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def close_sessions(base: str, token: str) -> None:
    """Shut down the kernels the opened notebooks started: sixteen idle kernels are memory for nothing."""
    auth = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(
        urllib.request.Request(f"{base}/api/sessions", headers=auth), timeout=10
    ) as r:
        sessions = json.load(r)
    for session in sessions:
        urllib.request.urlopen(
            urllib.request.Request(
                f"{base}/api/sessions/{session['id']}", method="DELETE", headers=auth
            ),
            timeout=30,
        )


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


PAGE_STATE = """
const dialogs = [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText.slice(0, 300));
const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
if (!panel) return dialogs.length ? {dialogs: dialogs} : null;
const tab = document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current');
const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')];
return {
  cells: panel.querySelectorAll('.jp-Cell').length,
  dirty: tab ? tab.classList.contains('jp-mod-dirty') : null,
  dialogs: dialogs,
  stderr: outputs.filter(o => ['application/vnd.jupyter.stderr'].includes(o.dataset.mimeType))
                 .map(o => o.innerText.slice(0, 200)),
  images: [...panel.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg')]
            .filter(i => i.tagName !== 'IMG' || (i.complete && i.naturalWidth > 0)).length,
  pictures: outputs.filter(o => ['image/png', 'image/svg+xml'].includes(o.dataset.mimeType)).length,
  text: outputs.map(o => o.innerText).join('\\n'),  // what the outputs show, not the code
};
"""


def check(driver, base: str, token: str, name: str, path: Path) -> Finding:
    """Open `name` (a file under the served root), wait for it to settle, save it, compare bytes."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    finding, start = Finding(name), time.monotonic()
    before = path.read_bytes()
    try:
        nb = json.loads(before)
    except ValueError:
        nb = {"cells": []}
    driver.get(f"{base}/lab/tree/{name}?token={token}&reset")  # reset: no tabs restored from before
    cells = len(nb["cells"])
    state, last, stable_since = None, None, None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = driver.execute_script(PAGE_STATE)
        if state and state["dialogs"]:  # JupyterLab could not show the notebook as it is
            finding.problems.append(f"a dialog is open: {state['dialogs']}")
            return finding
        shape = (
            None
            if state is None
            else (state["cells"], state["images"], state["dirty"], len(state["text"]))
        )
        if state and state["cells"] == cells and shape == last:
            stable_since = stable_since or time.monotonic()
            if time.monotonic() - stable_since >= SETTLE:
                break
        else:
            stable_since = None
        last = shape
        time.sleep(0.5)
    else:
        finding.problems.append(f"did not settle within 120 s (last state: {last})")
        return finding
    if state["stderr"]:
        finding.problems.append(f"stderr output on the page: {state['stderr']}")
    want = committed_pictures(nb)
    if state["pictures"] != want or state["images"] < want:
        finding.problems.append(
            f"{want} committed pictures, {state['pictures']} picture outputs on the page, "
            f"{state['images']} decoded images"
        )
    unseen = [text[:60] for text in committed_widgets(nb) if text not in state["text"]]
    if unseen:
        finding.problems.append(f"widgets not showing their text view: {unseen}")
    shown = [r for r in REPRS if r in state["text"]]
    if shown:
        finding.problems.append(f"a widget shows its repr: {shown}")
    if state["dirty"]:
        finding.problems.append("marked modified on open, before anything ran")
    # Save without running anything: JupyterLab writes what its model now holds.
    panel = driver.find_element(
        "css selector", ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
    )
    panel.click()
    mtime = path.stat().st_mtime_ns
    ActionChains(driver).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
    deadline = time.monotonic() + 30
    while path.stat().st_mtime_ns == mtime and time.monotonic() < deadline:
        time.sleep(0.2)
    saved = settled(path, deadline)
    if path.stat().st_mtime_ns == mtime:
        finding.problems.append("Ctrl+S did not save the file within 30 s")
    elif saved != before:
        finding.problems.append(f"saving changed the file: {describe(before, saved)}")
    finding.seconds = time.monotonic() - start
    return finding


def settled(path: Path, deadline: float) -> bytes:
    """The file once the save has finished writing it: its mtime moves when the write begins, so read
    until two reads a moment apart agree and hold a whole notebook (or the deadline passes)."""
    last = path.read_bytes()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = path.read_bytes()
        if now == last:
            try:
                json.loads(now)
                return now
            except ValueError:
                pass
        last = now
    return last


def describe(before: bytes, after: bytes) -> str:
    """Where a saved notebook differs from the committed one, in a line."""
    old, new = json.loads(before), json.loads(after)
    meta = sorted(
        k
        for k in {**old["metadata"], **new["metadata"]}
        if old["metadata"].get(k) != new["metadata"].get(k)
    )
    if meta:
        return f"metadata {meta}"
    for i, (a, b) in enumerate(zip(old["cells"], new["cells"], strict=False)):
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            detail = ""
            if "outputs" in keys:
                types = [sorted(o.get("data", {})) for o in b.get("outputs", [])]
                detail = f" (outputs now {types})"
            return f"cell {i} ({a.get('id')}): {keys}{detail}"
    if len(old["cells"]) != len(new["cells"]):
        return f"{len(old['cells'])} cells, now {len(new['cells'])}"
    return "the same notebook written differently (formatting)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="default: every lesson and solution"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and its log")
    args = parser.parse_args(argv)
    problem = missing_browser()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    paths = [p.resolve() for p in args.notebooks] or lessons()
    scratch = Path(tempfile.mkdtemp(prefix="course-browser-"))
    served = scratch / "served"
    served.mkdir()
    jobs = []
    plants = []
    for i, (fault, (plant, expect)) in enumerate(PLANTED.items()):
        copy = served / f"planted_{i}.ipynb"
        planted = plant(json.loads(lessons()[0].read_text()))
        copy.write_text(
            planted if isinstance(planted, str) else json.dumps(planted, indent=1) + "\n"
        )
        plants.append((fault, expect, copy))
    for path in paths:
        copy = served / path.parent.name / path.name
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, copy)
        jobs.append((f"{path.parent.name}/{path.name}", copy))
    failed = 0
    try:
        with jupyterlab(served, scratch) as (base, token):
            driver = browser()
            try:
                for fault, expect, copy in plants:  # a check that cannot fail is not run
                    seen = check(driver, base, token, copy.name, copy)
                    close_sessions(base, token)
                    caught = [p for p in seen.problems if expect in p]
                    if not caught:
                        print(
                            f"FAIL  planted {fault}: not caught (the check said {seen.problems}): "
                            "the check cannot see what it is meant to catch"
                        )
                        return 1
                    print(f"ok    planted {fault}: caught ({caught[0][:90]})")
                for name, copy in jobs:
                    found = check(driver, base, token, name, copy)
                    close_sessions(base, token)
                    failed += not found.ok
                    print(f"{'ok  ' if found.ok else 'FAIL'}  {name} ({found.seconds:.0f} s)")
                    for p in found.problems:
                        print(f"      {p}")
            finally:
                driver.quit()
    finally:
        if args.keep:
            print(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"{len(jobs) - failed} of {len(jobs)} notebooks open clean in JupyterLab (Python {platform.python_version()})"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
