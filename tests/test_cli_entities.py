"""`mnemoflow entities list|show|memories|graph|evolution` and `mnemoflow conflicts`, in text and --json,
on a home written through the pipeline; wrong arguments are one line and exit 2."""

from __future__ import annotations

import json

import pytest

from mnemoflow.config import load_settings
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.models import LinkDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope
from tests.test_cli import run

SCOPE = Scope("acme", "odile")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Odile's memories: a move from Nantes to Rennes, her employer, and two that conflict."""
    home = tmp_path_factory.mktemp("cli-entities") / "h"
    with MemoryService(load_settings(home)) as service:
        for text in ("Odile lives in Nantes.", "Odile works at Vireo Studio.", "Odile moved to Rennes."):
            service.add_messages(SCOPE, text)
        first, _ = service.store.write_memory(SCOPE, draft_memory("The studio party is on Friday"), actor="test")
        service.store.write_memory(SCOPE, draft_memory("The studio party is on Saturday"), actor="test",
                                   links=(LinkDraft("CONFLICTS_WITH", first.id, 0.9, "two days given"),))
    return str(home)


def who(home: str, user: str = "odile") -> list[str]:
    return ["--home", home, "--tenant", "acme", "--user", user]


def test_list_show_and_memories(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, err = run(capsys, "entities", "list", *who(home), "--json")
    assert code == 0, err
    names = {e["name"]: e for e in json.loads(out)["entities"]}
    assert {"Odile", "Nantes", "Rennes", "Vireo Studio"} <= set(names) and names["Odile"]["mention_count"] == 3
    code, out, _ = run(capsys, "entities", "list", *who(home), "--type", "place")
    assert code == 0 and "Nantes (place)" in out and "Rennes (place)" in out and "Odile" not in out

    code, out, err = run(capsys, "entities", "show", "Odile", *who(home))  # by name, or by id
    assert code == 0, err
    assert "Odile (person)" in out and "Rennes (place): located_at" in out and "Nantes (place): located_at [past]" in out
    code, out, _ = run(capsys, "entities", "show", names["Odile"]["entity_id"], *who(home), "--json")
    assert json.loads(out)["entity"]["name"] == "Odile"
    code, out, _ = run(capsys, "entities", "memories", "Nantes", *who(home), "--history")
    assert code == 0 and "Odile lives in Nantes [past]" in out

    code, out, err = run(capsys, "entities", "show", "Odile", *who(home, "someone-else"))
    assert code == 1 and out == "" and err.startswith("mnemoflow: no entity") and err.count("\n") == 1


def test_graph_and_evolution(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, err = run(capsys, "entities", "graph", "Odile", "--depth", "2", *who(home), "--json")
    assert code == 0, err
    graph = json.loads(out)
    assert {n["data"]["label"] for n in graph["elements"]["nodes"]} >= {"Odile", "Nantes", "Rennes"}
    assert graph["elements"]["edges"] and not graph["truncated"]
    code, out, _ = run(capsys, "entities", "graph", "Odile", *who(home))
    assert code == 0 and "Odile -[located_at]-> Rennes" in out

    code, out, err = run(capsys, "entities", "evolution", "Odile", *who(home))
    assert code == 0, err
    assert out.index("Odile lives in Nantes") < out.index("Odile moved to Rennes") and "replaced" in out
    chains = json.loads(run(capsys, "entities", "evolution", "Odile", *who(home), "--json")[1])["chains"]
    assert [s["content"] for s in chains[0]["steps"]] == ["Odile lives in Nantes", "Odile moved to Rennes"]


@pytest.mark.parametrize("args", [
    ["entities", "graph", "Odile", "--depth", "9"],
    ["entities", "graph", "--max-nodes", "0"],
    ["entities", "list", "--type", "planet"],
    ["entities", "list", "--since", "last tuesday"],
    ["entities", "list", "--order", "random"],
    ["conflicts", "resolve", "lnk_x"],
])
def test_wrong_arguments_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], home: str, args: list) -> None:
    code, out, err = run(capsys, *args, *who(home))
    assert code == 2 and err.startswith("mnemoflow: ") and err.count("\n") == 1 and "Traceback" not in err


def test_conflicts_list_and_resolve(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, err = run(capsys, "conflicts", *who(home), "--json")
    assert code == 0, err
    [conflict] = json.loads(out)["conflicts"]
    assert {conflict["src"]["content"], conflict["dst"]["content"]} == {"The studio party is on Friday",
                                                                        "The studio party is on Saturday"}
    assert json.loads(run(capsys, "conflicts", *who(home, "bram"), "--json")[1]) == {"conflicts": []}
    code, out, err = run(capsys, "conflicts", "resolve", conflict["link_id"], "--keep", conflict["src"]["id"],
                         *who(home))
    assert code == 0 and "UPDATES: kept" in out and conflict["dst"]["id"] in out, err
    code, out, _ = run(capsys, "conflicts", *who(home))
    assert code == 0 and "no conflicts waiting" in out
