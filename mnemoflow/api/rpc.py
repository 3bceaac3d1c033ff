"""The operator endpoint local clients use (`mnemoflow.remote`): any service method, any tenant.

It answers only the local client token the server wrote into its home (owner-only), never a tenant
API key: tenant keys are for the tenant routes of the HTTP API and MCP.
"""

from __future__ import annotations

import logging
import os
import secrets
from typing import Any

from fastapi import APIRouter, Body, Depends, HTTPException, Request, status
from fastapi.responses import JSONResponse

from mnemoflow.errors import MnemoflowError
from mnemoflow.remote import error_payload, run_call
from mnemoflow.service import MemoryService

log = logging.getLogger("mnemoflow.serve")


def rpc_router(service: MemoryService, token: str, status_of: Any) -> APIRouter:
    """`status_of(exc)` maps an error to its HTTP status, as the tenant routes do."""

    def operator(request: Request) -> None:
        presented = request.headers.get("authorization", "")
        if not secrets.compare_digest(presented.encode(), f"Bearer {token}".encode()):
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "the local client token is required")

    router = APIRouter(prefix="/v1", dependencies=[Depends(operator)], include_in_schema=False)

    @router.get("/local/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "pid": os.getpid(), "home": str(service.settings.home)}

    @router.post("/rpc/{method}")
    def call(method: str, arguments: dict[str, Any] = Body(default_factory=dict),  # noqa: B008
             view: str | None = None) -> JSONResponse:
        """`view` (public, mem0): the result as that documented view, for a client that prints it
        without the result's types."""
        try:
            return JSONResponse({"result": run_call(service, method, arguments, view)})
        except MnemoflowError as exc:
            headers = {"Retry-After": "1"} if exc.transient else None
            return JSONResponse(error_payload(exc), status_code=status_of(exc), headers=headers)
        except Exception as exc:  # a bug or a library failing: the client gets one line, the log the trace
            log.exception("rpc %s failed", method)
            failure = MnemoflowError(f"the server failed running {method}: {type(exc).__name__}: {exc}")
            return JSONResponse(error_payload(failure), status_code=500)

    return router
