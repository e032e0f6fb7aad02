"""Who is calling, and what they may read: API keys, roles, collections, bind rules.

Keys are configured as sha256 hashes (`[[api.keys]]` or `$CITEBOUND_API_KEYS`), never in
clear. A presented key is hashed and compared with *every* configured hash using
`hmac.compare_digest`, without an early exit, so the time taken does not tell which key (or
how much of one) matched.

With no keys configured the server serves anonymous readers of every collection, and may only
bind a loopback address (`check_bind`): an open server on a network interface needs keys.

    >>> key, entry = new_key("ops", role="reader", collections=["plant"])
    >>> KeyRing([entry]).authenticate(key).collections
    frozenset({'plant'})
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from citebound.config import ApiKey
from citebound.errors import AccessDenied, CiteboundError, ConfigError

ALL = "*"
ANONYMOUS = "anonymous"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller. `collections` holds `*` for every collection."""

    name: str
    role: str
    collections: frozenset[str]
    # sha256 of the key presented (empty for anonymous): step tokens bind to the key itself,
    # so a revoked key's tokens stay dead when a new key reuses its name.
    key_sha256: str = ""

    @property
    def all_collections(self) -> bool:
        return ALL in self.collections

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def may_read(self, collection: str) -> bool:
        return self.all_collections or collection in self.collections

    def visible(self, collections: Iterable[str]) -> list[str]:
        """The readable subset of `collections`, sorted."""
        return sorted(c for c in set(collections) if self.may_read(c))


ANONYMOUS_READER = Principal(ANONYMOUS, "reader", frozenset({ALL}))


def hash_key(key: str) -> str:
    """Lowercase hex sha256 of the key's UTF-8 bytes (what the config stores)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key(name: str, *, role: str, collections: Sequence[str]) -> tuple[str, ApiKey]:
    """A fresh random key (shown once) and the config entry holding only its hash."""
    key = "cb_" + secrets.token_urlsafe(32)
    entry = ApiKey(name=name, sha256=hash_key(key), role=role, collections=list(collections))
    return key, entry


class KeyRing:
    """The configured keys. Empty means anonymous access (loopback only)."""

    def __init__(self, keys: Sequence[ApiKey]) -> None:
        names = [k.name for k in keys]
        if len(set(names)) != len(names):
            raise ConfigError("api.keys: key names must be unique", field="api.keys")
        hashes = [k.sha256 for k in keys]
        if len(set(hashes)) != len(hashes):
            raise ConfigError("api.keys: the same key hash is configured twice", field="api.keys")
        self._keys = list(keys)

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def authenticate(self, presented: str | None) -> Principal:
        """The principal for `presented`; AccessDenied(401) when keys are on and it is wrong."""
        if not self._keys:
            return ANONYMOUS_READER
        if not presented:
            raise AccessDenied(
                "this server needs an API key: send 'Authorization: Bearer <key>'", status=401
            )
        digest = hash_key(presented).encode("ascii")
        match: ApiKey | None = None
        for key in self._keys:  # no early exit: constant work whatever matches
            if hmac.compare_digest(digest, key.sha256.encode("ascii")):
                match = key
        if match is None:
            raise AccessDenied("the API key is not valid", status=401)
        return Principal(match.name, match.role, frozenset(match.collections), match.sha256)


# How long a replica trusts its copy of the database's keys: a key added or revoked with
# `citebound apikey --database` is honoured by every replica within this many seconds.
KEY_REFRESH_S = 5.0


class SharedKeyRing(KeyRing):
    """The configured keys plus the keys stored in the database (`citebound apikey NAME
    --database URL`), re-read at most every `refresh_s`. A configured key wins over a stored
    one of the same name or hash. If the database cannot be read, the last keys read stay in
    force (requests then fail on the store anyway).

    Once keys were required they stay required: revoking the last stored key locks callers
    out instead of turning the server into an anonymous one (it may be bound to a public
    address that was only allowed because it had keys)."""

    def __init__(
        self,
        keys: Sequence[ApiKey],
        load: Callable[[], Sequence[ApiKey]],
        *,
        refresh_s: float = KEY_REFRESH_S,
    ) -> None:
        super().__init__(keys)
        self._configured = list(keys)
        self._load = load
        self._refresh_s = refresh_s
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()
        self._required = False
        self._refresh()

    def _refresh(self) -> None:
        if time.monotonic() - self._loaded_at < self._refresh_s:
            return
        with self._lock:
            if time.monotonic() - self._loaded_at < self._refresh_s:
                return
            try:
                stored = list(self._load())
            except CiteboundError:
                return
            names = {k.name for k in self._configured}
            hashes = {k.sha256 for k in self._configured}
            extra = [k for k in stored if k.name not in names and k.sha256 not in hashes]
            self._keys = self._configured + extra
            self._required = self._required or bool(self._keys)
            self._loaded_at = time.monotonic()

    @property
    def enabled(self) -> bool:
        self._refresh()
        return self._required

    def authenticate(self, presented: str | None) -> Principal:
        self._refresh()
        if self._required and not self._keys:
            raise AccessDenied("the API key is not valid", status=401)
        return super().authenticate(presented)


def is_loopback(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (what may be bound without keys)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(host_header: str | None, allowed: Sequence[str]) -> bool:
    """True when the Host header (port ignored, case-insensitive) is in `allowed`, or when
    `allowed` holds `*`. A missing Host header (HTTP/1.0 clients) is refused too."""
    if ALL in allowed:
        return True
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):  # [v6]:port
        name = host[: host.find("]") + 1] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    wanted = {a.strip().lower() for a in allowed}
    return name in wanted or name.strip("[]") in wanted


def check_bind(host: str, keyring: KeyRing) -> None:
    """Raise ConfigError when `host` is not loopback and no API keys are configured."""
    if not keyring.enabled and not is_loopback(host):
        raise ConfigError(
            f"refusing to bind {host!r} without API keys: anyone who can reach it would read "
            "every collection. Bind 127.0.0.1 (the default), or configure [[api.keys]] "
            "(`citebound apikey NAME --collections ...` prints one).",
            field="api.keys",
        )
