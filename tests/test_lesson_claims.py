"""A lesson states only figures its own outputs show, and its links lead somewhere.

Every figure in a lesson's markdown (a percentage, a fraction, "N of M", a time, a token or
call count, a speed-up) must appear in an output of the same notebook, or, for a setting such
as `max_tokens=512`, in its code. Figures that are neither results nor settings are listed in
ALLOWED with the reason. A figure matches when the output holds the same number with the same
unit ("321 s", "72%", "13/18", "3 of 5"); a number of three or more digits matches on its own,
because a table prints "6691" under a "tokens" header.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb"))
NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.,/-])(?:(?P<pct>{NUMBER})\s?%"
    rf"|(?P<num>{NUMBER})/(?P<den>\d+)(?![\w/])"
    rf"|(?P<n>{NUMBER}) of (?:(?:the|its|their|these|them|those|all) )?(?P<m>\d+)\b"
    rf"|(?P<val>{NUMBER})\s?(?:(?:prompt|completion|model) )?(?P<unit>ms|s|min|minutes|seconds|tokens|calls|x|×|times)(?![\w-]))"
)
ESTIMATES = ("**Learner time:**",)  # lines that state an estimate, and say so
# Figures that are not results: definitions, settings named in prose, facts about the model.
ALLOWED: dict[str, set[str]] = {
    "03_scored_critic": {"20%"},  # the regression rule's definition
}


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


# `python benchmarks/bench_course_run.py`
MEASURED = ROOT / "benchmarks" / "results" / "course_run.json"
TIME_TO_RUN = "**Time to run:**"


def measured_text(path: Path) -> str:
    """A lesson's live time as the whole-course benchmark measured it ("323 s", "5 min", "5.4 min", its
    "38 calls", and "12 of 38" calls the request cache answered),
    the only source a "Time to run" line may take a live figure from besides the lesson's outputs."""
    if not MEASURED.exists():
        return ""
    lesson = json.loads(MEASURED.read_text())["lessons"].get(path.stem, {})
    secs = lesson.get("seconds")
    if secs is None:
        return ""
    cached = f" {lesson['cached']} of {lesson['calls']}" if lesson.get("cached") else ""
    calls = f" {lesson['calls']} calls" if lesson.get("calls") else ""
    return f"{secs} s {round(secs / 60)} min {secs / 60:.1f} min{cached}{calls}"


def output_text(path: Path) -> str:
    parts = []
    for cell in cells(path):
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            parts.append("".join(out.get("data", {}).get("text/plain", "")))
            parts.append("".join(out.get("data", {}).get("text/html", "")))
    return normalize("\n".join(parts))


def code_text(path: Path) -> str:
    return normalize(
        "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "code")
    )


def normalize(text: str) -> str:
    """One spelling per figure: no thousands separators, "N of the M" as "N of M", "N prompt tokens" as "N tokens"."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"(\d) of (?:(?:the|its|their|these|them|those|all) )?(\d)", r"\1 of \2", text)
    text = re.sub(r"(\d) (?:prompt|completion) tokens", r"\1 tokens", text)
    text = re.sub(r"(\d) model calls?\b", r"\1 calls", text)
    return text.replace("×", "x")


def figures(markdown: str) -> list[tuple[str, str]]:
    """(as written, the pattern that must occur in the outputs) for every figure in the text."""
    found = []
    for m in FIGURE.finditer(markdown):
        g = {k: (v.replace(",", "") if v else v) for k, v in m.groupdict().items()}
        if g["pct"]:
            pattern = rf"{re.escape(g['pct'])}\s?%"
            number = g["pct"]
        elif g["num"]:
            pattern = rf"{re.escape(g['num'])}\s?/\s?{g['den']}\b"
            number = g["num"]
        elif g["n"]:
            pattern = rf"\b{re.escape(g['n'])} of {g['m']}\b"
            number = g["n"]
        else:
            unit = {
                "×": "x",
                "minutes": "min(?:utes)?",
                "min": "min(?:utes)?",
                "seconds": "s(?:econds)?",
                "s": "s(?:econds)?",
                "times": "(?:times|x)",
                "x": "(?:x|times)",
            }.get(g["unit"], g["unit"])
            pattern = rf"{re.escape(g['val'])}\s?{unit}\b"
            number = g["val"]
        if len(number.replace(".", "")) >= 3:  # a specific number: on its own anywhere is enough
            pattern = rf"(?:{pattern}|(?<![\d.]){re.escape(number)}(?![\d]))"
        found.append((m.group(0), rf"(?<![\d.]){pattern}"))
    return found


def unsupported(path: Path) -> list[str]:
    outputs, code = output_text(path), code_text(path)
    allowed = ALLOWED.get(path.stem, set())
    bad = []
    for i, cell in enumerate(cells(path)):
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines(keepends=True):
            if line.startswith(ESTIMATES):
                continue
            measured = measured_text(path) if line.startswith(TIME_TO_RUN) else ""
            for written, pattern in figures(line):
                if (
                    written in allowed
                    or re.search(pattern, outputs)
                    or re.search(pattern, code)
                    or re.search(pattern, measured)
                ):
                    continue
                bad.append(f"cell {i}: {written!r}")
    return bad


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_figure_in_the_markdown_is_in_the_lessons_outputs(path):
    bad = unsupported(path)
    assert bad == [], f"{path.name} states figures none of its outputs (or code) show: {bad}"


def test_a_planted_wrong_figure_is_caught(tmp_path):
    nb = json.loads(LESSONS[1].read_text())
    nb["cells"].append(
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["The loop passed 17/18 tasks (94%) in 12.5 s."],
        }
    )
    planted = tmp_path / LESSONS[1].name
    planted.write_text(json.dumps(nb))
    assert unsupported(planted)[-3:] == [
        f"cell {len(nb['cells']) - 1}: {f!r}" for f in ("17/18", "94%", "12.5 s")
    ]


def test_a_time_to_run_may_quote_the_whole_course_benchmark_and_nothing_else(tmp_path, monkeypatch):
    import tests.test_lesson_claims as claims

    bench = tmp_path / "course_run.json"
    bench.write_text(
        json.dumps({"lessons": {LESSONS[1].stem: {"seconds": 323, "calls": 38, "cached": 12}}})
    )
    monkeypatch.setattr(claims, "MEASURED", bench)
    nb = json.loads(LESSONS[1].read_text())
    nb["cells"].append(
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": [
                "**Time to run:** about 5 min live (323 s measured, 5.4 min; 12 of its 38 calls from the cache).\n",
                "It took 323 s.\n",
                "**Time to run:** 7 min live; 13 of its 38 calls from the cache.\n",
            ],
        }
    )
    planted = tmp_path / LESSONS[1].name
    planted.write_text(json.dumps(nb))
    last = len(nb["cells"]) - 1
    flagged = [b for b in unsupported(planted) if b.startswith(f"cell {last}:")]
    assert flagged == [
        f"cell {last}: '323 s'",
        f"cell {last}: '7 min'",
        f"cell {last}: '13 of its 38'",
    ]  # the measured figure counts on its own line only


def test_figures_are_found_in_their_usual_spellings():
    text = "72% of drafts; 13/18 pass; 3 of the 5 fail; 1,159 prompt tokens in 15.21 s; 2.0x faster; 4 calls"
    assert [w for w, _ in figures(text)] == [
        "72%",
        "13/18",
        "3 of the 5",
        "1,159 prompt tokens",
        "15.21 s",
        "2.0x",
        "4 calls",
    ]


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_sources() -> list[tuple[str, Path, str]]:
    out = [
        (f"{p.parent.name}/{p.name} cell {i}", p.parent, "".join(c["source"]))
        for p in [*LESSONS, *sorted((ROOT / "notebooks").glob("*.ipynb"))]
        for i, c in enumerate(cells(p))
        if c["cell_type"] == "markdown"
    ]
    return out + [
        (p.name, p.parent, p.read_text())
        for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        if p.exists()
    ]


def test_every_relative_link_leads_to_a_file_that_exists():
    broken = [
        f"{where}: {target}"
        for where, folder, text in markdown_sources()
        for target in LINK.findall(text)
        if not re.match(r"[a-z]+:|#", target) and not (folder / target.split("#")[0]).exists()
    ]
    assert broken == []


def test_a_configuration_run_in_two_lessons_is_reported_with_both_results():
    """Lessons 05 and 06 ran some strategies with the same configuration (their names aside). Where the
    pass counts differ, each lesson must state the other's figure, so neither reads a rerun's noise as a result."""
    from reflect.evaluation.runner import current_rows

    def by_config(*files):
        out: dict[str, dict[str, list[bool]]] = {}
        for f in files:
            for r in current_rows(ROOT / "results" / f):
                key = json.dumps(
                    {k: v for k, v in r["config"].items() if k != "name"}, sort_keys=True
                )
                out.setdefault(key, {}).setdefault(f, []).append(bool(r["run"]["passed"]))
        return out

    runs = by_config("05_memory_modes.jsonl", "06_course.jsonl", "06_course_rerun.jsonl")
    shared = {k: v for k, v in runs.items() if "05_memory_modes.jsonl" in v and len(v) > 1}
    assert shared, "lessons 05 and 06 no longer share a configuration: update or drop this test"
    text = {
        n: "\n".join(
            "".join(c["source"])
            for c in cells(ROOT / "solutions" / f"{n}.ipynb")
            if c["cell_type"] == "markdown"
        )
        for n in ("05_reflexion_memory", "06_does_reflection_pay")
    }
    for key, files in shared.items():
        counts = {f: f"{sum(v)}/{len(v)}" for f, v in files.items()}
        if len(set(counts.values())) == 1:
            continue
        for f, figure in counts.items():
            other = "06_does_reflection_pay" if f.startswith("05") else "05_reflexion_memory"
            paragraphs = re.split(
                r"\n\n|\n(?=- )", text[other]
            )  # stated where the other lesson is named: a paragraph or a bullet
            assert any(figure in p and f"lesson {f[:2]}" in p for p in paragraphs), (
                f"{key[:40]}...: {f} has {figure}, which lesson {other[:2]} does not state beside 'lesson {f[:2]}'"
            )


# A figure typed into a string that a cell prints, among computed ones, is a claim no computation
# backs ("print('right on 96 of 164 problems (58.5%)')"). A printed literal may name a setting only
# when each of its numbers is a number literal in the same cell's code ("1 of 3" beside
# `"iteration": 1, "max_iterations": 3`); definitions are listed here with the reason.
PRINTED_ALLOWED: dict[str, set[str]] = {
    "06_does_reflection_pay": {"95%"},  # the interval's definition ("95% interval")
}


def printed_literals(source: str) -> list[tuple[str, set[str]]]:
    """(literal text, the cell's number literals) for every string constant a print() call prints;
    f-string format specs (">10.0%") are formatting, not text."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return []
    specs = {
        id(n.format_spec)
        for n in ast.walk(tree)
        if isinstance(n, ast.FormattedValue) and n.format_spec
    }
    skip = {id(c) for n in ast.walk(tree) if id(n) in specs for c in ast.walk(n)}
    numbers = {
        str(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, (int, float))
        and not isinstance(n.value, bool)
    }
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
        ):
            for arg in node.args:
                out += [
                    (c.value, numbers)
                    for c in ast.walk(arg)
                    if isinstance(c, ast.Constant)
                    and isinstance(c.value, str)
                    and id(c) not in skip
                ]
    return out


def hard_coded(path: Path) -> list[str]:
    allowed = PRINTED_ALLOWED.get(path.stem, set())
    bad = []
    for i, cell in enumerate(cells(path)):
        if cell["cell_type"] != "code":
            continue
        for text, numbers in printed_literals("".join(cell["source"])):
            for m in FIGURE.finditer(text):
                found = [v.replace(",", "") for k, v in m.groupdict().items() if v and k != "unit"]
                if m.group(0) in allowed or all(n in numbers for n in found):
                    continue
                bad.append(f"cell {i}: {m.group(0)!r}")
    return bad


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_no_figure_is_typed_into_a_printed_string(path):
    bad = hard_coded(path)
    assert bad == [], f"{path.name} prints figures typed by hand: {bad}"


def test_a_hard_coded_figure_among_computed_ones_is_caught(tmp_path):
    nb = json.loads(LESSONS[1].read_text())
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": [
                "rate = 0.5\n",
                'print(f"ours: {rate:>6.1%}; theirs: right on 96 of 164 problems (58.5%)")\n',
                "print('needs_revision, 1 of 3 ->', probe(iteration=1, max_iterations=3))\n",
            ],
        }
    )
    planted = tmp_path / LESSONS[1].name
    planted.write_text(json.dumps(nb))
    last = len(nb["cells"]) - 1
    assert [b for b in hard_coded(planted) if b.startswith(f"cell {last}:")] == [
        f"cell {last}: '96 of 164'",
        f"cell {last}: '58.5%'",
    ]
