"""The course-run benchmark checks the model it is told to run on before it clones anything: an unknown
`COURSE_LOCAL_MODEL` is a clear error (exit 2), a known one goes on to the clone. No clone is made here.
Its closing line names the results file however `--out` gave it."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "bench_course_run", ROOT / "benchmarks" / "bench_course_run.py"
)
bcr = sys.modules.setdefault("bench_course_run", importlib.util.module_from_spec(spec))
spec.loader.exec_module(bcr)


class Cloned(Exception):
    pass


@pytest.fixture
def no_clone(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_course_run.py"])

    def run(cmd, *args, **kwargs):
        if cmd[:2] == ["git", "clone"]:
            raise Cloned(cmd)
        return bcr.subprocess.CompletedProcess(cmd, 0, stdout="abc1234\n", stderr="")

    monkeypatch.setattr(bcr.subprocess, "run", run)


def test_an_unknown_model_is_refused_before_the_clone(no_clone, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LOCAL_MODEL", "qwen-bogus")
    assert bcr.main() == 2
    err = capsys.readouterr().err
    assert "Unknown local model 'qwen-bogus'" in err and "qwen2.5-coder-0.5b" in err


@pytest.mark.parametrize("name", [None, "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_a_known_model_goes_on_to_the_clone(no_clone, monkeypatch, name):
    if name is None:
        monkeypatch.delenv("COURSE_LOCAL_MODEL", raising=False)
    else:
        monkeypatch.setenv("COURSE_LOCAL_MODEL", name)
    with pytest.raises(Cloned):
        bcr.main()


def test_the_results_file_is_named_however_out_gave_it(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert bcr.shown(Path("benchmarks/results/course_run_0.5b.json")) == str(
        Path("benchmarks/results/course_run_0.5b.json")
    )
    assert bcr.shown(ROOT / "course_run.json") == "course_run.json"
    assert bcr.shown(tmp_path / "elsewhere.json") == str(tmp_path / "elsewhere.json")
