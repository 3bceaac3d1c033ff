import os
from pathlib import Path

import pytest

from mnemoflow.config import OFFLINE_ENVIRONMENT, Settings, configure_runtime, load_settings


def test_home_argument_beats_environment(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "elsewhere")
    assert settings.home == tmp_path / "elsewhere"
    assert settings.duckdb_path.parent == tmp_path / "elsewhere"


def test_environment_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOFLOW_RECALL_TOKEN_BUDGET", "777")
    monkeypatch.setenv("MNEMOFLOW_TENANT_ID", "acme")
    settings = Settings()
    assert settings.recall_token_budget == 777
    assert settings.tenant_id == "acme"


def test_toml_file_in_home_and_environment_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text('tenant_id = "from-toml"\nrecall_token_budget = 1000\n')
    settings = load_settings(home=home)
    assert settings.tenant_id == "from-toml"
    assert settings.recall_token_budget == 1000
    monkeypatch.setenv("MNEMOFLOW_RECALL_TOKEN_BUDGET", "64")
    assert load_settings(home=home).recall_token_budget == 64  # environment over file


def test_explicit_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "custom.toml"
    config.write_text('embedding_batch_size = 8\n')
    monkeypatch.setenv("MNEMOFLOW_CONFIG", str(config))
    assert Settings().embedding_batch_size == 8


def test_invalid_setting_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOFLOW_EMBEDDING_PROVIDER", "nonsense")
    with pytest.raises(ValueError, match="embedding_provider"):
        Settings()


def test_telemetry_of_every_dependency_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in OFFLINE_ENVIRONMENT:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DO_NOT_TRACK", "0")  # a user's explicit choice is kept
    configure_runtime()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert os.environ["RUNTIME__DLTHUB_TELEMETRY"] == "false"
    assert os.environ["DO_NOT_TRACK"] == "0"


@pytest.mark.parametrize(("toml", "message"), [
    ("[sources.x\nkind = 1\n", "not valid TOML"),
    ('chunk_max_tokens = "lots"\n', "setting chunk_max_tokens in .*config.toml.*valid integer"),
    ('[sources.docs]\nkind = "filesystem"\ntenant_id = "t"\nuser_id = "u"\n', "setting sources.docs.filesystem.location"),
])
def test_a_broken_settings_file_is_one_clear_error(tmp_path: Path, toml: str, message: str) -> None:
    from mnemoflow.errors import ConfigError

    (tmp_path / "config.toml").write_text(toml)
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path)


@pytest.mark.parametrize("environment, toml, home_argument", [
    ({}, None, True),
    ({}, None, False),
    ({"MNEMOFLOW_TENANT_ID": "acme", "mnemoflow_user_id": "noor"}, None, True),  # any case, as pydantic-settings
    ({}, 'tenant_id = "from-file"\nuser_id = "kai"\nrecall_k = 3\n', True),
    ({"MNEMOFLOW_USER_ID": "env-wins"}, 'tenant_id = "from-file"\nuser_id = "kai"\n', False),
    ({"MNEMOFLOW_CONFIG": "explicit.toml"}, 'home = "elsewhere"\ntenant_id = "explicit"\n', False),
    ({"MNEMOFLOW_SERVER_TOKEN": "t0k"}, 'server = "http://10.0.0.5:8600,http://10.0.0.6:8600"\n', True),  # a cluster's
])
def test_client_settings_answer_as_the_full_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     environment: dict[str, str], toml: str | None,
                                                     home_argument: bool) -> None:
    """A command that a server answers reads home, tenant and user without pydantic: the same answers."""
    from mnemoflow.client_settings import client_settings

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for key, value in environment.items():
        monkeypatch.setenv(key, str(tmp_path / value) if key == "MNEMOFLOW_CONFIG" else value)
    if toml is not None:
        target = tmp_path / "explicit.toml" if "MNEMOFLOW_CONFIG" in environment else home / "config.toml"
        target.write_text(toml.replace('"elsewhere"', f'"{tmp_path / "elsewhere"}"'))
    argument = home if home_argument else None
    full, light = load_settings(argument), client_settings(argument)
    assert light is not None
    assert (light.home, light.tenant_id, light.user_id) == (full.home, full.tenant_id, full.user_id)
    token = full.server_token.get_secret_value() if full.server_token else None
    assert (light.server, light.server_token) == (full.server, token)


def test_client_settings_leave_what_they_cannot_read_to_the_full_settings(tmp_path: Path) -> None:
    from mnemoflow.client_settings import client_settings
    from mnemoflow.errors import ConfigError

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("tenant_id = 7\n")
    assert client_settings(home) is None
    with pytest.raises(ConfigError, match="tenant_id"):
        load_settings(home)
    (home / "config.toml").write_text("tenant_id = [\n")
    assert client_settings(home) is None
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(home)
