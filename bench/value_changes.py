"""Value changes (`eval/value_changes/`): for each case, whether recall gives the new value above anything
that states only the old one, with the ranks and what was packed.

    .venv/bin/python bench/value_changes.py [--data eval/value_changes] [--show]

The engine is whatever the settings configure (the rules by default; MNEMOFLOW_LLM_* for a model).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mnemoflow.config import load_settings
from mnemoflow.eval.value_changes import load_value_changes, run_value_change
from mnemoflow.service import MemoryService


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "eval/value_changes")
    parser.add_argument("--show", action="store_true", help="print what recall packed for each case")
    args = parser.parse_args()
    cases = load_value_changes(args.data)
    passed = 0
    with tempfile.TemporaryDirectory(prefix="mnemoflow-changes-") as home, MemoryService(load_settings(Path(home))) as service:
        for case in cases:
            outcome = run_value_change(service, case)
            passed += outcome.passed
            print(f"{'pass' if outcome.passed else 'FAIL'} {case.id}: new at {outcome.new_rank}, old alone at {outcome.old_rank}")
            if args.show:
                for n, text in enumerate(outcome.items, start=1):
                    print(f"    {n}. {text[:140]}")
    print(f"{passed}/{len(cases)} cases: the new value above anything that states only the old one")


if __name__ == "__main__":
    main()
