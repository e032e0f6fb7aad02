"""API keys stored in the database, so every replica accepts the same keys (a mixin of
`PostgresStore`; `citebound apikey NAME --database URL`, `api.security.SharedKeyRing`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from citebound.config import ApiKey
from citebound.errors import StoreError

if TYPE_CHECKING:
    from psycopg import Connection


class PgApiKeys:
    """Needs `_read` and `_write` from `PostgresStore`."""

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _write(self, fn: Any, *args: Any) -> Any:
        raise NotImplementedError

    def add_api_key(self, key: ApiKey) -> None:
        """Store a key's hash, role and collections.

        Raises:
            StoreError: a key of that name or hash exists already.
        """

        def run(conn: Connection[Any]) -> None:
            clash = conn.execute(
                "SELECT name FROM api_keys WHERE name = %s OR sha256 = %s",
                (key.name, key.sha256),
            ).fetchone()
            if clash is not None:
                raise StoreError(f"an API key named {clash[0]!r} (or with that hash) exists")
            conn.execute(
                "INSERT INTO api_keys (name, sha256, role, collections) VALUES (%s, %s, %s, %s)",
                (key.name, key.sha256, key.role, json.dumps(key.collections)),
            )

        self._write(run)

    def revoke_api_key(self, name: str) -> bool:
        """Delete the key `name`; False when there is none."""

        def run(conn: Connection[Any]) -> bool:
            return conn.execute("DELETE FROM api_keys WHERE name = %s", (name,)).rowcount > 0

        return bool(self._write(run))

    def api_keys(self) -> list[ApiKey]:
        """Stored keys, by name."""
        rows = self._read("SELECT name, sha256, role, collections FROM api_keys ORDER BY name")
        return [
            ApiKey(name=r[0], sha256=r[1], role=r[2], collections=json.loads(r[3])) for r in rows
        ]
