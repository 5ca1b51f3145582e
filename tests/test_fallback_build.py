"""The fallback engine: finding llama-server, the clear errors before a build, its command line."""

import json
import os
from types import SimpleNamespace

import pytest

from course_runtime import fallback_build as llama_server
from course_runtime import server_process as serve
from reflect.model.config import ConfigError


def test_no_cmake_no_compiler_or_no_disk_is_a_clear_error_before_anything_is_downloaded(
    course_env, monkeypatch
):
    found = {"cmake": "/usr/bin/cmake", "c++": "/usr/bin/c++"}
    monkeypatch.setattr(
        llama_server, "_tool", lambda *names: next((found[n] for n in names if n in found), None)
    )
    monkeypatch.setattr(
        llama_server.shutil, "disk_usage", lambda p: SimpleNamespace(free=100 * 1024**3)
    )
    assert llama_server.check_prerequisites() == ("/usr/bin/cmake", "/usr/bin/c++")
    monkeypatch.setattr(llama_server.shutil, "disk_usage", lambda p: SimpleNamespace(free=1024**3))
    with pytest.raises(
        llama_server.BuildError, match="needs 3 GB free .* 1.0 GB are.*COURSE_CACHE_DIR"
    ):
        llama_server.check_prerequisites()
    del found["c++"]
    with pytest.raises(llama_server.BuildError, match="C\\+\\+ compiler"):
        llama_server.check_prerequisites()
    del found["cmake"]
    with pytest.raises(llama_server.BuildError, match="needs cmake.*pip install cmake"):
        llama_server.build(say=lambda line: pytest.fail("nothing may start before the checks pass"))


def test_a_build_is_used_only_with_the_stamp_of_this_version(course_env):
    target = llama_server.build_dir()
    target.mkdir(parents=True)
    (target / "llama-server").write_text("#!/bin/sh\n")
    assert llama_server.find_binary({}) is None  # no stamp: an interrupted build
    (target / "stamp.json").write_text(
        json.dumps({**llama_server.STAMP, "sdist": "llama-cpp-python==0.2.0"})
    )
    assert llama_server.find_binary({}) is None  # another version's build
    (target / "stamp.json").write_text(json.dumps(llama_server.STAMP))
    assert llama_server.find_binary({}) == target / "llama-server"


def test_an_own_binary_must_be_an_executable(course_env, tmp_path):
    assert llama_server.find_binary({"COURSE_LLAMA_SERVER": "/bin/true"}) == llama_server.Path(
        "/bin/true"
    )
    plain = tmp_path / "llama-server"
    plain.write_text("not executable")
    with pytest.raises(ConfigError, match="not an executable"):
        llama_server.find_binary({"COURSE_LLAMA_SERVER": str(plain)})


def test_llama_server_command_line_carries_the_chosen_settings_but_never_the_key():
    s = serve.EngineSettings("/m.gguf", "qwen", 8080, "secret-key", slots=4, threads=2)
    cmd = serve.LlamaServerEngine("/bin/llama-server").command(s)
    assert "secret-key" not in " ".join(cmd)
    flags = dict(zip(cmd[1::2], cmd[2::2], strict=False))
    assert flags["--host"] == "127.0.0.1" and flags["-np"] == "4" and flags["-c"] == str(4 * 8192)
    assert "--no-cache-prompt" in cmd and cmd[cmd.index("--spec-type") + 1] == "ngram-simple"
    assert "--no-prefill-assistant" in cmd
    off = serve.LlamaServerEngine("/bin/llama-server").command(
        serve.EngineSettings("/m.gguf", "qwen", 8080, "k", speculative=False, cache_prompt=True)
    )
    assert "--spec-type" not in off and "--no-cache-prompt" not in off


def test_the_server_never_starts_without_a_key(monkeypatch):
    monkeypatch.delenv(serve.KEY_ENV, raising=False)
    args = serve.parse(["--model", "m", "--alias", "a", "--port", "1"])
    with pytest.raises(SystemExit, match="never runs without a key"):
        serve.settings_from(args)
    monkeypatch.setenv(serve.KEY_ENV, "k")
    assert serve.settings_from(args).host == "127.0.0.1"
    assert os.environ[serve.KEY_ENV] == "k"
