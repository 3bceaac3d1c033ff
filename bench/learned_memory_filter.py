"""Would a classifier learned from the dev scenarios, over the offline MiniLM vectors, filter out the
memories nobody asked for without losing the ones that matter, on scenarios it was not trained on?

Every scenario of the given folders runs through the production pipeline (rule path); each produced
memory is labelled "matched" (it stands for an expected memory) or "extra" (the scoring's
unmatched_produced). A logistic regression over the memory's vector, its kind and whether it is
current is trained on the dev scenarios: the suite's tune half and the dev blind batches. Its threshold
drops at most 5% of the matched memories in a 5-fold cross-validation by scenario. It is then applied to
the suite's check half and to each unseen blind batch.

Only counts are printed, never a memory's text, so unseen batches stay unseen.

    .venv/bin/python bench/learned_memory_filter.py --dev eval/blind/a eval/blind/b eval/blind/c \\
        eval/blind/d eval/blind/e eval/blind/f eval/blind/g --unseen eval/blind/h eval/blind/i
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict

from mnemoflow.config import load_settings
from mnemoflow.embedding.local import LocalEmbedder
from mnemoflow.eval.scenario_run import run_scenario
from mnemoflow.eval.scenario_scores import match_memories
from mnemoflow.eval.scenarios import load_scenarios
from mnemoflow.memory.generate.rules import RuleEngine
from mnemoflow.service import MemoryService

SUITE = Path("eval/scenarios")
MATCHED_DROPPED = 0.05  # the threshold may drop this share of matched memories in cross-validation


def labelled_memories(folder: Path, group_of: Any) -> list[dict[str, Any]]:
    """Every produced memory of the folder's scenarios, labelled extra or matched, with its group."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch, MemoryService(load_settings(Path(scratch) / "home")) as service:
        engine = RuleEngine()
        for scenario in load_scenarios(folder):
            run = run_scenario(service, scenario, engine)
            matching = match_memories(scenario.expected_memories, run.memories, scenario.expected_relationships)
            matched = set(matching.pairs.values()) | set(matching.absorbed.values())
            rows += [{"group": group_of(scenario), "scenario": f"{folder}/{scenario.id}", "content": m.content,
                      "kind": m.kind, "latest": m.is_latest, "extra": m.memory_id not in matched}
                     for m in run.memories]
    return rows


def features(rows: list[dict[str, Any]], vectors: np.ndarray, kinds: list[str]) -> np.ndarray:
    return np.asarray([np.concatenate([vector, [float(row["kind"] == k) for k in kinds], [float(row["latest"])]])
                       for row, vector in zip(rows, vectors, strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", nargs="*", type=Path, default=[], help="dev blind batches (trained on)")
    parser.add_argument("--unseen", nargs="*", type=Path, default=[], help="unseen blind batches (tested on)")
    args = parser.parse_args()
    rows = labelled_memories(SUITE, lambda s: f"suite {s.half}")
    for folder in args.dev:
        rows += labelled_memories(folder, lambda s: "dev")
    for folder in args.unseen:
        rows += labelled_memories(folder, lambda s, name=folder.name: f"unseen {name}")
    kinds = sorted({row["kind"] for row in rows})
    x = features(rows, np.asarray(LocalEmbedder().embed([row["content"] for row in rows])), kinds)
    y = np.asarray([row["extra"] for row in rows], dtype=int)
    groups = np.asarray([row["group"] for row in rows])
    train = (groups == "dev") | (groups == "suite tune")
    model = LogisticRegression(max_iter=2000)
    cv = cross_val_predict(model, x[train], y[train], cv=GroupKFold(5), method="predict_proba",
                           groups=np.asarray([row["scenario"] for row in rows])[train])[:, 1]
    threshold = float(np.quantile(cv[y[train] == 0], 1 - MATCHED_DROPPED))
    model.fit(x[train], y[train])
    report: dict[str, Any] = {"trained on": {"memories": int(train.sum()), "extra": int(y[train].sum()),
                                            "cross-validated AUC": round(float(roc_auc_score(y[train], cv)), 3),
                                            "threshold": round(threshold, 3)}}
    for group in sorted(set(groups[~train])):
        held = groups == group
        score, extra = model.predict_proba(x[held])[:, 1], y[held]
        dropped = score > threshold
        kept_matched, kept_extra = int(((~dropped) & (extra == 0)).sum()), int(((~dropped) & (extra == 1)).sum())
        report[group] = {
            "memories": int(held.sum()), "extra": int(extra.sum()), "AUC": round(float(roc_auc_score(extra, score)), 3),
            "dropped extra": int((dropped & (extra == 1)).sum()), "dropped matched": int((dropped & (extra == 0)).sum()),
            "precision before / after": [round(1 - float(extra.mean()), 3),
                                         round(kept_matched / max(1, kept_matched + kept_extra), 3)],
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
