"""The HTTP API against its own OpenAPI schema: schemathesis drives its tenant routes (in process, over
ASGI) on a real store with a real tenant key, and every answer must be one the schema declares: no server error, no body that breaks its schema, no undeclared status, no success without
a valid key (each call is sent again without a key and with a wrong one), and no request the schema
forbids accepted. Then one regression test per defect the fuzzing found.

Not checked here: that every request the schema allows is accepted. OpenAPI cannot say that a query
string must name one of user_id, agent_id and run_id, nor spell out the filter language, so those
refusals (422, declared) are expected. `bench/api_fuzz.py` runs every check with more examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.openapi.checks import IgnoredAuth
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from mnemoflow.api.http import create_app
from mnemoflow.api.server import Parts, build_app
from mnemoflow.config import load_settings
from mnemoflow.errors import ScopeError
from mnemoflow.models import ApiKey
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from mnemoflow.storage.scope import ID_PATTERN
from tests.hostile_inputs import LONE_SURROGATES, count_strings, with_lone_surrogate

CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance,
          response_headers_conformance, ignored_auth, negative_data_rejection]
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, MemoryService]]:
    """The tenant routes on one real store (`mnemoflow serve` adds the MCP server and the operator
    endpoint, neither in the schema; its MCP lifespan runs once per process, schemathesis's client
    would start it per call)."""
    home = tmp_path_factory.mktemp("openapi") / "home"
    with MemoryService(load_settings(home)) as service:
        for scope in (Scope("acme", "dana"), Scope("acme", "dana", agent_id="planner"), Scope("acme", None, run_id="r1")):
            service.add(scope, f"Dana's build server for {scope.agent_id or scope.run_id or 'her'} is in Lisbon")
        yield create_app(service), service


@pytest.fixture(scope="module")
def acme_key(served: tuple[FastAPI, MemoryService]) -> str:
    return served[1].create_api_key("acme")[1]


@pytest.fixture(scope="module")
def api_schema(served: tuple[FastAPI, MemoryService]) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", served[0])


def fuzz(operation: APIOperation, mode: GenerationMode, key: Callable[[], str]) -> None:
    """Generated calls of one operation, each with the key `key()` gives, every answer checked."""
    @given(case=operation.as_strategy(mode))
    @EXAMPLES
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(headers={"Authorization": f"Bearer {key()}"}, checks=CHECKS)

    call()


def takes_input(operation: APIOperation) -> bool:
    return any(len(part) for part in (operation.query, operation.path_parameters, operation.body))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_answer_is_one_the_schema_declares(api_schema: schemathesis.BaseSchema, acme_key: str,
                                                 mode: GenerationMode) -> None:
    operations = [result.ok() for result in api_schema.exclude(path="/v1/tenant").get_all_operations()]
    assert len(operations) == 36  # 13 memory routes, 15 for looking at memory (api/views.py), 7 of rules and tools, 1 debug
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not takes_input(operation):
            continue  # nothing to send that its schema forbids
        fuzz(operation, mode, lambda: acme_key)


def test_deleting_a_tenant_answers_as_declared(api_schema: schemathesis.BaseSchema,
                                                served: tuple[FastAPI, MemoryService]) -> None:
    """A tenant of its own each time: the call deletes it and revokes its key."""
    [operation] = [result.ok() for result in api_schema.include(path="/v1/tenant").get_all_operations()]
    fuzz(operation, GenerationMode.POSITIVE, lambda: served[1].create_api_key("doomed")[1])


# ---------------------------------------------------------------------- defects the fuzzing found
@pytest.fixture
def client(served: tuple[FastAPI, MemoryService], acme_key: str) -> TestClient:
    return TestClient(served[0], headers={"Authorization": f"Bearer {acme_key}"})


def test_a_profile_or_topics_of_an_agent_are_refused_not_a_server_error(client: TestClient,
                                                                       served: tuple[FastAPI, MemoryService]) -> None:
    answer = client.get("/v1/profile", params={"user_id": "dana", "agent_id": "planner"})
    assert answer.status_code == 422 and "a profile is per user" in answer.json()["detail"]
    with pytest.raises(ScopeError, match="topics is per user"):
        served[1].topics(Scope("acme", None, run_id="r1"))


def test_times_leave_with_their_offset(client: TestClient) -> None:
    listed = client.get("/v1/memories", params={"user_id": "dana"}).json()["results"][0]
    assert listed["created_at"].endswith("Z") and listed["updated_at"].endswith("Z")
    memory = client.get(f"/v1/memories/{listed['id']}", params={"user_id": "dana"}).json()
    assert memory["created_at"].endswith("Z") and memory["valid_from"].endswith("Z")
    found = client.post("/v1/search", json={"user_id": "dana", "query": "build server"}).json()["results"][0]
    assert found["created_at"].endswith("Z") and found["user_id"] == "dana"


def test_a_method_a_path_does_not_take_is_405_naming_all_it_takes(served: tuple[FastAPI, MemoryService]) -> None:
    app = build_app(served[1], "operator-token", "http://127.0.0.1:9", Parts())  # with MCP, as served
    with TestClient(app) as client:
        answer = client.request("TRACE", "/v1/memories")
        assert answer.status_code == 405 and answer.headers["allow"] == "DELETE, GET, POST"
        assert client.request("TRACE", "/v1/health").status_code == 405  # not the MCP app's 404
        assert client.post("/mcp", json={}).status_code == 401  # MCP still answers, and wants a key


@pytest.mark.parametrize("body", [
    {"query": "build", "include_history": 0},  # 0 is not false
    {"query": "build", "k": "2"},  # "2" is not 2
    {"query": "build", "token_budget": True},
])
def test_flags_and_numbers_are_the_json_types_the_schema_says(client: TestClient, body: dict) -> None:
    assert client.post("/v1/recall", json={"user_id": "dana", **body}).status_code == 422
    assert client.post("/v1/recall", json={"user_id": "dana", "query": "build", "k": 2.0}).status_code == 200


def test_a_message_time_is_a_date_not_a_number(client: TestClient) -> None:
    refused = client.post("/v1/memories", json={"user_id": "dana", "messages": [
        {"role": "user", "content": "I moved to Porto", "timestamp": 0}]})
    assert refused.status_code == 422 and "not a number" in refused.text
    refused = client.post("/v1/memories", json={"user_id": "dana", "text": "I moved to Porto", "timestamp": 0})
    assert refused.status_code == 422 and "not a number" in refused.text
    told = client.post("/v1/memories", json={"user_id": "dana", "text": "Dana keeps bees", "infer": False,
                                             "timestamp": "2025-06-01T10:00:00+02:00"}).json()["results"][0]
    said = client.get(f"/v1/memories/{told['id']}", params={"user_id": "dana"}).json()["observed_at"]
    assert said.startswith("2025-06-01T08:00:00")


def test_an_id_with_a_final_newline_is_refused_everywhere(client: TestClient) -> None:
    with pytest.raises(ScopeError):
        Scope("acme", "dana\n")
    assert client.get("/v1/memories", params={"user_id": "dana\n"}).status_code == 422


def test_a_body_that_names_no_owner_is_refused_as_its_schema_says(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["MemoryIn"]
    assert {"required": ["user_id"], "properties": {"user_id": {"type": "string", "pattern": ID_PATTERN}}} \
        in schema["allOf"][0]["anyOf"]
    answer = client.post("/v1/memories", json={"text": "no owner"})
    assert answer.status_code == 422 and "names a user_id" in answer.json()["detail"]



def test_a_query_parameter_given_twice_is_refused(client: TestClient) -> None:
    """`?user_id=dana&user_id=sam` names no one scope: FastAPI would have read the last."""
    answer = client.get("/v1/memories", params=[("user_id", "sam"), ("user_id", "dana")])
    assert answer.status_code == 422 and "repeated: user_id" in answer.json()["detail"]


SURROGATE_EXAMPLES = settings(EXAMPLES, max_examples=8)


def test_a_lone_surrogate_anywhere_in_a_valid_body_is_a_4xx(api_schema: schemathesis.BaseSchema,
                                                           client: TestClient) -> None:
    """Bodies the schema allows, one string (a key or a value, at any depth, one the route ignores too)
    given half a surrogate pair: every answer is a refusal that says so, none a server error."""
    operations = [r.ok() for r in api_schema.exclude(path="/v1/tenant").get_all_operations()]
    with_body = [op for op in operations if op.body]
    labels = {f"{op.method.upper()} {op.path}" for op in with_body}
    assert {"POST /v1/events", "POST /v1/memories", "POST /v1/search", "POST /v1/recall"} <= labels, labels
    for operation in with_body:

        @given(case=operation.as_strategy(GenerationMode.POSITIVE), pick=st.integers(0, 10_000),
               surrogate=st.sampled_from(LONE_SURROGATES))
        @SURROGATE_EXAMPLES
        def call(case: schemathesis.Case, pick: int, surrogate: str) -> None:
            strings = count_strings(case.body)
            assume(strings > 0)
            sent = with_lone_surrogate(case.body, pick % strings, surrogate)
            answer = client.request(case.method, case.formatted_path, params=case.query, content=json.dumps(sent),
                                    headers={"Content-Type": "application/json"})
            assert 400 <= answer.status_code < 500, (case.method, case.formatted_path, sent, answer.text)
            assert "surrogate" in answer.text

        call()


def test_the_fuzzing_catches_a_key_check_that_lets_anyone_in(api_schema: schemathesis.BaseSchema, acme_key: str,
                                                             served: tuple[FastAPI, MemoryService],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(served[1], "api_key", lambda secret: ApiKey(key_id="key_anyone", tenant_id="acme"))
    [operation] = [r.ok() for r in api_schema.include(path="/v1/memories", method="GET").get_all_operations()]
    with pytest.raises(FailureGroup) as found:
        fuzz(operation, GenerationMode.POSITIVE, lambda: acme_key)
    assert [type(e) for e in found.value.exceptions] == [IgnoredAuth]
