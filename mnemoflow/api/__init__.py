"""Network interfaces over the service layer: HTTP (FastAPI) now, MCP later."""
