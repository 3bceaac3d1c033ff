"""The chat-completions client every LLM step shares (memory generation, relation judging, summaries):
any OpenAI-compatible endpoint, answers held to a JSON schema, retries with backoff for what may pass
(timeouts, dropped connections, HTTP 429 and 5xx), and one exception, `ChatFailed`, for everything
that means "use the rule-based fallback instead".

Servers ask for the schema in two ways. OpenAI, vLLM and Ollama take `response_format`
`{"type": "json_schema", "json_schema": {"name", "strict", "schema"}}`; llama.cpp's server
(llama-cpp-python 0.3) refuses that type (HTTP 500, "Input should be 'text' or 'json_object'") and takes
`{"type": "json_object", "schema": ...}`, which it turns into a grammar. `response_format` picks one
("json_schema", "json_object") or, by default ("auto"), sends json_schema and switches to json_object
for the rest of the client's life once a server refuses it.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

import httpx
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from mnemoflow.config import Settings
from mnemoflow.errors import ConfigError

ResponseFormat = Literal["auto", "json_schema", "json_object"]
MAX_STRING_CHARS = 400  # the longest string a json_object answer may hold (a memory is one sentence)


def _said(value: str) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValueError("empty")
    return value


# what every answer's fields are read as: words with their spacing tidied, never empty; a score held to 0-1
Said = Annotated[str, AfterValidator(_said)]
Share = Annotated[float, AfterValidator(lambda value: round(min(1.0, max(0.0, value)), 3))]


class ChatFailed(Exception):
    """Why a request gave no usable answer (the caller falls back to its rules)."""


class _Message(BaseModel):
    content: str | None = None
    refusal: str | None = None


class _Choice(BaseModel):
    message: _Message
    finish_reason: str | None = None


class _Completion(BaseModel):
    choices: list[_Choice] = Field(min_length=1)


def _refuses_json_schema(response: httpx.Response) -> bool:
    """A server that does not know the json_schema type says so in its error (422 or, llama.cpp, 500)."""
    return response.status_code in (400, 422, 500) and "json_schema" in response.text and \
        "json_object" in response.text


class ChatClient:
    """One model at one endpoint; `complete` returns the assistant's message or raises ChatFailed."""

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 60.0,
                 max_retries: int = 2, backoff_s: float = 0.5, response_format: ResponseFormat = "auto",
                 max_tokens: int | None = None) -> None:
        self.model, self.max_retries, self.backoff_s = model, max_retries, backoff_s
        self.response_format, self.max_tokens = response_format, max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout_s, headers=headers)

    @property
    def base_url(self) -> httpx.URL:
        return self._http.base_url

    def close(self) -> None:
        self._http.close()

    def complete(self, system: str, user: str, response_format: dict[str, Any]) -> str:
        """The message the model answers `user` with (temperature 0, held to `response_format`, a
        json_schema format as OpenAI writes it; sent as json_object where the server wants that)."""
        payload: dict[str, Any] = {"model": self.model, "temperature": 0,
                                   "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        response = self._post({**payload, "response_format": self._format(response_format)})
        if response is None:  # the server refused json_schema: json_object from now on
            self.response_format = "json_object"
            response = self._post({**payload, "response_format": self._format(response_format)})
        try:
            completion = _Completion.model_validate_json(response.content)  # type: ignore[union-attr]
        except ValidationError:
            raise ChatFailed("malformed chat completion") from None
        choice = completion.choices[0]
        if choice.message.refusal:
            raise ChatFailed("the model refused")
        if choice.finish_reason == "length":  # whatever came back is a fragment, however it parses
            raise ChatFailed(f"answer cut short at max_tokens ({self.max_tokens})")
        message = choice.message
        return message.content or ""

    def complete_json(self, system: str, user: str, response_format: dict[str, Any], answer: type[BaseModel]) -> Any:
        """`complete`, its message read as `answer`; ChatFailed for invalid JSON or a schema violation (a
        server need not enforce the schema)."""
        content = self.complete(system, user, response_format)
        try:
            return answer.model_validate_json(content)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid":
                raise ChatFailed("invalid JSON") from None
            where = ".".join(str(part) for part in first["loc"])
            raise ChatFailed(f"schema violation at {where}: {first['msg']}") from None

    def _format(self, response_format: dict[str, Any]) -> dict[str, Any]:
        if self.response_format == "json_object" and response_format.get("type") == "json_schema":
            return {"type": "json_object", "schema": _bounded(response_format["json_schema"]["schema"])}
        return response_format

    def _post(self, payload: dict[str, Any]) -> httpx.Response | None:
        """The response to the request, retrying what may pass (timeouts, dropped connections, 429, 5xx);
        None when the server refuses the json_schema format and "auto" may switch."""
        attempts, problem = self.max_retries + 1, ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._http.post("chat/completions", json=payload)
            except httpx.TimeoutException:
                problem = "timeout"
                continue
            except httpx.RequestError as exc:
                problem = f"connection error ({type(exc).__name__})"
                continue
            if self.response_format == "auto" and payload["response_format"].get("type") == "json_schema" and \
                    _refuses_json_schema(response):
                return None
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"HTTP {response.status_code}"
                continue
            if response.is_error:
                raise ChatFailed(f"HTTP {response.status_code}")
            return response
        raise ChatFailed(f"{problem} after {attempts} attempt{'s' if attempts > 1 else ''}")


def _bounded(schema: Any) -> Any:
    """`schema` with every string held to MAX_STRING_CHARS: a server that turns the schema into a grammar
    (llama.cpp) decodes within it, and a small model otherwise runs one string on until max_tokens. Strict
    json_schema servers get the schema as written (not all of them take maxLength)."""
    if isinstance(schema, list):
        return [_bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _bounded(v) for k, v in schema.items()}
    if out.get("type") == "string" or (isinstance(out.get("type"), list) and "string" in out["type"]):
        out.setdefault("maxLength", MAX_STRING_CHARS)
    return out


def chat_options(settings: Settings) -> dict[str, Any] | None:
    """The endpoint the settings configure, as ChatClient's keyword arguments; None for llm_provider
    'none' (the rules alone). ConfigError when 'openai' lacks a model or an endpoint."""
    if settings.llm_provider == "none":
        return None
    base_url = settings.llm_base_url or settings.openai_base_url
    if not settings.llm_model:
        raise ConfigError("llm_provider 'openai' needs llm_model (MNEMOFLOW_LLM_MODEL)")
    if not base_url:
        raise ConfigError("llm_provider 'openai' needs llm_base_url or openai_base_url (MNEMOFLOW_LLM_BASE_URL)")
    key = settings.llm_api_key or settings.openai_api_key
    return {"base_url": base_url, "model": settings.llm_model, "api_key": key.get_secret_value() if key else None,
            "timeout_s": settings.llm_timeout_s, "max_retries": settings.llm_max_retries,
            "response_format": settings.llm_response_format, "max_tokens": settings.llm_max_tokens}


def chat_client(settings: Settings) -> ChatClient | None:
    """The client the settings configure; None for llm_provider 'none'."""
    options = chat_options(settings)
    return ChatClient(**options) if options is not None else None
