"""Ablation of the memory engine's mechanism families: switch one family off (a patch that makes it
do nothing) and run the scenario suite's halves and the blind batches, in one process.

    .venv/bin/python bench/ablation.py --fires                      # which families act at all, per set
    .venv/bin/python bench/ablation.py --off moved_by_amount,remember  # figures with those families off
    .venv/bin/python bench/ablation.py --off none                   # the figures as the code stands

A family is a list of patches `module:attribute -> replacement`, where the replacement is what the
engine does without the family: a pattern that never matches, a function that returns its input or
None. `--fires` wraps every patched attribute instead and counts, per set of scenarios, the calls where
the family's answer differs from the replacement's: a family that never differs on a set cannot change
its figures. The unseen blind batches h and i are counted together and only their totals are printed; j, written
later (eval/blind/README.md), is a set of its own.
Figures are written as JSON (`--out`), one line per set: recall checks passed, UPDATES found,
extraction precision and recall. The families removed after their ablation (issue 32) are gone from the
list; bench/README.md ("Ablation of the memory engine") has the figures of every family, as measured on
the code before the removals.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

NEVER = re.compile(r"(?!)")


def _same(*args: Any, **kwargs: Any) -> Any:
    """Returns the first positional argument unchanged (a rewrite that rewrites nothing)."""
    return args[0]


def _none(*args: Any, **kwargs: Any) -> None:
    return None


def _false(*args: Any, **kwargs: Any) -> bool:
    return False


def _empty(*args: Any, **kwargs: Any) -> list[Any]:
    return []


def _nothing_asked(*args: Any, **kwargs: Any) -> frozenset[str]:
    return frozenset()


def _decision_kept(self: Any, candidate: Any, decision: Any, *rest: Any) -> Any:
    return decision


G, R, E = "mnemoflow.memory.generate", "mnemoflow.memory.relate", "mnemoflow.memory.english"
RULES, DRAFTS, PIPE = f"{G}.rules", f"{G}.drafts", "mnemoflow.memory.pipeline"

# name -> patches; every name is one mechanism family of `mnemoflow/memory/`
FAMILIES: dict[str, list[tuple[str, Any]]] = {
    # generation: sentence shapes the rule engine rewrites
    "remember": [(f"{RULES}:_REMEMBER", NEVER), (f"{RULES}:_KEEP_THE", NEVER), (f"{RULES}:_TO_DO", NEVER)],
    "agreed": [(f"{RULES}:_AGREED", NEVER)],
    "no_lead": [(f"{RULES}:_NO_LEAD", NEVER)],
    "followup": [(f"{RULES}:RuleEngine._follow_up", _none)],
    "followup_allergy": [(f"{RULES}:allergy_answer", _none), (f"{RULES}:with_allergen", _same)],
    "followup_topic": [(f"{RULES}:RuleEngine._topic", _none)],
    "followup_they": [(f"{RULES}:they_asked_about", _none)],
    "correction": [(f"{RULES}:_corrected", _none)],
    "told_in_asking": [(f"{RULES}:_told_in_asking", _none)],
    "bridging": [(f"{RULES}:_bridges", _false), (f"{PIPE}:MemoryGenerator._bridged_to", _nothing_asked)],
    "subject_booked": [(f"{DRAFTS}:_BOOKED", NEVER)],
    "subject_class_now": [(f"{DRAFTS}:_WHAT_I_AM_NOW", NEVER), (f"{DRAFTS}:_CLASS_VALUES", frozenset())],
    "with_subject": [(f"{RULES}:_with_subject", lambda body: (body, False))],
    "owned_by_speaker": [(f"{RULES}:_owned_by_speaker", _same)],
    "mine_named_before": [(f"{RULES}:_mine_named_before", _same)],
    "dash_topic": [(f"{RULES}:dash_topic", _none)],
    "chat_spellings": [(f"{G}.candidates:GenerationContext.written_out", lambda self: self)],
    # relating: what a new memory does to the held ones
    "moved_by_amount": [(f"{PIPE}:moved_by_amount", _none)],
    "moved_to_day": [(f"{PIPE}:moved_to_named_day", _none)],
    "moved_to_place": [(f"{PIPE}:moved_to_named_place", _none)],
    "changed_by_difference": [(f"{PIPE}:changed_by_difference", _none)],
    "revalued": [(f"{PIPE}:revalued_memory", _none)],
    "restated_with_value": [(f"{PIPE}:restated_with_value", _none), (f"{PIPE}:with_held_subject", _none)],
    "replaces": [(f"{PIPE}:MemoryGenerator._in_place_of_ended", _decision_kept)],
    "restate": [(f"{R}.restate:worth_restating", _false)],
    "asked_about": [(f"{PIPE}:MemoryGenerator._asked_about", _nothing_asked)],
    "devices": [(f"{R}.claims:device_at", _none), (f"{DRAFTS}:_MY_DEVICE", NEVER),
                (f"{G}.referents:_THE_DEVICE", NEVER)],
    "exclusive_classes": [(f"{R}.claims:EXCLUSIVE_CLASSES", {})],
    "antonyms": [(f"{R}.compare:_antonyms", _empty)],
    "changed_thing": [(f"{R}.compare:_changed_thing", _none)],
    "same_preposition": [(f"{R}.compare:_same_preposition", _none)],
    "other_thing": [(f"{R}.relations:_other_thing", _false)],
    "thing_ended": [(f"{R}.relations:_thing_ended", _false)],
    "label": [(f"{R}.claims:_without_label", _same)],
    "splice": [(f"{R}.claims:_SPLICE_RE", NEVER)],
    "attribution": [(f"{R}.claims:_split_attribution", lambda text: (None, text.strip().rstrip("."), ""))],
    "triples": [("mnemoflow.memory.drafts:relation_triples", _empty), ("mnemoflow.memory.drafts:categories_of", _empty)],
}

SETS = ("tune", "check", "a", "b", "c", "d", "e", "f", "g", "unseen", "j")
_current = ["tune"]  # the set the scenario being run belongs to
_fires: dict[str, Counter[str]] = defaultdict(Counter)


def _resolve(target: str) -> tuple[Any, str]:
    module, attr = target.split(":")
    owner: Any = importlib.import_module(module)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name


class _CountingPattern:
    """A compiled pattern that counts, for one family, the calls where it matched."""

    def __init__(self, pattern: re.Pattern[str], family: str) -> None:
        self._pattern, self._family = pattern, family

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._pattern, name)
        if not callable(method):
            return method

        def counted(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            if name == "finditer":
                result = list(result)
            if name == "sub":
                hit = result != (args[1] if len(args) > 1 else kwargs.get("string"))
            elif name == "subn":
                hit = result[1] > 0
            else:
                hit = bool(result)
            if hit:
                _fires[self._family][_current[0]] += 1
            return iter(result) if name == "finditer" else result
        return counted


def _counting(original: Any, neutral: Any, family: str) -> Any:
    """`original`, counting the calls whose answer differs from `neutral`'s."""
    if isinstance(original, re.Pattern):
        return _CountingPattern(original, family)
    if not callable(original) or isinstance(original, type):
        return original  # a table: its use is counted through the patterns and functions beside it

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        try:
            differs = result != neutral(*args, **kwargs)
        except Exception:
            differs = True
        if differs:
            _fires[family][_current[0]] += 1
        return result
    return counted


def apply(families: list[str], *, count: bool = False) -> None:
    """Switch `families` off (or, with `count`, leave them on and count where they act)."""
    for family in families:
        for target, value in FAMILIES[family]:
            owner, name = _resolve(target)
            original = getattr(owner, name)
            setattr(owner, name, _counting(original, value, family) if count else value)


def _figures(report: Any) -> dict[str, Any]:
    recall, rel, ext = report.recall, report.relationships, report.extraction
    return {"recall": f"{recall.passed}/{recall.checks}", "updates": f"{rel['UPDATES'].correct}/{rel['UPDATES'].expected}",
            "precision": ext.precision, "extraction_recall": ext.recall, "stale": recall.stale_returned,
            "derives": f"{rel['DERIVES'].correct}/{rel['DERIVES'].expected}"}


def run_sets(sets: list[str], root: Path) -> dict[str, dict[str, Any]]:
    """Every set through the pipeline; figures per set (the suite's halves apart)."""
    from mnemoflow.config import load_settings
    from mnemoflow.eval import scenario_run
    from mnemoflow.eval.scenario_report import build_report
    from mnemoflow.eval.scenario_scores import score_scenario
    from mnemoflow.eval.scenarios import load_scenarios
    from mnemoflow.memory.generate.rules import RuleEngine
    from mnemoflow.service import MemoryService

    drain = scenario_run.drain_generation

    def strict(*args: Any, **kwargs: Any) -> Any:
        done = drain(*args, **kwargs)
        if done.failed:
            raise RuntimeError(f"{done.failed} generation session(s) failed")
        return done
    scenario_run.drain_generation = strict
    batches = {"suite": root / "eval/scenarios", **{b: root / "eval/blind" / b for b in "abcdefghij"}}
    wanted = {"suite"} if {"tune", "check"} & set(sets) else set()
    wanted |= {b for b in "abcdefgj" if b in sets} | ({"h", "i"} if "unseen" in sets else set())
    results: dict[str, list[Any]] = defaultdict(list)
    for batch in [b for b in batches if b in wanted]:
        with tempfile.TemporaryDirectory(prefix="mnemoflow-ablation-") as scratch, \
                MemoryService(load_settings(Path(scratch))) as service:
            engine = RuleEngine()
            for scenario in load_scenarios(batches[batch]):
                group = scenario.half if batch == "suite" else "unseen" if batch in "hi" else batch
                if group not in sets:
                    continue
                _current[0] = group
                results[group].append(score_scenario(scenario, scenario_run.run_scenario(service, scenario, engine)))
    return {group: _figures(build_report(found)) for group, found in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--off", default="none", help="families to switch off, comma-separated, or 'none'")
    parser.add_argument("--fires", action="store_true", help="count where every family acts instead")
    parser.add_argument("--sets", default=",".join(SETS), help=f"sets to run, of {', '.join(SETS)}")
    parser.add_argument("--out", type=Path, help="JSON file for the figures")
    parser.add_argument("--list", action="store_true", help="list the families and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(FAMILIES))
        return
    off = [] if args.off == "none" else args.off.split(",")
    unknown = [f for f in off if f not in FAMILIES]
    sets = args.sets.split(",")
    if unknown or not set(sets) <= set(SETS):
        sys.exit(f"unknown family or set: {unknown or sets}")
    if args.fires:
        apply(list(FAMILIES), count=True)
    else:
        apply(off)
    started = time.monotonic()
    figures = run_sets(sets, Path(__file__).resolve().parents[1])
    result = {"off": off, "fires": args.fires, "seconds": round(time.monotonic() - started),
              "figures": figures}
    if args.fires:
        result["fire_counts"] = {family: {s: _fires[family][s] for s in SETS if _fires[family][s]}
                                 for family in FAMILIES}
    for group in SETS:
        if group in figures:
            print(group, json.dumps(figures[group]))
    if args.fires:
        for family in FAMILIES:
            print(f"{family:24s}", json.dumps(result["fire_counts"][family]))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
