"""Which change pairs the relationship step reads as UPDATES, with and without slot similarity by
restatement (`mnemoflow/memory/relate/restate.py`), on pairs of memories written in everyday wording.

Each line of a pairs file is `OLD || NEW || LABEL`: LABEL is UPDATES when NEW makes OLD stale, OTHER
when it does not (it adds, is about another thing or person, or is an event). Similarities come from
the offline MiniLM model, the neighbour signals as the pipeline builds them. Reports, per file:
UPDATES applied / for review / missed, and OTHER pairs wrongly applied or sent to review.

    .venv/bin/python bench/slot_pairs.py eval/slot_pairs/*.txt
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.memory.relate.claims import parse_claim
from mnemoflow.memory.relate.relations import Neighbour, action, classify
from mnemoflow.memory.relate.restate import restatements, worth_restating

NOW = datetime(2026, 11, 1, 12, 0)


def read_pairs(path: Path) -> list[tuple[str, str, str]]:
    rows = [line.split("||") for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [(old.strip(), new.strip(), label.strip()) for old, new, label in rows]


def outcome(embedder: LocalEmbedder, old: str, new: str, *, restate: bool) -> str:
    """"applied", "review" or "none": what the new memory does to the old one."""
    old_vec, new_vec = embedder.embed([old, new])
    similarity = float(old_vec @ new_vec)
    restated = None
    said = restatements(new, old) if restate and worth_restating(parse_claim(new), parse_claim(old), similarity) \
        else ()
    if said:
        restated = float(max(v @ new_vec for v in embedder.embed(list(said))))
    neighbour = Neighbour("old", old, "fact", (), NOW - timedelta(days=30), None, similarity, 1,
                          restated_similarity=restated)
    decision = classify(new, "fact", (), [neighbour], now=NOW)
    if decision.relation != "UPDATES":
        return "none"
    return "applied" if action(decision) == "apply" else "review"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    embedder = LocalEmbedder()
    report = {}
    for path in args.files:
        pairs = read_pairs(path)
        for restate in (False, True):
            tally = Counter(f"{label} {outcome(embedder, old, new, restate=restate)}" for old, new, label in pairs)
            report[f"{path.name} {'with' if restate else 'without'} restatement"] = dict(sorted(tally.items()))
    for name, tally in report.items():
        print(f"{name}: {tally}")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
