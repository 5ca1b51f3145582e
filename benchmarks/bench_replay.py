"""Replay per call: the course's cassette transport (course_runtime.replay) against vcrpy on the same cassettes.

Issue 68 asks whether vcrpy itself could replace `course_runtime.replay` if it replays byte-identically at 2 ms a
call or less. Both answer every recorded request of the given cassettes through one httpx client (the request
body exactly as recorded), and the script reports, per library, the cassettes it loaded, the calls answered
with the recorded body byte for byte, and the median and 90th percentile milliseconds a call (load time apart).

    python benchmarks/bench_replay.py                          # every cassette; vcrpy must be importable
    PYTHONPATH=DIR python benchmarks/bench_replay.py           # vcrpy installed apart (pip install --target DIR vcrpy)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]


def recorded(path: Path) -> list[dict]:
    """The cassette's interactions: (method, uri, headers, body) asked and the body answered."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = []
    for item in data["interactions"]:
        req, resp = item["request"], item["response"]
        out.append(
            {
                "method": req["method"],
                "uri": req["uri"],
                "headers": {k: v[0] for k, v in (req.get("headers") or {}).items()},
                "body": req["body"],
                "answer": resp["body"]["string"],
            }
        )
    return out


def timed(send, calls: list[dict]) -> tuple[list[float], int]:
    """Milliseconds per call, and how many answers were the recorded body byte for byte."""
    ms, same = [], 0
    for c in calls:
        start = time.perf_counter()
        body = send(c)
        ms.append((time.perf_counter() - start) * 1000)
        same += body == c["answer"].encode()
    return ms, same


def course(path: Path, calls: list[dict]) -> tuple[list[float], int, float]:
    from course_runtime.replay import CourseTransport, Recorder, close_all

    start = time.perf_counter()
    recorder = Recorder(path.stem, path, "replay").open()
    load = time.perf_counter() - start
    client = httpx.Client(transport=CourseTransport(recorder=recorder))
    try:
        ms, same = timed(
            lambda c: (
                client.request(
                    c["method"], c["uri"], content=c["body"].encode(), headers=c["headers"]
                ).content
            ),
            calls,
        )
    finally:
        client.close()
        close_all()
    return ms, same, load


def vcrpy(path: Path, calls: list[dict]) -> tuple[list[float], int, float]:
    import vcr

    start = time.perf_counter()
    cassette = vcr.use_cassette(
        str(path),
        record_mode="none",
        match_on=["method", "uri", "body"],
        allow_playback_repeats=True,
    )
    with cassette:  # the cassette is read on entering
        load = time.perf_counter() - start
        client = httpx.Client()
        try:
            return (
                *timed(
                    lambda c: (
                        client.request(
                            c["method"], c["uri"], content=c["body"].encode(), headers=c["headers"]
                        ).content
                    ),
                    calls,
                ),
                load,
            )
        finally:
            client.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "replay.json")
    args = ap.parse_args(argv)
    paths = sorted((ROOT / "cassettes").glob("*.yaml"))
    result: dict = {}
    for name, replay in (("course", course), ("vcrpy", vcrpy)):
        ms_all, same_all, calls_all, loads, failed = [], 0, 0, [], []
        for path in paths:
            calls = recorded(path)
            try:
                ms, same, load = replay(path, calls)
            except Exception as err:  # noqa: BLE001 - a cassette a library cannot play is reported, not fatal
                failed.append(f"{path.name}: {type(err).__name__}: {str(err)[:120]}")
                continue
            ms_all += ms
            same_all += same
            calls_all += len(calls)
            loads.append(load)
        result[name] = {
            "cassettes": len(paths) - len(failed),
            "failed": failed,
            "calls": calls_all,
            "byte_identical": same_all,
            "median_ms": round(statistics.median(ms_all), 3) if ms_all else None,
            "p90_ms": round(statistics.quantiles(ms_all, n=10)[-1], 3) if len(ms_all) > 1 else None,
            "load_s": round(sum(loads), 2),
        }
        print(name, json.dumps(result[name]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
