"""`mnemoflow deployments`: prefect.yaml generated from the settings, one scheduled sync per source."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from mnemoflow.config import load_settings
from mnemoflow.errors import ConfigError
from mnemoflow.flows.deployments import PROJECT_ROOT, deployment_specs, prefect_yaml
from mnemoflow.maintenance import jobs
from tests.test_cli import run


def _settings(tmp_path: Path, schedule: str | None = "*/30 * * * *"):
    return load_settings(tmp_path / "home", sources={
        "handbook": {"kind": "filesystem", "location": str(tmp_path / "docs"), "tenant_id": "acme",
                     "user_id": "alex", "schedule": schedule},
        "helpdesk": {"kind": "rest_api", "base_url": "http://127.0.0.1:9/", "tenant_id": "acme", "user_id": "ops",
                     "resources": [{"name": "tickets", "path": "tickets"}]},
    })


def test_one_sync_deployment_per_source_on_its_schedule(tmp_path: Path) -> None:
    specs = {spec["name"]: spec for spec in deployment_specs(_settings(tmp_path), timezone="Europe/Berlin")}
    assert set(specs) == {"ingest", "sync-handbook", "sync-helpdesk", *(f"maintain-{name}" for name in jobs())}
    handbook = specs["sync-handbook"]
    assert handbook["entrypoint"] == "mnemoflow/flows/sync.py:sync_flow"
    assert handbook["parameters"] == {"source": "handbook", "home": str(tmp_path / "home")}
    assert handbook["schedules"] == [{"cron": "*/30 * * * *", "timezone": "Europe/Berlin"}]
    assert "schedules" not in specs["sync-helpdesk"]  # no schedule: runs when triggered
    for spec in specs.values():
        path, function = spec["entrypoint"].split(":")
        assert f"def {function}(" in (PROJECT_ROOT / path).read_text()


def test_the_file_is_yaml_prefect_can_read(tmp_path: Path) -> None:
    document = yaml.safe_load(prefect_yaml(_settings(tmp_path)))
    assert document["pull"][0]["prefect.deployments.steps.set_working_directory"]["directory"] == str(PROJECT_ROOT)
    assert [d["name"] for d in document["deployments"]] == ["ingest", "sync-handbook", "sync-helpdesk",
                                                            *(f"maintain-{name}" for name in jobs())]


def test_every_maintenance_job_is_deployed_on_its_default_schedule(tmp_path: Path) -> None:
    specs = {spec["name"]: spec for spec in deployment_specs(_settings(tmp_path))}
    assert {"decay", "check", "evaluate", "seal", "profiles", "cluster"} <= set(jobs())
    for name, job in jobs().items():
        spec = specs[f"maintain-{name}"]
        assert spec["entrypoint"] == "mnemoflow/flows/maintenance.py:maintain_flow"
        assert spec["parameters"] == {"job": name, "home": str(tmp_path / "home")}
        assert spec["schedules"] == [{"cron": job.schedule, "timezone": "UTC"}] and spec["description"]


def test_a_bad_cron_is_refused_naming_the_source(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="source 'handbook'.*'every hour'"):
        deployment_specs(_settings(tmp_path, schedule="every hour"))


def test_cli_writes_the_file_and_refuses_an_unknown_time_zone(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources.notes]\nkind = "filesystem"\nlocation = "{tmp_path}"\ntenant_id = "t"\nuser_id = "u"\n'
        'schedule = "0 * * * *"\n')
    target = tmp_path / "prefect.yaml"
    code, _, err = run(capsys, "deployments", "--home", str(home), "--write", str(target))
    assert code == 0, err
    assert yaml.safe_load(target.read_text())["deployments"][1]["schedules"][0]["cron"] == "0 * * * *"
    code, _, err = run(capsys, "deployments", "--home", str(home), "--timezone", "Mars/Olympus")
    assert code == 2 and "unknown time zone" in err


def test_the_committed_prefect_yaml_is_what_the_command_writes(tmp_path: Path) -> None:
    """The repository's prefect.yaml is `mnemoflow deployments --write` for a home without sources, but for
    the two things that depend on the machine: the working directory and the home."""
    committed = yaml.safe_load((PROJECT_ROOT / "prefect.yaml").read_text())
    generated = yaml.safe_load(prefect_yaml(load_settings(tmp_path / "home")))
    for spec in generated["deployments"]:
        spec["parameters"].pop("home")
    assert committed["deployments"] == generated["deployments"]
    assert "maintain-promote" in {d["name"] for d in committed["deployments"]}
