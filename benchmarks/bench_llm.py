"""make bench-llm: the course's local engine (llama.cpp's server, via xllamacpp), measured.

Prints, in one run on the same model file and thread count:
1. single-stream generation through server + openai client, against the engine's own decode
   speed for the same requests (llama.cpp's `timings`; target: at least 95%), and side by side
   with the previous engine, llama-cpp-python's server, when it is installed
   (`pip install "llama-cpp-python[server]==0.3.36"`; requests interleaved);
2. aggregate generation throughput at 1, 2 and 4 concurrent requests on a 4-slot server;
3. n-gram speculative decoding on a refine request (the reply copies most of its prompt):
   tokens/s with and without, and whether the outputs are byte-identical (target: 1.4x);
4. a 4-turn maker-checker thread on a 2-slot server: prompt tokens sent vs evaluated, with the
   prompt cache on and off (the course runs with it off: see course_runtime.server_process), and whether
   the replies differ;
5. replay time per call from a cassette (target: under 2 ms), next to the openai client's own
   per-call cost on an in-memory transport;
6. each lesson's recorded model time: calls, tokens and the sum of the latencies stored in its
   cassette (no model needed: `python benchmarks/bench_llm.py lessons`).

Nothing here is a pass/fail test: it measures, so it can be rerun on any machine. Run it with
nothing else busy: a second CPU-heavy process cuts generation several-fold on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai

from course_runtime.manager import ServerState, free_port, launch, stop_pid
from course_runtime.model_file import model_label, model_path
from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT

THREADS = os.cpu_count() or 2
REPEATS = 3
GEN_TOKENS = 160
TOPICS = [
    "reverses the words of a sentence",
    "returns the median of a list",
    "merges two sorted lists",
    "parses a duration like 1h30m",
    "counts the vowels in a text",
    "checks for a palindrome",
    "converts a Roman numeral",
    "flattens a nested list",
]
REFINE_CODE = "\n".join(
    [
        "def summarize(rows):",
        '    """Totals per key, the mean, and the largest row."""',
        "    totals = {}",
    ]
    + [
        f"    # step {i}: keep the running total for key k{i}\n    totals['k{i}'] = totals.get('k{i}', 0) + rows[{i}]"
        for i in range(12)
    ]
    + [
        "    mean = sum(totals.values()) / len(totals)",
        "    biggest = min(rows)",
        "    return totals, mean, biggest",
    ]
)
REFINE = [
    {
        "role": "system",
        "content": "You fix Python code. Output only the full corrected code in one code block.",
    },
    {
        "role": "user",
        "content": f"The largest row is wrong (min instead of max). Fix it:\n```python\n{REFINE_CODE}\n```",
    },
]


def client_for(state: ServerState) -> openai.OpenAI:
    return openai.OpenAI(base_url=state.base_url, api_key=state.key, max_retries=0, timeout=900)


def start(model: Path, log: Path, *extra: str) -> ServerState:
    """A private server started by the package's own launcher (not the shared one)."""
    return launch(model, free_port(), log, ["--idle-minutes", "30", *extra])


def ask(client: openai.OpenAI, prompt: str | list, max_tokens: int = GEN_TOKENS, **extra) -> dict:
    """One chat call: wall seconds, tokens, the text, and llama.cpp's own timings if any."""
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    t = time.perf_counter()
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=messages, max_tokens=max_tokens, temperature=0, seed=42, **extra
    )
    wall = time.perf_counter() - t
    body = raw.http_response.json()
    return {
        "wall": wall,
        "tokens": body["usage"]["completion_tokens"],
        "prompt": body["usage"]["prompt_tokens"],
        "text": body["choices"][0]["message"]["content"],
        "timings": body.get("timings"),
    }


def prompt(i: int) -> str:
    return f"Write a Python function that {TOPICS[i % len(TOPICS)]}, with a docstring and three doctests."


def old_server(model: Path, log: Path):
    """llama-cpp-python's server on the same model and threads (the engine the course used before)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--n_threads",
        str(THREADS),
        "--n_threads_batch",
        str(THREADS),
        "--n_ctx",
        "8192",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    for _ in range(480):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                return proc, openai.OpenAI(
                    base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=900
                )
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    proc.kill()
    raise RuntimeError(f"llama-cpp-python's server did not start; see {log}")


def single_stream(model: Path, tmp: Path) -> None:
    state = start(model, tmp / "single.log", "--slots", "1", "--no-speculative")
    old = old_server(model, tmp / "old.log") if importlib.util.find_spec("llama_cpp") else None
    rows = {"new": [], "engine": [], "old": []}
    try:
        for i in range(REPEATS):
            r = ask(client_for(state), prompt(i))
            rows["new"].append(r["tokens"] / (r["wall"] - r["timings"]["prompt_ms"] / 1000))
            rows["engine"].append(r["timings"]["predicted_per_second"])
            if old:
                t = ask(old[1], prompt(i))
                pp = ask(old[1], prompt(i), max_tokens=1)  # its prompt time, to leave out as above
                rows["old"].append(t["tokens"] / max(t["wall"] - pp["wall"], 1e-6))
    finally:
        stop_pid(state.pid)
        if old:
            old[0].terminate()
            old[0].wait(30)
    new, engine = statistics.median(rows["new"]), statistics.median(rows["engine"])
    print("1. single stream, generation tokens/s (medians of", REPEATS, "requests)")
    print(f"   llama.cpp's own decode speed (timings)      {engine:6.1f}")
    print(
        f"   server + openai client, end to end          {new:6.1f}  = {new / engine:.0%} of the engine "
        f"(target >= 95%: {'met' if new / engine >= 0.95 else 'NOT met'})"
    )
    if old:
        oldv = statistics.median(rows["old"])
        print(
            f"   llama-cpp-python 0.3.36 server, same way    {oldv:6.1f}  (new engine {new / oldv - 1:+.0%})"
        )
    else:
        print("   llama-cpp-python's server: not installed, not compared")


def aggregate(model: Path, tmp: Path) -> None:
    state = start(model, tmp / "slots.log", "--slots", "4", "--no-speculative")
    client = client_for(state)
    print("\n2. aggregate generation throughput, 4-slot server (8 requests per level)")
    try:
        for k in (1, 2, 4):
            t = time.perf_counter()
            with ThreadPoolExecutor(k) as pool:
                done = list(pool.map(lambda i: ask(client, prompt(i), max_tokens=128), range(8)))
            wall = time.perf_counter() - t
            print(
                f"   {k} at once: {sum(d['tokens'] for d in done) / wall:6.1f} tokens/s "
                f"({sum(d['tokens'] for d in done)} tokens in {wall:.0f} s)"
            )
    finally:
        stop_pid(state.pid)


def speculative(model: Path, tmp: Path) -> None:
    spec = start(model, tmp / "spec.log", "--slots", "1")
    plain = start(model, tmp / "plain.log", "--slots", "1", "--no-speculative")
    runs = {"spec": [], "plain": []}
    try:
        for _ in range(REPEATS):  # interleaved: only one of them generates at a time
            for name, state in (("spec", spec), ("plain", plain)):
                runs[name].append(ask(client_for(state), REFINE, max_tokens=600))
    finally:
        stop_pid(spec.pid)
        stop_pid(plain.pid)
    speed = {n: statistics.median(r["tokens"] / r["wall"] for r in rs) for n, rs in runs.items()}
    same = all(a["text"] == b["text"] for a, b in zip(runs["spec"], runs["plain"], strict=True))
    print(
        f"\n3. n-gram speculative decoding on a refine request ({runs['spec'][0]['tokens']} tokens out)"
    )
    print(
        f"   off {speed['plain']:6.1f} tokens/s, on {speed['spec']:6.1f}: {speed['spec'] / speed['plain']:.2f}x "
        f"(target 1.4x: {'met' if speed['spec'] / speed['plain'] >= 1.4 else 'NOT met'}); "
        f"outputs byte-identical: {same}"
    )


def evaluated_tokens(state: ServerState) -> float:
    text = httpx.get(
        f"http://127.0.0.1:{state.port}/metrics", headers={"Authorization": f"Bearer {state.key}"}
    ).text
    return float(re.search(r"^llamacpp:prompt_tokens_total ([0-9.e+]+)$", text, re.M).group(1))


def prompt_cache(model: Path, tmp: Path) -> None:

    from reflect.tasks import get_task

    print("\n4. a 4-turn maker-checker thread on a 2-slot server: prompt tokens sent vs evaluated")
    replies = {}
    for cache in (False, True):
        state = start(
            model,
            tmp / f"cache-{cache}.log",
            "--slots",
            "2",
            *(["--cache-prompt"] if cache else []),
        )
        client = client_for(state)
        thread = [{"role": "user", "content": get_task("merge_sorted").prompt()}]
        sent, before, texts = 0, evaluated_tokens(state), []
        try:
            for turn in range(4):
                role, system = (
                    ("generator", GENERATOR_PROMPT)
                    if turn % 2 == 0
                    else ("reviewer", REVIEWER_PROMPT)
                )
                r = ask(client, [{"role": "system", "content": system}, *thread], max_tokens=300)
                sent += r["prompt"]
                texts.append(r["text"])
                thread.append({"role": "assistant", "content": f"[{role.title()}]: {r['text']}"})
            evaluated = evaluated_tokens(state) - before
        finally:
            stop_pid(state.pid)
        replies[cache] = texts
        print(
            f"   prompt cache {'on ' if cache else 'off'}: {sent:5d} sent, {evaluated:5.0f} evaluated"
        )
    print(f"   replies identical with and without the cache: {replies[True] == replies[False]}")


def replay_ms_per_call(n: int = 200) -> tuple[float, float]:
    """(replay ms per call, the same calls through the openai client on an in-memory transport)."""
    from course_runtime import connect
    from course_runtime.replay import close_all
    from reflect.model.config import Settings

    def fake(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": "def f():\n    return 1\n" * 20,
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 500, "completion_tokens": 120, "total_tokens": 620},
            },
        )

    def calls(conn):
        t = time.perf_counter()
        for i in range(n):
            conn.chat(
                msgs + [{"role": "user", "content": f"draft {i}: " + "x = 1\n" * 60}], temperature=0
            )
        return (time.perf_counter() - t) * 1000 / n

    msgs = [{"role": "system", "content": "You review code. " * 40}]
    with tempfile.TemporaryDirectory() as tmp:
        env = {"COURSE_RECORD_FROM": "openai", "OPENAI_API_KEY": "k", "COURSE_CASSETTE_DIR": tmp}
        calls(
            connect(
                "99_bench",
                settings=Settings.from_env({**env, "COURSE_BACKEND": "record"}),
                transport=httpx.MockTransport(fake),
                quiet=True,
            )
        )
        close_all()
        per_call = calls(
            connect(
                "99_bench",
                settings=Settings.from_env({**env, "COURSE_BACKEND": "replay"}),
                quiet=True,
            )
        )
        close_all()
    floor = calls(
        connect(
            settings=Settings.from_env({**env, "COURSE_BACKEND": "openai"}),
            transport=httpx.MockTransport(fake),
            quiet=True,
        )
    )
    return per_call, floor


def lessons() -> None:
    """Calls, tokens and model seconds per committed cassette, from the latencies recorded in it."""
    import yaml

    print(
        "\n6. the lessons' recordings (cassettes/): calls, prompt + completion tokens, model time"
    )
    total = [0, 0, 0, 0.0]
    for path in sorted(
        (Path(__file__).resolve().parents[1] / "cassettes").glob("[0-9][0-9]*_*.yaml")
    ):
        calls = yaml.safe_load(path.read_text())["interactions"]
        usage = [json.loads(c["response"]["body"]["string"]).get("usage", {}) for c in calls]
        row = [
            len(calls),
            sum(u.get("prompt_tokens", 0) for u in usage),
            sum(u.get("completion_tokens", 0) for u in usage),
            sum(int(c["response"]["headers"]["x-course-latency-ms"][0]) for c in calls) / 1000,
        ]
        total = [a + b for a, b in zip(total, row, strict=True)]
        print(
            f"   {path.stem:<24}{row[0]:>5} calls {row[1]:>7} + {row[2]:>6} tokens {row[3]:>7.0f} s"
        )
    print(
        f"   {'all':<24}{total[0]:>5} calls {total[1]:>7} + {total[2]:>6} tokens {total[3]:>7.0f} s "
        f"({total[3] / 60:.1f} min)"
    )


def main() -> None:
    only = set(sys.argv[1:]) or {"single", "slots", "spec", "cache", "replay", "lessons"}
    if only - {"replay", "lessons"}:
        model = model_path()
        print(f"model {model_label(model)}, {THREADS} threads, xllamacpp engine\n", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, part in (
            ("single", single_stream),
            ("slots", aggregate),
            ("spec", speculative),
            ("cache", prompt_cache),
        ):
            if name in only:
                part(model, Path(tmp))
                sys.stdout.flush()
    if "replay" in only:
        print("\n5. replay")
        for n in (50, 200):
            ms, floor = replay_ms_per_call(n)
            print(
                f"   cassette of {n} calls: {ms:.2f} ms per call (target < 2 ms: {'met' if ms < 2 else 'NOT met'}); "
                f"the openai client alone: {floor:.2f} ms, so replay adds {ms - floor:.2f} ms"
            )
    if "lessons" in only:
        lessons()


if __name__ == "__main__":
    main()
