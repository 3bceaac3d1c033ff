"""`promote`: which SHADOW rules have earned a move to ACTIVE. A rule in SHADOW is evaluated and
reported but changes nothing; its record (how often it matched, and how the tool selections it
matched were rated) says whether it would have helped. This job lists those whose record meets the
thresholds (`promote_min_evaluations`, `promote_min_ratings`, `promote_min_positive_rate`) as
suggestions, with the command that promotes each; it changes no state: a person, or an API call,
makes the move."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemoflow.maintenance import JobReport, job

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService


@job("promote", schedule="45 3 * * *",
     description="List the SHADOW rules whose record (evaluations, positive share of ratings) meets the promotion "
                 "thresholds as suggestions to make them ACTIVE; no rule's state is changed.")
def promote(service: MemoryService, tenant_id: str | None, report: JobReport) -> None:
    """Nightly, after the other jobs: suggestions only, so a person decides in the morning."""
    settings, store = service.settings, service.store
    suggestions = []
    for tenant in [tenant_id] if tenant_id else store.tenants():
        for rule in store.promotion_candidates(tenant, min_evaluations=settings.promote_min_evaluations,
                                               min_ratings=settings.promote_min_ratings,
                                               min_positive_rate=settings.promote_min_positive_rate):
            owner = " ".join(f"--{flag} {value}" for flag, value in (
                ("tenant", rule.tenant_id), ("user", rule.user_id), ("agent", rule.agent_id), ("run", rule.run_id),
                ("container", rule.container)) if value)
            stats = rule.stats
            suggestions.append({
                "rule_id": rule.rule_id, "tenant_id": rule.tenant_id, "user_id": rule.user_id,
                "evaluations": stats.evaluations, "positive": stats.positive, "negative": stats.negative,
                "positive_rate": round(stats.positive / max(1, stats.positive + stats.negative), 3),
                "command": f"mnemoflow rules state {rule.rule_id} active {owner}"})
    report.counts["suggested"] = len(suggestions)
    report.details["suggestions"] = suggestions
    report.details["thresholds"] = {"min_evaluations": settings.promote_min_evaluations,
                                    "min_ratings": settings.promote_min_ratings,
                                    "min_positive_rate": settings.promote_min_positive_rate}
