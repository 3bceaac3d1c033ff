"""What the entity graph queries cost as a store grows: entity list, card, evolution, and the capped
subgraph at 1, 2 and 3 hops around an entity every memory names (the worst case: its neighbourhood is
the whole graph), each beside a plain memory list (`get_all`, 100 memories) measured in the same run
on the same store. The subgraph must stay within its caps however big the store.

    .venv/bin/python bench/graph_queries.py --memories 2000,20000 --repeat 15
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import FIRST_NAMES, RESULTS, percentile

from mnemoflow.config import load_settings
from mnemoflow.memory.english.names import find_entities
from mnemoflow.memory.generate.direct import draft_memory
from mnemoflow.memory.relate.entities import typed_entities
from mnemoflow.memory.relate.triples import relation_triples
from mnemoflow.models import MemoryDraft, RelationDraft
from mnemoflow.service import MemoryService
from mnemoflow.storage import Scope

SCOPE = Scope("bench", "hub")
SYLLABLES = ("bar", "kel", "mor", "tav", "sil", "dun", "rho", "vek", "lin", "qua", "zen", "pol")
PLACES = ("Lisbon", "Porto", "Ghent", "Leeds", "York", "Bremen", "Kiel", "Galway", "Sligo", "Dundee")
BATCH = 1000


def drafted(text: str) -> MemoryDraft:
    """As the pipeline drafts one: typed entities and relation triples."""
    base = draft_memory(text)
    entities = tuple(typed_entities(base.content, find_entities(base.content)))
    return MemoryDraft(content=base.content, kind=base.kind, salience=base.salience, entities=entities,
                       relations=tuple(RelationDraft(*t) for t in relation_triples(base.content, entities)))


def texts(n: int, seed: int = 11) -> list[str]:
    """Memories all naming one hub person, each with two of many other people and a place."""
    rng = random.Random(seed)
    people = [f"{a}{b.capitalize()}" for a in FIRST_NAMES for b in SYLLABLES]
    rng.shuffle(people)
    return [f"Yusra met {rng.choice(people)} and {rng.choice(people)} in {rng.choice(PLACES)} (note {i})"
            for i in range(n)]


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """p50 and p95 in ms of `repeat` calls (after one warm-up), and the last answer."""
    answer = call()
    took = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        answer = call()
        took.append((time.perf_counter() - t0) * 1000)
    return percentile(took, 50), percentile(took, 95), answer


def run(size: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="mnemoflow-bench-") as scratch:
        with MemoryService(load_settings(Path(scratch) / "home")) as service:
            t0 = time.perf_counter()
            written = texts(size)
            for start in range(0, size, BATCH):
                with service.store.memory_writes(SCOPE, actor="bench") as writes:
                    for text in written[start:start + BATCH]:
                        writes.add(drafted(text))
            build_s = time.perf_counter() - t0
            hub = next(e.entity_id for e in service.entities(SCOPE, q="yusra").entities if e.name == "Yusra")
            entities = service.entities(SCOPE, limit=1000)
            figures: dict = {"memories": size, "build_s": round(build_s, 1),
                             "entities_named": len(service.store.scoped_entities(SCOPE, limit=1_000_000)[0])}
            base50, base95, _ = timed(lambda: service.get_all(SCOPE, limit=100), repeat)
            figures["get_all_100"] = {"p50_ms": round(base50, 1), "p95_ms": round(base95, 1)}
            calls = {
                "entities_100": lambda: service.entities(SCOPE, limit=100),
                "card": lambda: service.entity(SCOPE, hub),
                "evolution": lambda: service.entity_evolution(SCOPE, hub),
                "graph_overview": lambda: service.entity_graph(SCOPE),
                **{f"graph_depth_{d}": (lambda d=d: service.entity_graph(SCOPE, hub, depth=d)) for d in (1, 2, 3)},
            }
            for name, call in calls.items():
                p50, p95, answer = timed(call, repeat)
                row = {"p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "x_get_all_p50": round(p50 / base50, 1)}
                if name.startswith("graph"):
                    row.update(nodes=len(answer.elements.nodes), edges=len(answer.elements.edges),
                               truncated=answer.truncated)
                figures[name] = row
            assert entities.entities
            return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", default="2000,20000", help="Store sizes, comma-separated.")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    results = [run(int(size), args.repeat) for size in args.memories.split(",")]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "graph_queries.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
