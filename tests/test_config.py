import pytest

from reflect.model.config import ConfigError, Settings


def test_default_is_local_without_a_key():
    assert Settings.from_env({}).backend == "local"


def test_default_is_openai_with_a_key():
    s = Settings.from_env({"OPENAI_API_KEY": "k"})
    assert s.backend == "openai" and s.live_backend == "openai"


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(
        ConfigError,
        match="Unknown COURSE_BACKEND='olama'. Use one of: local, openai, replay, record",
    ):
        Settings.from_env({"COURSE_BACKEND": "olama"})


def test_record_source_and_role_models():
    s = Settings.from_env(
        {
            "COURSE_BACKEND": "record",
            "COURSE_MODEL_CRITIC": "gpt-4o-mini",
            "COURSE_MODEL_PATH": "/x.gguf",
        }
    )
    assert s.live_backend == "local"
    assert s.role_models == {"critic": "gpt-4o-mini"}
    with pytest.raises(ConfigError, match="COURSE_RECORD_FROM"):
        Settings.from_env({"COURSE_RECORD_FROM": "replay"})


def test_bad_numbers():
    with pytest.raises(ConfigError, match="must be numbers"):
        Settings.from_env({"COURSE_LOCAL_PORT": "eighty"})


def test_dotenv_file_is_read_and_environment_wins(course_env, monkeypatch):
    (course_env / ".env").write_text("COURSE_BACKEND=replay\nCOURSE_MODEL=from-dotenv\n")
    monkeypatch.setenv("COURSE_MODEL", "from-env")
    s = Settings.from_env()
    assert s.backend == "replay" and s.model == "from-env"


def test_record_keep_and_replay_prune_come_from_settings_and_dotenv(course_env):
    (course_env / ".env").write_text("COURSE_RECORD_KEEP=1\n")
    s = Settings.from_env()
    assert s.record_keep and not s.replay_prune
    assert Settings.from_env({"COURSE_REPLAY_PRUNE": "1"}).replay_prune


def test_workers_default_to_one_on_the_live_local_model_only():
    def workers(**env):
        return Settings.from_env(env).workers

    assert workers(COURSE_BACKEND="local") == 1  # batched requests can change temperature-0 replies
    assert workers(COURSE_BACKEND="record", COURSE_RECORD_FROM="local") == 1
    assert workers(COURSE_BACKEND="record", COURSE_RECORD_FROM="openai", OPENAI_API_KEY="k") == 4
    assert workers(COURSE_BACKEND="openai", OPENAI_API_KEY="k") == 4
    assert workers(COURSE_BACKEND="replay") == 4
    assert workers(COURSE_BACKEND="local", COURSE_WORKERS="3") == 3
    with pytest.raises(ConfigError, match="COURSE_WORKERS must be between 1 and 16"):
        workers(COURSE_WORKERS="64")


def test_unknown_engine_is_a_clear_error():
    with pytest.raises(ConfigError, match="Unknown COURSE_ENGINE='vllm'"):
        Settings.from_env({"COURSE_ENGINE": "vllm"})
    assert Settings.from_env({}).engine == "auto"
