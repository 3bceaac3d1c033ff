"""API fuzzing (issue 16): schemathesis over the OpenAPI schema of a running `mnemoflow serve`, on a real
store (memories of users, agents and runs) with a real tenant key, every check schemathesis has and
every phase (examples, coverage, fuzzing, stateful). `DELETE /v1/tenant` runs apart, with a tenant of
its own: it revokes the key it is called with. Then bodies the schema allows, each with one string
given a lone surrogate (schemathesis never sends one: JSON can escape it, no text holds it). Figures:
operations, test cases, failures by kind, and the aims (server errors, responses that break the
schema, successes without a valid key, lone surrogates answered other than with a 4xx that names them).

    .venv/bin/python bench/api_fuzz.py --examples 200 --seed 16

Run it with another checkout on PYTHONPATH to fuzz that one (the figures before a fix).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import RESULTS, serving

from mnemoflow.config import load_settings
from mnemoflow.remote import connect
from mnemoflow.storage import Scope

AIMS = {  # schemathesis's failure types, by what the issue asks for none of
    "server errors": ("ServerError", "ContentTypeServerError"),
    "responses that break the schema": ("UndefinedStatusCode", "MissingContentType", "UndefinedContentType",
                                        "MalformedMediaType", "MissingHeaders", "JsonSchemaError", "MalformedJson",
                                        "ContentDeserializationError"),
    "successes without a valid key": ("IgnoredAuth",),
}


def fuzz(url: str, key: str, out: Path, *filters: str, examples: int, seed: int) -> dict:
    """One `schemathesis run` writing its JSON report to `out` and what it printed beside it (`.log`);
    the report's figures."""
    command = [str(Path(sys.executable).parent / "schemathesis"), "run", f"{url}/openapi.json",
               "-H", f"Authorization: Bearer {key}", "--checks", "all", "-n", str(examples), "--seed", str(seed),
               "-w", "1", "--report", "json", "--report-json-path", str(out), *filters]
    shown = subprocess.run(command, check=False, capture_output=True, text=True, timeout=3600)
    out.with_suffix(".log").write_text(shown.stdout + shown.stderr)
    report = json.loads(out.read_text())
    failures = {f"{f['code']} {f['title']}": {"type": f["type"], "count": f["count"], "operations": f["operations"]}
                for f in report["failures"]}
    return {"operations": report["operations"]["tested"], "test_cases": report["test_cases"]["generated"],
            "failures": failures, "errors": report["errors"], "seconds": round(report["running_time"], 1)}


def surrogate_bodies(url: str, key: str, examples: int, seed: int) -> dict:
    """Bodies the schema allows (schemathesis, from the served schema), each with one string (a key or a
    value, at any depth) ending in a lone surrogate, which JSON can escape and no text can hold: every
    answer must be a 4xx that says so. Counts by status, and what was answered otherwise."""
    import httpx
    import schemathesis
    from hypothesis import HealthCheck, assume, given, seed as fixed_seed, settings, strategies as st

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the hostile strings are the tests'
    from tests.hostile_inputs import LONE_SURROGATES, count_strings, with_lone_surrogate

    schema = schemathesis.openapi.from_url(f"{url}/openapi.json").exclude(path="/v1/tenant")
    statuses: dict[str, int] = {}
    wrong: list[str] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
        for operation in (r.ok() for r in schema.get_all_operations()):
            if not operation.body:
                continue

            @fixed_seed(seed)
            @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(), pick=st.integers(0, 10_000),
                   surrogate=st.sampled_from(LONE_SURROGATES))
            def send(case: schemathesis.Case, pick: int, surrogate: str) -> None:
                strings = count_strings(case.body)
                assume(strings > 0)
                try:
                    answer = client.request(case.method, case.formatted_path, params=case.query, content=json.dumps(
                        with_lone_surrogate(case.body, pick % strings, surrogate)),
                        headers={"Content-Type": "application/json"})
                    status, text = str(answer.status_code), answer.text
                except httpx.HTTPError as exc:  # the server dropped the connection instead of answering
                    status, text = "no answer", type(exc).__name__
                statuses[status] = statuses.get(status, 0) + 1
                if not (status.startswith("4") and "surrogate" in text):
                    wrong.append(f"{case.method} {case.formatted_path}: {status} {text[:120]}")

            send()
    return {"bodies": sum(statuses.values()), "statuses": statuses, "not_a_4xx_naming_it": len(wrong),
            "examples_of_those": wrong[:5]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200, help="Test cases per operation and phase, at most.")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--out", type=Path, default=RESULTS / "api_fuzz.json")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="mnemoflow-bench-fuzz-"))
    home = scratch / "home"
    try:
        with serving(home, scratch / "serve.log") as info, connect(load_settings(home)) as service:
            for scope in (Scope("acme", "dana"), Scope("acme", "dana", agent_id="planner"),
                          Scope("acme", None, run_id="r1"), Scope("acme", "sam", container="ops")):
                service.add(scope, f"The build server of {scope} is in Lisbon")
            key, doomed = service.create_api_key("acme")[1], service.create_api_key("doomed")[1]
            args.out.parent.mkdir(parents=True, exist_ok=True)
            runs = {
                "tenant routes": fuzz(info.url, key, args.out.with_suffix(".routes.json"), "--exclude-path",
                                      "/v1/tenant", examples=args.examples, seed=args.seed),
                "DELETE /v1/tenant": fuzz(info.url, doomed, args.out.with_suffix(".tenant.json"), "--include-path",
                                          "/v1/tenant", examples=args.examples, seed=args.seed),
            }
            surrogates = surrogate_bodies(info.url, key, args.examples, args.seed)
    finally:
        shutil.rmtree(scratch)
    found = [f for run in runs.values() for f in run["failures"].values()]
    figures = {"examples": args.examples, "seed": args.seed,
               "operations": sum(r["operations"] for r in runs.values()),
               "test_cases": sum(r["test_cases"] for r in runs.values()),
               "aims": {aim: sum(f["count"] for f in found if f["type"] in types) for aim, types in AIMS.items()},
               "runs": runs, "lone surrogates": surrogates}
    figures["aims"]["lone surrogates answered other than a 4xx naming them"] = surrogates["not_a_4xx_naming_it"]
    args.out.write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
