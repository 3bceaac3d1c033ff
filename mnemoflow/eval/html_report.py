"""Evaluation reports as one self-contained HTML page each (`--html` on every eval command): inline
SVG figures and tables, no script, no stylesheet or font from the network, so the file can be mailed,
archived or opened offline. Each figure is a `<figure data-figure="...">` around one SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from mnemoflow.eval.metrics import RECALLS
from mnemoflow.eval.report import SUITE_NAMES, runs
from mnemoflow.eval.scenario_report import ScenarioReport
from mnemoflow.eval.scenarios import CLASSES, HALVES
from mnemoflow.eval.svg_charts import bar_chart, distribution_chart

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #1d2329; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #dde1e5; }
.figures { display: flex; flex-wrap: wrap; gap: 0 2rem; }
figure { margin: 1rem 0 1.5rem; overflow-x: auto; max-width: 100%; }
figcaption { font-size: .85rem; color: #4a545e; max-width: 27rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0 1rem; }
th, td { border: 1px solid #dde1e5; padding: .25rem .55rem; text-align: right; }
th:first-child, td:first-child { text-align: left; } th { background: #f3f5f7; }
.note { font-size: .9rem; color: #4a545e; }
"""
RECALL_NAMES = {"evidence_recall": "evidence recall", "session_recall": "answer-session recall"}


def page(title: str, intro: str, sections: Sequence[tuple[str, str]]) -> str:
    body = "".join(f'<section><h2>{escape(heading)}</h2><div class="figures">{html}</div></section>'
                   for heading, html in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{escape(title)}</h1><p class=\"note\">{intro}</p>"
            f"{body}</body></html>")


def figure(figure_id: str, caption: str, svg: str) -> str:
    return f'<figure data-figure="{escape(figure_id)}">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3f}"
    return str(value)


def benchmark_html(report: dict[str, Any]) -> str:
    """A LoCoMo or LongMemEval report (`harness`) with the baselines run beside it: recall per question
    category and budget, the latency distribution and the context size, each run in its own colour."""
    config, named = report["config"], runs(report)
    budgets = list(report["budgets"])
    categories = sorted({c for run in named.values() for b in run["budgets"].values() for c in b["by_category"]})
    recalls = [m for m in RECALLS if m in report["budgets"][budgets[0]]]
    sections = []
    for metric in recalls:
        figures = []
        for budget in budgets:
            series = {name: [run["budgets"][budget].get(metric)] + [
                run["budgets"][budget]["by_category"].get(c, {}).get(metric) for c in categories]
                for name, run in named.items()}
            figures.append(figure(
                f"recall-{metric}-{budget}",
                f"{RECALL_NAMES[metric]} at {budget} tokens, overall and per question category, each run beside "
                "the others (credited turns: at most max(1, tokens // 20) cites per item)",
                bar_chart(f"{RECALL_NAMES[metric]} @{budget}", ["overall", *categories], series,
                          y_label=RECALL_NAMES[metric], y_max=1.0)))
        sections.append((f"{RECALL_NAMES[metric].capitalize()} per category and budget", "".join(figures)))
    latency = [figure(f"latency-{budget}", f"recall latency at {budget} tokens, one point per question "
                      "(query embedding included)",
                      distribution_chart(f"latency @{budget}", {name: [q["latency_ms"] for q in run["questions"]
                                                                        if str(q["budget"]) == budget]
                                                                 for name, run in named.items()}, x_label="ms"))
               for budget in budgets]
    sections.append(("Latency distribution", "".join(latency)))
    tokens = bar_chart("mean context tokens", [f"budget {b}" for b in budgets],
                       {name: [run["budgets"][b]["context_tokens_mean"] for b in budgets]
                        for name, run in named.items()}, y_label="tokens (ceil(chars / 4))",
                       value_format="{:.0f}")
    sections.append(("Context tokens", figure("context-tokens", "mean packed context size per budget "
                                              "(never above the budget: ceil(chars / 4))", tokens)))
    headers = ["run", "budget", *(RECALL_NAMES[m] for m in recalls), *categories, "p50 ms", "p95 ms",
               "mean context tokens", "questions"]
    rows = [[name, budget, *(row[m] for m in recalls),
             *(row["by_category"].get(c, {}).get("evidence_recall") for c in categories),
             row["latency_ms"]["p50"], row["latency_ms"]["p95"], row["context_tokens_mean"], row["questions"]]
            for name, run in named.items() for budget, row in run["budgets"].items()]
    ingest = [[name, i["turns"], i["chunks"], i.get("tokens"), i["seconds"],
               round(i["tokens"] / i["seconds"]) if i.get("tokens") and i["seconds"] else None,
               run["config"]["preset"]["name"], ", ".join(f"{k}={v}" for k, v in run["config"]["store"].items())]
              for name, run in named.items() for i in [run["config"]["ingest"]]]
    sections.append(("Figures", table(headers, rows) + table(
        ["run", "turns", "chunks", "tokens", "ingest s", "tokens/s", "preset", "store"], ingest)))
    skipped = ", ".join(f"{k} {v}" for k, v in config.get("skipped", {}).items()) or "none"
    intro = (f"{config['questions']} questions over {len(config['conversations'])} conversations from "
             f"{escape(config['data'])}; skipped: {escape(skipped)}. mnemoflow {escape(config['mnemoflow'])}, "
             f"embedding model {escape(config['embedding_model'])}. Every figure recomputes from report.json.")
    return page(f"{SUITE_NAMES.get(config['suite'], config['suite'])} evaluation", intro, sections)


def scenarios_html(report: ScenarioReport) -> str:
    """The scenario suite: the headline figures and each relationship class's accuracy for the whole
    run and each half (tune / check), and extraction per tag."""
    halves = {"all": report, **{h: report.halves[h] for h in HALVES
                                if h in report.halves and report.halves[h].scenarios_count}}
    headline = {
        "extraction precision": lambda f: f.extraction.precision,
        "extraction recall": lambda f: f.extraction.recall,
        "kind accuracy": lambda f: f.extraction.kind_accuracy,
        "recall checks passed": lambda f: f.recall.pass_rate,
        "must-return hits": lambda f: f.recall.hit_rate,
    }
    sections = [
        ("Headline figures per half", figure(
            "headline", "the whole run and each half of the suite (the check half is never tuned on)",
            bar_chart("headline figures", list(headline), {h: [get(f) for get in headline.values()]
                                                           for h, f in halves.items()}, y_label="share", y_max=1.0))),
        ("Relationships per class", figure(
            "relationships", "accuracy of each relationship class (no bar: no case of that class)",
            bar_chart("relationship accuracy", list(CLASSES), {
                h: [f.relationships[c].accuracy if c in f.relationships else None for c in CLASSES]
                for h, f in halves.items()}, y_label="accuracy", y_max=1.0))),
        ("Extraction per tag", figure(
            "extraction-by-tag", "extraction precision and recall of the scenarios carrying each tag",
            bar_chart("extraction per tag", list(report.extraction_by_tag), {
                "precision": [c.precision for c in report.extraction_by_tag.values()],
                "recall": [c.recall for c in report.extraction_by_tag.values()]}, y_label="share", y_max=1.0))),
        ("Figures", table(["", "scenarios", *headline, "stale returned", "out of scope returned"],
                          [[h, f.scenarios_count, *(get(f) for get in headline.values()), f.recall.stale_returned,
                            f.recall.out_of_scope_returned] for h, f in halves.items()])
         + (f"<p>Below aim: {escape('; '.join(report.shortfalls))}</p>" if report.shortfalls else "<p>Aims met.</p>")),
    ]
    intro = (f"{report.scenarios_count} scenarios, engine {escape(report.engine)}, "
             f"cross-scope links {report.cross_scope_links}.")
    return page("Scenario suite evaluation", intro, sections)
