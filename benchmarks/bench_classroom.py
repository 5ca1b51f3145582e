"""A class on one server, measured: N simulated learners share one model server on this machine.

For each class size, one server is started as docs/models.md tells an instructor to (the
course's launcher, a class key, one slot per learner, prompt cache off, on 127.0.0.1 here),
and N learner processes start at once, each running a lesson's live path against it with
COURSE_BACKEND=openai and COURSE_WORKERS=1, as a learner in class would:

  lesson 01  the 18 first drafts (temperature 0, seed 42, 512 tokens), each judged by the
             hidden tests in the sandbox (on this machine too: a pessimistic class, whose
             laptops would run their own sandboxes);
  lesson 02  maker-checker on lesson 02's live sample (fibonacci, unique, running_average,
             median), at most 4 rounds each.

Per class size: each learner's wall time (median, slowest), per-request latency p50/p95/max
(the client's own, waits included), completion tokens per second in aggregate, errors by kind
(busy, timeout at COURSE_TIMEOUT_S, connect, other), and how many learners got an output (a
draft's code, a loop's final code and stop) different from the one learner of the N=1 run:
batching can change a temperature-0 reply, and this counts it. `--hog` adds one more
learner who runs lesson 01 with COURSE_WORKERS=4 over and over until the others finish (a
learner running a full experiment in class) and gets a slot of its own too.

    python benchmarks/bench_classroom.py --learners 1,2,4          # one line per class size
    python benchmarks/bench_classroom.py --learners 4 --hog
    python benchmarks/bench_classroom.py --learners 1,2,4 --server-args=--no-speculative
    python benchmarks/bench_classroom.py --learners 8 --server http://gpu:8080/v1 class-key qwen-class
    python benchmarks/bench_classroom.py --report                  # the table, no model

Resumable: a class size already in the results file (same settings) is skipped. Bounded: each
class has a deadline (10 min + 8 min per learner), past which its learners are stopped and
counted as unfinished; the server and every learner stop when the class ends. Nothing else
should run on the machine meanwhile (a second CPU-heavy process cuts generation several-fold).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from functools import partial
from pathlib import Path

from course_runtime.model_file import DEFAULT

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "classroom.jsonl"
LESSON_02_TASKS = ("fibonacci", "unique", "running_average", "median")  # lesson 02's live runs
HOG_WORKERS = 4


def error_kind(message: str) -> str:
    """busy, timeout, connect or other, from a ModelError's message."""
    if "is busy" in message:
        return "busy"
    if "did not answer within" in message:
        return "timeout"
    if "could not connect" in message:
        return "connect"
    return "other"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def learner(out: Path, stop_file: Path | None) -> None:
    """One learner's lessons 01 and 02 (or, with `stop_file`, lesson 01 again and again until it
    exists, on COURSE_WORKERS threads); writes what it measured to `out`."""
    from course_runtime import connect
    from reflect import ModelError
    from reflect.model.parallel import parallel_map
    from reflect.model.roles import sampling
    from reflect.strategies.maker_checker import maker_checker
    from reflect.strategies.one_shot import one_shot
    from reflect.tasks.task import course_tasks, get_task

    conn = connect(quiet=True)
    chat = partial(conn.chat, **sampling("generator"))
    errors: Counter[str] = Counter()
    outputs: dict[str, str] = {}

    def draft(task):
        try:
            run = one_shot(chat, task)
            outputs[f"01/{task.id}"] = digest(run.final_code)
        except ModelError as err:
            errors[error_kind(str(err))] += 1

    start = time.monotonic()
    rounds = 0
    while True:
        parallel_map(draft, course_tasks(), workers=conn.workers, progress=False)
        rounds += 1
        if stop_file is None or stop_file.exists():
            break
    lesson01 = time.monotonic() - start
    lesson01_model = sum(r.latency_s for r in conn.ledger.records)  # the rest: sandbox and client
    for task_id in () if stop_file else LESSON_02_TASKS:
        task = get_task(task_id)
        run = maker_checker(chat, task.prompt(), entry_point=task.entry_point, task_id=task.id)
        outputs[f"02/{task.id}"] = digest(f"{run.stop.value}\n{run.final_code}")
        if run.error:
            errors[error_kind(run.error)] += 1
    records = conn.ledger.records
    out.write_text(
        json.dumps(
            {
                "lesson01_s": lesson01,
                "lesson01_model_s": lesson01_model,
                "wall_s": time.monotonic() - start,
                "rounds": rounds,
                "latencies": [r.latency_s for r in records],
                "completion_tokens": sum(r.completion_tokens for r in records),
                "errors": dict(errors),
                "outputs": outputs,
            }
        )
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def run_class(
    n: int,
    hog: bool,
    model: Path | None,
    work: Path,
    server_args: tuple[str, ...] = (),
    server=None,
) -> dict:
    """Start the server (or use `server`: base URL, key, model), the learners (and the hog), wait,
    stop everything it started; the class's figures."""
    from course_runtime.manager import free_port, launch, stop_pid

    slots = n + (1 if hog else 0)
    if server is None:
        key = secrets.token_urlsafe(16)  # a class key, as the page says
        extra = ["--slots", str(slots), *server_args]
        state = launch(model, free_port(), work / "server.log", extra, key=key)
        base_url, alias, pid = state.base_url, state.alias, state.pid
    else:
        (base_url, key, alias), pid, slots = server, None, None
    env = {
        **os.environ,
        "COURSE_BACKEND": "openai",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": key,
        "COURSE_MODEL": alias,
        "COURSE_WORKERS": "1",
    }
    stop_file = work / "stop"
    me = [sys.executable, __file__, "--learner"]
    procs = [
        subprocess.Popen([*me, str(work / f"learner{i}.json")], env=env, cwd=ROOT) for i in range(n)
    ]
    hogger = (
        subprocess.Popen(
            [*me, str(work / "hog.json"), "--stop-file", str(stop_file)],
            env={**env, "COURSE_WORKERS": str(HOG_WORKERS)},
            cwd=ROOT,
        )
        if hog
        else None
    )
    start = time.monotonic()
    deadline = start + 600 + 480 * n
    try:
        for p in procs:
            try:
                p.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
        class_s = time.monotonic() - start
        stop_file.touch()
        if hogger is not None:
            try:
                hogger.wait(timeout=360)  # its round in flight ends within the client's budget
            except subprocess.TimeoutExpired:
                hogger.kill()
    finally:
        for p in [*procs, *([hogger] if hogger else [])]:
            if p.poll() is None:
                p.kill()
        if pid is not None:
            stop_pid(pid)
    done = [
        json.loads(f.read_text()) for i in range(n) if (f := work / f"learner{i}.json").exists()
    ]
    hogged = json.loads((work / "hog.json").read_text()) if (work / "hog.json").exists() else None
    latencies = [x for d in done for x in d["latencies"]]
    tokens = sum(d["completion_tokens"] for d in done)  # the learners' (the hog's go on after)
    return {
        "learners": n,
        "hog": hog,
        "slots": slots,
        "server_args": " ".join(server_args),
        "finished": len(done),
        "class_s": round(class_s, 1),
        "learner_s": sorted(round(d["wall_s"], 1) for d in done),
        "lesson01_s": sorted(round(d["lesson01_s"], 1) for d in done),
        "lesson01_model_s": sorted(
            round(d["lesson01_model_s"], 1) for d in done if "lesson01_model_s" in d
        ),
        "latency_s": {
            q: round(percentile(latencies, v), 1)
            for q, v in (("p50", 0.5), ("p95", 0.95), ("max", 1.0))
        },
        "calls": len(latencies),
        "tokens_per_s": round(tokens / class_s, 1),
        "errors": dict(sum((Counter(d["errors"]) for d in done), Counter())),
        "hog_rounds": hogged["rounds"] if hogged else None,
        "hog_calls": len(hogged["latencies"]) if hogged else None,
        "hog_errors": hogged["errors"] if hogged else None,
        "outputs": [d["outputs"] for d in done],
    }


def differing(row: dict, reference: dict[str, str] | None) -> tuple[int, list[str]] | None:
    """How many learners' outputs differ from the one learner's alone, and which outputs."""
    if reference is None:
        return None
    keys = sorted({k for o in row["outputs"] for k in o if o.get(k) != reference.get(k)})
    return sum(any(o.get(k) != v for k, v in reference.items()) for o in row["outputs"]), keys


def model_of(row: dict) -> str:
    """The model a class was measured on, as its server announced it."""
    return row["meta"]["model"]


def lone_outputs(rows: list[dict], model: str) -> dict[str, str] | None:
    """What the one learner of the 1-learner class (launcher's settings, no hog) on `model` got, if measured."""
    solo = next(
        (
            r
            for r in rows
            if r["learners"] == 1
            and not r["hog"]
            and not r.get("server_args")
            and model_of(r) == model
        ),
        None,
    )
    return solo["outputs"][0] if solo and solo["outputs"] else None


def report(rows: list[dict]) -> str:
    lines = [
        f"{'model':>36}{'learners':>9}{'slots':>6}{'hog':>5}{'server':>17}{'each learner s (med/max)':>26}{'lesson 01 s (med/max)':>23}"
        f"{'latency p50/p95/max s':>23}{'tok/s':>7}  errors  outputs unlike one learner's"
    ]
    for r in rows:
        each = (
            f"{statistics.median(r['learner_s']):.0f} / {max(r['learner_s']):.0f}"
            if r["learner_s"]
            else "-"
        )
        l01 = (
            f"{statistics.median(r['lesson01_s']):.0f} / {max(r['lesson01_s']):.0f}"
            if r["lesson01_s"]
            else "-"
        )
        lat = "{p50:.1f} / {p95:.1f} / {max:.1f}".format(**r["latency_s"])
        diff = differing(r, lone_outputs(rows, model_of(r)))
        said = (
            "n/a"
            if diff is None
            else f"{diff[0]}/{r['finished']} ({', '.join(diff[1][:4]) or '-'})"
        )
        unfinished = r["learners"] - r["finished"]
        errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items()) or "none"
        errors += f", {unfinished} unfinished" if unfinished else ""
        hog = "yes" if r["hog"] else "no"
        lines.append(
            f"{model_of(r):>36}{r['learners']:>9}{r['slots'] or '?':>6}{hog:>5}{r.get('server_args') or 'as the page says':>17}{each:>26}{l01:>23}{lat:>23}{r['tokens_per_s']:>7.1f}"
            f"  {errors}  {said}"
        )
    return "\n".join(lines)


def cpu_name() -> str:
    info = Path("/proc/cpuinfo")
    names = (
        [
            x.split(":", 1)[1].strip()
            for x in info.read_text().splitlines()
            if x.startswith("model name")
        ]
        if info.exists()
        else []
    )
    return names[0] if names else platform.processor()


def markdown(rows: list[dict], model: str = DEFAULT.label) -> str:
    """A table docs/instructor.md shows: the classes on `model`'s server as the page sets it up."""
    reference = lone_outputs(rows, model)
    rows = [r for r in rows if model_of(r) == model]
    lines = [
        "| learners | each learner, lessons 01 + 02: median / slowest | its lesson 01: median / slowest | "
        "one request as its learner waited for it: p50 / p95 / max | completion tokens/s, the learners "
        "together | errors | learners with any reply unlike the 1-learner run's |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["hog"], r["learners"])):
        if r.get("server_args"):
            continue
        who = (
            f"{r['learners']} + one with COURSE_WORKERS=4 ({r['slots']} slots)"
            if r["hog"]
            else str(r["learners"])
        )
        each = f"{statistics.median(r['learner_s']):.0f} s / {max(r['learner_s']):.0f} s"
        l01 = f"{statistics.median(r['lesson01_s']):.0f} s / {max(r['lesson01_s']):.0f} s"
        lat = "{p50:.1f} / {p95:.1f} / {max:.1f} s".format(**r["latency_s"])
        errors = sum(r["errors"].values()) + r["learners"] - r["finished"]
        diff = differing(r, reference)
        unlike = (
            "-"
            if r["learners"] == 1 and not r["hog"]
            else f"{diff[0]} of {r['finished']}"
            if diff
            else "n/a"
        )
        # a row measured before the hog's tokens were left out of it says so
        rate = "-" if r["hog"] and "hog_errors" not in r else f"{r['tokens_per_s']:.1f}"
        lines.append(f"| {who} | {each} | {l01} | {lat} | {rate} | {errors} | {unlike} |")
    return "\n".join(lines)


def load(path: Path) -> list[dict]:
    return (
        [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--learners", default="1,2,4,8,16", help="class sizes, comma-separated")
    ap.add_argument(
        "--hog", action="store_true", help="one more learner runs COURSE_WORKERS=4 meanwhile"
    )
    ap.add_argument(
        "--server-args",
        default="",
        help="more launcher options, e.g. --server-args=--no-speculative",
    )
    ap.add_argument(
        "--server",
        nargs=3,
        metavar=("BASE_URL", "KEY", "MODEL"),
        help="measure a class against a server already running (a GPU machine's, say)",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--report", action="store_true", help="print the table of --out and stop")
    ap.add_argument(
        "--markdown", action="store_true", help="print docs/instructor.md's tables and stop"
    )
    ap.add_argument("--learner", type=Path, help=argparse.SUPPRESS)  # a learner process's output
    ap.add_argument("--stop-file", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.learner:
        return learner(args.learner, args.stop_file)
    if args.markdown:
        rows = load(args.out)
        return print(
            "\n\n".join(f"{m}:\n\n{markdown(rows, m)}" for m in dict.fromkeys(map(model_of, rows)))
        )
    if not args.report:
        from course_runtime.model_file import model_label, model_path

        model = None if args.server else model_path()
        extra = tuple(args.server_args.split())
        label = f"server {args.server[0]}" if args.server else " ".join(extra)
        name = args.server[2] if args.server else model_label(model)
        done = {
            (r["learners"], r["hog"], r.get("server_args") or "", model_of(r))
            for r in load(args.out)
        }
        for n in [int(x) for x in args.learners.split(",")]:
            if (n, args.hog, label, name) in done:
                print(f"{n} learners{' + a hog' if args.hog else ''}: already measured, skipped")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                row = run_class(n, args.hog, model, Path(tmp), extra, args.server)
            row["server_args"] = label
            row["meta"] = {
                "model": name,
                "server_url": args.server[0]
                if args.server
                else "the course's launcher on 127.0.0.1",
                "cpu": cpu_name(),
                "cores": os.cpu_count(),
                "date": time.strftime("%Y-%m-%d"),
                "server": "already running"
                if args.server
                else "the course's launcher (prompt cache off, 8,192 tokens a slot, n-gram speculation "
                + ("off)" if "--no-speculative" in extra else "on)")
                + (f", {args.server_args}" if extra else ""),
                "command": f"python benchmarks/bench_classroom.py --learners {n}"
                + (" --hog" if args.hog else "")
                + (f" --server-args={args.server_args!r}" if extra else ""),
            }
            args.out.parent.mkdir(parents=True, exist_ok=True)
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(report([row]))
    print(report(load(args.out)))


if __name__ == "__main__":
    main()
