"""Settings: environment parsing, overrides, and the documentation table in config.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from headwater import config
from headwater.config import Settings
from headwater.errors import ConfigError


def test_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.host == "127.0.0.1"
    assert settings.port == 5000
    assert settings.api_key is None
    assert settings.max_body_bytes == 10 * 1024 * 1024
    assert settings.database_url == "sqlite:///.headwater/headwater.db"


def test_environment_then_overrides() -> None:
    env = {
        "HEADWATER_DB_URL": "postgresql+psycopg://u@h/db",
        "HEADWATER_PORT": "8081",
        "HEADWATER_API_KEY": "s3cret",
        "HEADWATER_MAX_BODY_BYTES": "1024",
        "HEADWATER_ACCESS_LOG": "yes",
        "HEADWATER_DATA_DIR": "/var/lib/hw",
    }
    settings = Settings.from_env(env, port=9000, host=None)
    assert settings.database_url == "postgresql+psycopg://u@h/db"
    assert settings.port == 9000  # the override wins; None overrides are ignored
    assert settings.api_key == "s3cret"
    assert settings.max_body_bytes == 1024
    assert settings.access_log is True
    assert settings.data_dir == Path("/var/lib/hw")


def test_data_dir_places_the_default_sqlite_file() -> None:
    settings = Settings.from_env({"HEADWATER_DATA_DIR": "/tmp/hwdata"})
    assert settings.database_url == "sqlite:////tmp/hwdata/headwater.db"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HEADWATER_PORT": "http"}, "HEADWATER_PORT must be an integer"),
        ({"HEADWATER_MAX_BODY_BYTES": "10MB"}, "HEADWATER_MAX_BODY_BYTES must be an integer"),
        ({"HEADWATER_MAX_BODY_BYTES": "0"}, "max_body_bytes must be positive"),
        ({"HEADWATER_PORT": "70000"}, "port must be between"),
        ({"HEADWATER_ACCESS_LOG": "maybe"}, "HEADWATER_ACCESS_LOG must be true or false"),
        ({"HEADWATER_LOG_LEVEL": "loud"}, "log_level must be one of"),
        ({"HEADWATER_WORKERS": "two"}, "HEADWATER_WORKERS must be an integer"),
        ({"HEADWATER_WORKERS": "0"}, "workers must be at least 1"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_empty_api_key_means_no_auth() -> None:
    assert Settings.from_env({"HEADWATER_API_KEY": ""}).api_key is None


def test_every_setting_is_documented_in_the_module_docstring() -> None:
    doc = config.__doc__ or ""
    for field in dataclasses.fields(Settings):
        assert f"``{field.name}``" in doc, field.name
        assert f"``HEADWATER_{field.name.upper()}``" in doc, field.name


def test_every_setting_is_documented_in_docs_server() -> None:
    from headwater.cli.serve import _OPTIONS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text()
    for field in dataclasses.fields(Settings):
        assert f"HEADWATER_{field.name.upper()}" in docs, field.name
    for declarations, _ in _OPTIONS:
        for option in declarations[:-1]:
            flag = option.split("/")[0]
            assert flag in docs, flag


def test_workers_from_environment() -> None:
    assert Settings.from_env({"HEADWATER_WORKERS": "3"}).workers == 3
    assert Settings().workers == 1


def test_workers_refuse_a_store_opened_by_the_caller(tmp_path: Path) -> None:
    from headwater.server.run import run_server
    from headwater.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 'own.db'}")
    try:
        with pytest.raises(ConfigError, match="several workers"):
            run_server(Settings(workers=2), store=store)
    finally:
        store.close()
