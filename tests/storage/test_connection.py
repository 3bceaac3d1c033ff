"""One writing process per DuckDB file: a second one waits, then fails with a clear message."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoflow.config import load_settings
from mnemoflow.errors import ConfigError, StoreBusyError
from mnemoflow.storage import open_store


@pytest.mark.embedded_only("the one-writer lock of the home's DuckDB file")
def test_a_busy_store_waits_then_names_the_holder(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "home", store_lock_timeout_s=1)
    open_store(settings).close()
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(settings.duckdb_path)!r}); "
                               "print('locked', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        with pytest.raises(StoreBusyError, match=rf"in use by another process .*PID {holder.pid}"):
            open_store(settings)
        assert time.monotonic() - started >= 1
    finally:
        holder.kill()
        holder.wait()
    open_store(settings).close()  # free again once the holder is gone


@pytest.mark.embedded_only("a shared store keeps nothing in the home")
def test_an_unusable_home_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot use .* as the home directory"):
        open_store(load_settings(blocker))
