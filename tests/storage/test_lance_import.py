"""LanceDB imported the cheap way (storage/lance_import.py) is the same LanceDB: the namespace client
whose package init was skipped works when used, its models validate, LanceDB reads and writes, and
nothing of the way it was imported stays switched for anyone else."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_lancedb_imported_cheaply_is_whole(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys
        import overrides
        from pydantic._internal._config import config_defaults

        checking = overrides.override
        from mnemoflow.storage.lance_import import import_lancedb

        lancedb = import_lancedb()
        assert "lance_namespace_urllib3_client.api" not in sys.modules  # its package init was skipped
        assert config_defaults.get("defer_build") is False and overrides.override is checking  # restored

        import lance_namespace
        request = lance_namespace.ListTablesResponse.from_dict({{"tables": ["a", "b"]}})  # built on first use
        assert request.tables == ["a", "b"]
        import lance_namespace_urllib3_client as client
        assert client.ApiClient is not None and client.Configuration is not None  # the real init, when used
        assert "lance_namespace_urllib3_client.api.table_api" in sys.modules

        db = lancedb.connect({str(tmp_path / "lance")!r})
        table = db.create_table("t", data=[{{"id": "a", "vector": [1.0, 0.0]}}, {{"id": "b", "vector": [0.0, 1.0]}}])
        assert table.search([0.9, 0.1]).limit(1).to_list()[0]["id"] == "a"
        print("whole")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "whole", done.stderr[-3000:]
