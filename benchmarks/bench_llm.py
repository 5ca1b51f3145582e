"""make bench-llm: the local model through the server and the openai client vs in-process.

Prints, in one run on the same model and thread count:
1. prompt processing and generation tokens/s, server + openai client vs llama_cpp.Llama in-process
   (target: the server path loses at most 5% of in-process generation throughput);
2. the prompt cache in a reflection-style loop (a shared thread re-sent under alternating
   system prompts): prompt tokens sent vs evaluated, with the RAM cache on and off, read
   from the server's own timing lines;
3. replay time per call from a cassette (target: under 2 ms), next to the openai client's own
   per-call cost on an in-memory transport, so the part replay adds is visible.

Nothing here is a pass/fail test: it measures, so it can be rerun on any machine.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import openai

from reflect.model.localmodel import model_path
from reflect.model.server import ServerState, free_port, launch, stop_pid

THREADS = os.cpu_count() or 2
N_CTX = 4096
GEN_TOKENS = 96
REPEATS = 3
PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
FILLER = " ".join(f"Rule {i}: every function needs a docstring, type hints and tests." for i in range(30))


def unique_prompt(i: int, long: bool) -> str:
    head = f"Request {i} {time.time_ns()}."  # a different first tokens defeats every prefix cache
    body = FILLER if long else "Write the numbers from 1 to 400 separated by commas:"
    return f"{head} {body}\n"


def start(model: Path, cache: bool, log: Path) -> ServerState:
    """A private server for the benchmark, started by the package's own launcher."""
    extra = ["--threads", str(THREADS), "--n-ctx", str(N_CTX), "--idle-minutes", "20", *(["--cache"] if cache else [])]
    return launch(model, free_port(), log, extra)


def server_speeds(client: openai.OpenAI, model: str) -> tuple[float, float]:
    pp, gen = [], []
    for i in range(REPEATS):
        t = time.perf_counter()
        r = client.completions.create(model=model, prompt=unique_prompt(i, True), max_tokens=1, temperature=0)
        pp.append(r.usage.prompt_tokens / (time.perf_counter() - t))
        p = unique_prompt(100 + i, False)
        t1 = time.perf_counter()
        client.completions.create(model=model, prompt=p + "1,", max_tokens=1, temperature=0)
        base = time.perf_counter() - t1
        t2 = time.perf_counter()
        r = client.completions.create(model=model, prompt=p + "1, ", max_tokens=GEN_TOKENS, temperature=0)
        gen.append((r.usage.completion_tokens - 1) / max(time.perf_counter() - t2 - base, 1e-6))
    return statistics.median(pp), statistics.median(gen)


def inprocess_speeds(model: Path) -> tuple[float, float]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS, verbose=False)
    pp, gen = [], []
    for i in range(REPEATS):
        t = time.perf_counter()
        r = llm.create_completion(unique_prompt(i, True), max_tokens=1, temperature=0)
        pp.append(r["usage"]["prompt_tokens"] / (time.perf_counter() - t))
        p = unique_prompt(100 + i, False)
        t1 = time.perf_counter()
        llm.create_completion(p + "1,", max_tokens=1, temperature=0)
        base = time.perf_counter() - t1
        t2 = time.perf_counter()
        r = llm.create_completion(p + "1, ", max_tokens=GEN_TOKENS, temperature=0)
        gen.append((r["usage"]["completion_tokens"] - 1) / max(time.perf_counter() - t2 - base, 1e-6))
    del llm
    return statistics.median(pp), statistics.median(gen)


def reflection_loop(client: openai.OpenAI, model: str, log: Path) -> tuple[int, int]:
    """Four turns of a maker-checker thread; returns (prompt tokens sent, prompt tokens evaluated)."""
    systems = {"generator": "You are an expert Python developer. Output only code.",
               "reviewer": "You are a meticulous code reviewer. Reply APPROVED or list fixes."}
    thread = [{"role": "user", "content": "Write merge_sorted_lists(a, b) without sorted(). " + FILLER[:600]}]
    sent = 0
    before = log.read_text(errors="replace")
    for turn in range(4):
        role = "generator" if turn % 2 == 0 else "reviewer"
        r = client.chat.completions.create(model=model, temperature=0, max_tokens=80, seed=1,
                                           messages=[{"role": "system", "content": systems[role]}, *thread])
        sent += r.usage.prompt_tokens
        thread.append({"role": "assistant", "content": f"[{role}]: {r.choices[0].message.content}"})
    time.sleep(0.5)
    new = log.read_text(errors="replace")[len(before):]
    evaluated = sum(int(m.group(2)) for m in PROMPT_EVAL.finditer(new))
    return sent, evaluated


def replay_ms_per_call(n: int = 200) -> tuple[float, float]:
    """(replay ms per call, the same calls through the openai client on an in-memory transport).

    The second number is the client's own floor: what any call costs before replay adds anything."""
    from reflect import connect
    from reflect.model.config import Settings
    from reflect.model.replay import close_all

    def fake(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "def f():\n    return 1\n" * 20},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 500, "completion_tokens": 120, "total_tokens": 620}})

    with tempfile.TemporaryDirectory() as tmp:
        env = {"COURSE_RECORD_FROM": "openai", "OPENAI_API_KEY": "k", "COURSE_CASSETTE_DIR": tmp}
        msgs = [{"role": "system", "content": "You review code. " * 40}]
        rec = connect("99_bench", settings=Settings.from_env({**env, "COURSE_BACKEND": "record"}),
                      transport=httpx.MockTransport(fake), quiet=True)
        for i in range(n):
            rec.chat(msgs + [{"role": "user", "content": f"draft {i}: " + "x = 1\n" * 60}], temperature=0)
        close_all()
        rep = connect("99_bench", settings=Settings.from_env({**env, "COURSE_BACKEND": "replay"}), quiet=True)
        t = time.perf_counter()
        for i in range(n):
            rep.chat(msgs + [{"role": "user", "content": f"draft {i}: " + "x = 1\n" * 60}], temperature=0)
        per_call = (time.perf_counter() - t) * 1000 / n
        close_all()
    direct = connect(settings=Settings.from_env({**env, "COURSE_BACKEND": "openai"}),
                     transport=httpx.MockTransport(fake), quiet=True)
    t = time.perf_counter()
    for i in range(n):
        direct.chat(msgs + [{"role": "user", "content": f"draft {i}: " + "x = 1\n" * 60}], temperature=0)
    return per_call, (time.perf_counter() - t) * 1000 / n


def main() -> None:
    model = model_path()
    print(f"model {model.name}, {THREADS} threads, n_ctx {N_CTX}, {REPEATS} repeats (medians)\n", flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cache in (True, False):
            log = Path(tmp) / f"server-{cache}.log"
            state = start(model, cache, log)
            client = openai.OpenAI(base_url=state.base_url, api_key="local", max_retries=0, timeout=600)
            try:
                if cache:
                    results["server"] = server_speeds(client, state.alias)
                results[f"loop-cache-{cache}"] = reflection_loop(client, state.alias, log)
            finally:
                stop_pid(state.pid)
    results["inprocess"] = inprocess_speeds(model)
    (spp, sgen), (ipp, igen) = results["server"], results["inprocess"]
    print(f"{'path':<34}{'prompt tok/s':>14}{'generation tok/s':>18}")
    print(f"{'llama_cpp.Llama in-process':<34}{ipp:>14.1f}{igen:>18.2f}")
    print(f"{'server + openai client':<34}{spp:>14.1f}{sgen:>18.2f}")
    overhead = (1 - sgen / igen) * 100
    print(f"server+client generation overhead: {overhead:.1f}% (target <= 5%: {'met' if overhead <= 5 else 'NOT met'})\n")
    print(f"{'reflection loop, 4 turns':<34}{'prompt sent':>14}{'evaluated':>12}")
    for cache in (True, False):
        sent, ev = results[f"loop-cache-{cache}"]
        print(f"{'RAM prompt cache ' + ('on' if cache else 'off'):<34}{sent:>14}{ev:>12}")
    for n in (50, 200):
        ms, floor = replay_ms_per_call(n)
        print(f"\nreplay, cassette of {n} calls: {ms:.2f} ms per call (target < 2 ms: {'met' if ms < 2 else 'NOT met'}); "
              f"the openai client alone on an in-memory transport: {floor:.2f} ms, so replay adds {ms - floor:.2f} ms")


if __name__ == "__main__":
    main()
