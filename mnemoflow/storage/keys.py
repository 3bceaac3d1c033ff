"""API keys of the HTTP and MCP APIs: one tenant per key, only a hash of each secret kept."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from typing import Any

from mnemoflow.models import ApiKey
from mnemoflow.storage import batch
from mnemoflow.storage.room import Room
from mnemoflow.storage.scope import check_id, tenant
from mnemoflow.timeutil import utcnow


def _secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Keys(Room):
    def create_api_key(self, tenant_id: str, name: str | None = None, *, admin: bool = False) -> tuple[str, str]:
        """A new key for `tenant_id`: (key_id, secret). The secret is shown once; only its hash is kept
        (random 256-bit tokens need no slow hash). An admin key may also see debug output of its tenant."""
        check_id("tenant_id", tenant_id)
        key_id = f"key_{uuid.uuid4().hex[:16]}"
        secret = f"mf_{secrets.token_urlsafe(32)}"
        with self._db.tx() as con:
            con.execute("INSERT INTO api_keys (key_id, tenant_id, name, secret_sha256, created_at, revoked_at, admin) "
                        "VALUES (?, ?, ?, ?, ?, NULL, ?)", [key_id, tenant_id, name, _secret_hash(secret), utcnow(), admin])
        return key_id, secret

    def api_key(self, secret: str) -> ApiKey | None:
        """The unrevoked key a secret is, or None."""
        with self._db.read() as con:
            row = con.execute("SELECT key_id, tenant_id, coalesce(admin, false) FROM api_keys "
                              "WHERE secret_sha256 = ? AND revoked_at IS NULL", [_secret_hash(secret)]).fetchone()
        return ApiKey(key_id=row[0], tenant_id=row[1], admin=row[2]) if row else None

    def list_api_keys(self, tenant_id: str | None = None) -> list[dict[str, Any]]:
        """Every key, or one tenant's (never their secrets)."""
        where, params = tenant(tenant_id) if tenant_id is not None else ("true", [])
        with self._db.read() as con:
            cur = con.execute("SELECT key_id, tenant_id, name, created_at, revoked_at, coalesce(admin, false) AS admin "
                              "FROM api_keys "
                              f"WHERE {where} ORDER BY created_at", params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    def revoke_api_key(self, key_id: str) -> bool:
        with self._db.tx() as con:
            return bool(batch.update_returning(con, "api_keys", "key_id", "revoked_at = ?",
                                               "key_id = ? AND revoked_at IS NULL", [utcnow()], [key_id]))

    def take_rate_token(self, bucket: str, rate: float, burst: int) -> float | None:
        """A shared store's rate budget (`protect.ratelimit.SharedLimiter`): spend one token of `bucket`."""
        if self._db.postgres is None:
            raise RuntimeError("a rate budget in the store needs a shared store")
        return self._db.postgres.take_token(bucket, rate, burst)
