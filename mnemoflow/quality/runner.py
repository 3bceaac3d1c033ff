"""Running the checks: the suites through Great Expectations, then the structural checks.

The context is ephemeral (in memory, analytics and progress bars off): the store is the only
place results are kept. Each failing row is named by its `row_key` (`tenant:id`), a sample of
at most FAILING_SAMPLE per expectation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemoflow.quality.structure import structural_checks
from mnemoflow.quality.suites import SUITES, Expect
from mnemoflow.storage.quality import QualityFrames, QualityResult

if TYPE_CHECKING:
    from mnemoflow.service import MemoryService

FAILING_SAMPLE = 20


def _context() -> Any:
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    return gx.get_context(mode="ephemeral", project_config=DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(), analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False)))


def _expectation(expect: Expect) -> Any:
    import great_expectations as gx

    condition = {"row_condition": expect.when, "condition_parser": "pandas"} if expect.when else {}
    return getattr(gx.expectations, expect.kind)(**expect.kwargs, **condition)


def _observed(result: dict[str, Any]) -> Any:
    if "observed_value" in result:
        return result["observed_value"]
    return {k: result[k] for k in ("element_count", "unexpected_count", "missing_count") if k in result}


def validate(frames: QualityFrames) -> list[QualityResult]:
    """Every suite over its frame; one result per expectation, in the order the suites declare them."""
    import great_expectations as gx

    context = _context()
    source = context.data_sources.add_pandas("mnemoflow")
    results: list[QualityResult] = []
    for suite_name, expectations in SUITES.items():
        frame = frames[suite_name].to_pandas()
        batch = source.add_dataframe_asset(suite_name).add_batch_definition_whole_dataframe("all")
        suite = context.suites.add(gx.ExpectationSuite(name=suite_name))
        for expect in expectations:
            suite.add_expectation(_expectation(expect))
        run = context.validation_definitions.add(gx.ValidationDefinition(name=suite_name, data=batch, suite=suite))
        outcome = run.run(batch_parameters={"dataframe": frame}, result_format={
            "result_format": "COMPLETE", "unexpected_index_column_names": ["row_key"],
            "partial_unexpected_count": FAILING_SAMPLE})
        for expect, checked in zip(expectations, outcome.results):
            if checked.exception_info and checked.exception_info.get("raised_exception"):
                results.append(QualityResult(suite_name, expect.name, False,
                                             {"error": checked.exception_info.get("exception_message")}, None, []))
                continue
            failing = [str(row["row_key"]) for row in checked.result.get("unexpected_index_list") or []]
            results.append(QualityResult(suite_name, expect.name, bool(checked.success), _observed(checked.result),
                                         checked.result.get("unexpected_count"), failing[:FAILING_SAMPLE]))
    return results


def run_checks(service: MemoryService, tenant_id: str | None = None) -> list[QualityResult]:
    """The suites over one tenant's tables (or the whole store's), then the structural checks."""
    frames = service.store.quality_frames(tenant_id)
    return validate(frames) + structural_checks(service, frames, tenant_id)


def problems_of(results: list[QualityResult]) -> list[str]:
    """One line per failed expectation, naming the rows (a sample) that broke it."""
    lines = []
    for r in results:
        if r.success:
            continue
        count = f"{r.unexpected_count} rows" if r.unexpected_count is not None else "failed"
        rows = f": {', '.join(r.failing_ids[:5])}" + (" ..." if len(r.failing_ids) > 5 else "") if r.failing_ids else ""
        lines.append(f"{r.suite}: {r.expectation}: {count}{rows}")
    return lines
