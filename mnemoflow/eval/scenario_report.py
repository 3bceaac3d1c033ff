"""The suite's report: every scenario's result summed overall and per half (tune / check), the
aims it falls short of, and the table `mnemoflow eval scenarios` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import (
    Field,
    computed_field,
)

from mnemoflow.eval.scenario_scores import (
    ClassCounts,
    ExtractionCounts,
    Figures,
    ScenarioResult,
    ratio,
)
from mnemoflow.eval.scenarios import CLASSES, DEFAULT_AIMS, HALVES


class RecallSummary(Figures):
    checks: int = 0
    passed: int = 0
    must_return: int = 0
    must_return_hits: int = 0
    must_not_return_violations: int = 0
    stale_returned: int = 0
    out_of_scope_returned: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def hit_rate(self) -> float | None:
        return ratio(self.must_return_hits, self.must_return)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return ratio(self.passed, self.checks)


class HalfFigures(Figures):
    """The headline figures of one half of the suite (`scenario_half`): extraction precision and
    recall, each relationship class's accuracy, the recall checks (passed, stale, out of scope)."""

    scenarios_count: int = 0
    extraction: ExtractionCounts = Field(default_factory=ExtractionCounts)
    relationships: dict[str, ClassCounts] = Field(default_factory=dict)
    cross_scope_links: int = 0
    recall: RecallSummary = Field(default_factory=RecallSummary)


class ScenarioReport(Figures):
    """Every figure of one suite run; `model_dump_json()` is the report file. The top-level figures
    are over every scenario run; `halves` has the same headline figures for the tune and the check
    half (a half with no scenario in the run has scenarios_count 0 and no ratios)."""

    engine: str
    config: dict[str, Any] = Field(default_factory=dict)
    scenarios_count: int
    extraction: ExtractionCounts
    extraction_by_tag: dict[str, ExtractionCounts]
    relationships: dict[str, ClassCounts]
    confusion: dict[str, dict[str, int]]
    cross_scope_links: int
    recall: RecallSummary
    aims: dict[str, float]
    shortfalls: list[str]
    scenarios: list[ScenarioResult]
    halves: dict[str, HalfFigures] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def meets_aims(self) -> bool:
        return not self.shortfalls


def _shortfalls(extraction: ExtractionCounts, classes: Mapping[str, ClassCounts], recall: RecallSummary,
                aims: Mapping[str, float]) -> list[str]:
    out = []
    for name, value in (("extraction_precision", extraction.precision), ("extraction_recall", extraction.recall)):
        if value is not None and value < aims[name]:
            out.append(f"{name} {value:.3f} < {aims[name]}")
    for cls, counts in classes.items():
        if counts.accuracy is not None and counts.accuracy < aims["relationship_accuracy"]:
            out.append(f"{cls} accuracy {counts.accuracy:.3f} < {aims['relationship_accuracy']}")
    for name in ("stale_returned", "out_of_scope_returned"):
        if getattr(recall, name) > aims[name]:
            out.append(f"{name} {getattr(recall, name)} > {aims[name]:g}")
    return out


def _half_figures(results: Sequence[ScenarioResult]) -> HalfFigures:
    figures = HalfFigures(scenarios_count=len(results), relationships={c: ClassCounts() for c in CLASSES})
    for r in results:
        figures.extraction += r.extraction
        for cls, counts in r.relationships.by_class.items():
            figures.relationships[cls] += counts
        figures.cross_scope_links += r.relationships.cross_scope_links
        for name in RecallSummary.model_fields:
            setattr(figures.recall, name, getattr(figures.recall, name) + getattr(r.recall_checks, name))
    return figures


def build_report(results: Iterable[ScenarioResult], *, engine: str = "rule-based",
                 config: Mapping[str, Any] | None = None, aims: Mapping[str, float] | None = None) -> ScenarioReport:
    results = list(results)
    aims = {**DEFAULT_AIMS, **(aims or {})}
    overall = _half_figures(results)
    by_tag: dict[str, ExtractionCounts] = {}
    confusion: dict[str, dict[str, int]] = {}
    for r in results:
        for tag in r.tags:
            by_tag[tag] = by_tag.get(tag, ExtractionCounts()) + r.extraction
        for exp, row in r.relationships.confusion.items():
            target = confusion.setdefault(exp, {})
            for outcome, n in row.items():
                target[outcome] = target.get(outcome, 0) + n
    halves = {half: _half_figures([r for r in results if r.half == half]) for half in HALVES}
    return ScenarioReport(
        engine=engine, config=dict(config or {}), scenarios_count=len(results), extraction=overall.extraction,
        extraction_by_tag=dict(sorted(by_tag.items())), relationships=overall.relationships,
        confusion={c: dict(sorted(confusion[c].items(), key=lambda kv: (-kv[1], kv[0])))
                   for c in CLASSES if c in confusion},
        cross_scope_links=overall.cross_scope_links, recall=overall.recall, aims=aims,
        shortfalls=_shortfalls(overall.extraction, overall.relationships, overall.recall, aims), scenarios=results,
        halves=halves,
    )


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_table(report: ScenarioReport) -> str:
    """The report on one screen, as plain text: every figure over the whole run, with the tune and
    the check half beside it (rows for extraction and recall checks, columns for relationships);
    a half with no scenario in the run is left out."""
    halves = [h for h in HALVES if h in report.halves and report.halves[h].scenarios_count]
    split = ", ".join(f"{h} {report.halves[h].scenarios_count}" for h in halves)
    lines = [f"Scenario suite: {report.scenarios_count} scenarios" + (f" ({split})" if split else "")
             + f", engine {report.engine}", ""]
    head = f"{'extraction':<20}{'expected':>9}{'produced':>9}{'matched':>8}{'precision':>10}{'recall':>8}" \
           f"{'kind':>7}{'latest':>8}{'dates':>7}"
    lines.append(head)

    def extraction_row(label: str, c: ExtractionCounts) -> str:
        return (f"{label:<20}{c.expected:>9}{c.produced:>9}{c.matched_expected:>8}{_fmt(c.precision):>10}"
                f"{_fmt(c.recall):>8}{_fmt(c.kind_accuracy):>7}{_fmt(c.latest_accuracy):>8}"
                f"{_fmt(c.event_date_accuracy):>7}")

    lines.append(extraction_row("all", report.extraction))
    for half in halves:
        lines.append(extraction_row(f"{half} half", report.halves[half].extraction))
    for tag, counts in report.extraction_by_tag.items():
        lines.append(extraction_row(f"  {tag}", counts))
    half_heads = "".join(f"{h + ' accuracy':>16}" for h in halves)
    lines += ["", (f"{'relationship':<20}{'expected':>9}{'correct':>9}{'accuracy':>10}{'links':>7}{'precision':>10}"
                   f"{half_heads}  confusion (expected -> produced)")]
    for cls, c in report.relationships.items():
        confusion = ", ".join(f"{k} {v}" for k, v in report.confusion.get(cls, {}).items())
        per_half = ""
        for h in halves:
            hc = report.halves[h].relationships.get(cls, ClassCounts())
            cell = f"{hc.correct}/{hc.expected} {_fmt(hc.accuracy)}" if hc.expected else "-"
            per_half += f"{cell:>16}"
        lines.append(f"{cls:<20}{c.expected:>9}{c.correct:>9}{_fmt(c.accuracy):>10}{c.produced:>7}"
                     f"{_fmt(c.precision):>10}{per_half}  {confusion}")

    def recall_row(label: str, r: RecallSummary) -> str:
        return (f"{label:<20}{f'{r.passed}/{r.checks}':>9}{_fmt(r.pass_rate):>9}{_fmt(r.hit_rate):>10}"
                f"{r.must_not_return_violations:>9}{r.stale_returned:>7}{r.out_of_scope_returned:>14}")

    lines += ["", (f"{'recall checks':<20}{'passed':>9}{'rate':>9}{'hit rate':>10}{'refused':>9}{'stale':>7}"
                   f"{'out of scope':>14}"), recall_row("all", report.recall)]
    for half in halves:
        lines.append(recall_row(f"{half} half", report.halves[half].recall))
    lines.append(f"cross-scope links {report.cross_scope_links}")
    lines.append("aims met" if report.meets_aims else "below aim: " + "; ".join(report.shortfalls))
    return "\n".join(lines)
