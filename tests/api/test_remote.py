"""Every service method crosses the wire: its arguments and result round-trip through the same types."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mnemoflow.errors import BadInputError, NotFoundError, ScopeError, StoreBusyError
from mnemoflow.models import MemoryItem
from mnemoflow.remote import error_payload, method_spec, raise_remote, read_server_info, remote_methods
from mnemoflow.reports import IngestOutcome, IngestReport
from mnemoflow.storage.scope import Scope


def test_every_public_service_method_has_a_wire_form() -> None:
    names = remote_methods()
    assert {"ingest", "add", "recall", "search", "maintain", "sql", "snapshot", "drain"} <= set(names)
    for name in names:
        spec = method_spec(name)  # builds a TypeAdapter for every parameter and the result
        assert "progress" not in spec.params and "step" not in spec.params  # shown or run where the caller is


def test_arguments_and_results_round_trip() -> None:
    spec = method_spec("ingest")
    sent = spec.encode_call((Scope("acme", "alex"), [Path("/tmp/notes.md")]), {"wait": False})
    assert sent == {"scope": {"tenant_id": "acme", "user_id": "alex", "agent_id": None, "run_id": None, "container": None},
                    "paths": ["/tmp/notes.md"], "wait": False}
    assert spec.decode_call(sent) == {"scope": Scope("acme", "alex"), "paths": [Path("/tmp/notes.md")], "wait": False}
    outcome = IngestOutcome(IngestReport(turns_added=3), None, 2)
    assert spec.result.validate_python(spec.result.dump_python(outcome, mode="json")) == outcome

    now = datetime(2026, 1, 2, 3, 4, 5)
    memory = MemoryItem(id="mem_1", tenant_id="acme", user_id="alex", content="x", kind="fact", salience=0.5,
                        confidence=1.0, is_latest=True, created_at=now, updated_at=now, valid_from=now,
                        embedding_status="done")
    add = method_spec("add")
    assert add.result.validate_python(add.result.dump_python((memory, True), mode="json")) == (memory, True)


def test_a_scope_the_server_refuses_is_a_scope_error() -> None:
    with pytest.raises(ScopeError):
        method_spec("get").decode_call({"scope": {"tenant_id": "bad tenant", "user_id": "x"}, "memory_id": "m"})
    with pytest.raises(BadInputError, match="takes no argument"):
        method_spec("get").decode_call({"nope": 1})
    with pytest.raises(BadInputError, match="no service method"):
        method_spec("close")


@pytest.mark.parametrize("error", [NotFoundError("no memory m"), StoreBusyError("busy"), BadInputError("bad")])
def test_errors_come_back_as_their_own_class(error: Exception) -> None:
    with pytest.raises(type(error), match=str(error)):
        raise_remote(error_payload(error), 400)


def test_an_unknown_error_class_falls_back_to_its_nearest_known_base() -> None:
    payload = {"error": {"types": ["SomethingNewError", "TransientError", "MnemoflowError"], "message": "later"}}
    from mnemoflow.errors import TransientError

    with pytest.raises(TransientError, match="later"):
        raise_remote(payload, 503)


def test_no_server_file_means_no_server(tmp_path: Path) -> None:
    assert read_server_info(tmp_path) is None
    (tmp_path / "server.json").write_text("{not json")
    assert read_server_info(tmp_path) is None
