"""Possible updates (MAY_UPDATE, `mnemoflow/memory/relate/versions.py`) on one half of the scenario suite:
which vector threshold to use, and what it catches.

Every scenario of the half runs with the threshold at 0 (a possible update is proposed for every new
memory with a held one of the same owner), each proposal recorded with its similarity and whether a name
or predicate word is shared. A proposal is right when the scenario expects an UPDATES between the two
memories (which the rules then missed: a proposal is only made for a memory they judged new). Per
threshold: the expected UPDATES caught, and the proposals that are wrong. Choose on the tune half, read
the check half afterwards.

    .venv/bin/python bench/may_update.py --half tune
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from mnemoflow.config import load_settings
from mnemoflow.eval import scenario_run
from mnemoflow.eval.scenario_scores import match_memories
from mnemoflow.eval.scenarios import load_scenarios, select_half
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.memory.relate import versions
from mnemoflow.service import MemoryService

THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 1.01)


def proposals(half: str, data: Path) -> list[tuple[float, bool, bool]]:
    """(similarity, a word shared, right) for every possible update the half's scenarios proposed."""
    versions.MAY_UPDATE_AT = 0.0
    found = []
    with tempfile.TemporaryDirectory() as home, MemoryService(load_settings(Path(home))) as service:
        engine = RuleEngine()
        for scenario in select_half(load_scenarios(data), half):
            run = scenario_run.run_scenario(service, scenario, engine)
            matching = match_memories(scenario.expected_memories, run.memories)
            expected = {(matching.resolve(r.src), matching.resolve(r.dst)) for r in scenario.expected_relationships
                        if r.type == "UPDATES"}
            for conversation in scenario.conversations:
                scope = scenario_run._scope(scenario, conversation.tenant_id, conversation.user_id)
                for item in service.store.review_items(scope, status="all", limit=10_000):
                    if item.reason and item.reason.startswith("possible update"):
                        sim = float(re.search(r"vector (-?[\d.]+)", item.reason)[1])  # type: ignore[index]
                        found.append((sim, "subject (" in item.reason, (item.src, item.dst) in expected))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", default="tune", choices=("tune", "check", "all"))
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "eval/scenarios")
    args = parser.parse_args()
    found = proposals(args.half, args.data)
    print(f"{args.half} half: {len(found)} proposals at threshold 0, {sum(r for *_, r in found)} right")
    print("threshold  proposed  right  wrong")
    for at in THRESHOLDS:
        kept = [right for sim, shared, right in found if shared or sim >= at]
        print(f"{at:9.2f}  {len(kept):8d}  {sum(kept):5d}  {len(kept) - sum(kept):5d}")


if __name__ == "__main__":
    main()
