"""Where a Delta table lives: a local directory or an object-store URI, plus storage options.

`Path("abfss://c@a.dfs.core.windows.net/x")` collapses the `//` and gives `abfss:/c@a…`, which
delta-rs rejects ("URL did not match any known pattern"), so URIs are never turned into paths.
Accepted forms:

    /abs/dir, rel/dir, file:///abs/dir            local directory
    s3://bucket/prefix  (s3a:// too)              Amazon S3 or any S3-compatible server
    abfss://container@account.dfs.core.windows.net/prefix   (abfs://, az:// too)  Azure ADLS Gen2
    gs://bucket/prefix                             Google Cloud Storage

Storage options (delta-rs `storage_options`, e.g. `AWS_ENDPOINT_URL`, `AWS_REGION`,
`AZURE_STORAGE_ACCOUNT_NAME`) come from, lowest precedence first: `[audit]
delta_storage_options` in citebound.toml (shown by `config show`: keep secrets out), the JSON
object in `$CITEBOUND_DELTA_STORAGE_OPTIONS` (never printed), then the caller. delta-rs also
reads the providers' standard variables (`AWS_ACCESS_KEY_ID`, `AZURE_STORAGE_ACCOUNT_KEY`,
`GOOGLE_APPLICATION_CREDENTIALS`, ...) by itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from citebound.errors import ConfigError

STORAGE_OPTIONS_ENV = "CITEBOUND_DELTA_STORAGE_OPTIONS"

# scheme -> provider; the URI is passed to delta-rs unchanged for these.
REMOTE_SCHEMES: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "abfss": "azure",
    "abfs": "azure",
    "az": "azure",
    "gs": "gcs",
    "gcs": "gcs",
}


@dataclass(frozen=True)
class TableLocation:
    """A parsed table location. `uri` is what delta-rs receives."""

    uri: str
    provider: str  # "local" | "s3" | "azure" | "gcs"
    bucket: str = ""  # bucket (s3, gcs) or container (azure); "" for local
    account: str = ""  # azure storage account; "" otherwise
    prefix: str = ""  # key prefix inside the bucket, no leading or trailing "/"
    storage_options: dict[str, str] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        return self.provider == "local"

    @property
    def local_path(self) -> Path:
        if not self.is_local:
            raise ConfigError(f"{self.uri} is not a local directory")
        return Path(self.uri)

    def child(self, name: str) -> TableLocation:
        """The location `name` below this one (e.g. OUT/answers), same options."""
        name = name.strip("/")
        uri = str(Path(self.uri) / name) if self.is_local else f"{self.uri.rstrip('/')}/{name}"
        prefix = f"{self.prefix}/{name}" if self.prefix else name
        return TableLocation(
            uri, self.provider, self.bucket, self.account, prefix, {**self.storage_options}
        )

    def __str__(self) -> str:
        return self.uri


def is_uri(text: str) -> bool:
    """True for `scheme://...` (a Windows drive letter like `C:\\x` is not a URI)."""
    head, sep, _ = text.partition("://")
    return bool(sep) and len(head) > 1 and head.replace("+", "").isalnum()


def env_storage_options(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The JSON object in $CITEBOUND_DELTA_STORAGE_OPTIONS ({} when unset)."""
    raw = (os.environ if env is None else env).get(STORAGE_OPTIONS_ENV, "")
    if not raw.strip():
        return {}
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ConfigError(f"${STORAGE_OPTIONS_ENV} is not a JSON object: {err.msg}") from None
    if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
        raise ConfigError(f"${STORAGE_OPTIONS_ENV} must be a JSON object of strings")
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in obj.items()}


def table_location(
    where: str | Path | TableLocation,
    storage_options: Mapping[str, str] | None = None,
    *,
    config_options: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> TableLocation:
    """Parse `where` into a TableLocation with merged storage options.

    Raises ConfigError with the accepted forms when the URI cannot be used.
    """
    if isinstance(where, TableLocation):
        options = {**where.storage_options, **(storage_options or {})}
        return TableLocation(
            where.uri, where.provider, where.bucket, where.account, where.prefix, options
        )
    options = {**(config_options or {}), **env_storage_options(env), **(storage_options or {})}
    text = str(where)
    if not text.strip():
        raise ConfigError("empty table location")
    if isinstance(where, Path) or not is_uri(text):
        return TableLocation(str(Path(text).absolute()), "local", storage_options=options)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"{text}: file:// URIs must name a local path (file:///dir)")
        return TableLocation(
            str(Path(unquote(parts.path)).absolute()), "local", storage_options=options
        )
    provider = REMOTE_SCHEMES.get(scheme)
    if provider is None:
        raise ConfigError(
            f"{text}: unsupported table URI scheme {scheme!r}; use a directory, file://, "
            "s3://bucket/prefix, abfss://container@account.dfs.core.windows.net/prefix "
            "or gs://bucket/prefix"
        )
    prefix = parts.path.strip("/")
    if parts.query or parts.fragment:
        raise ConfigError(f"{text}: a table URI has no ?query or #fragment")
    if provider == "azure":
        container, at, host = parts.netloc.partition("@")
        account = host.split(".", 1)[0]
        if scheme in ("abfss", "abfs") and (not at or not container or not account):
            raise ConfigError(
                f"{text}: an {scheme}:// URI is {scheme}://container@account.dfs.core."
                "windows.net/prefix"
            )
        if scheme == "az" and not at:
            container, account = parts.netloc, ""
        if not container:
            raise ConfigError(f"{text}: no container")
        return TableLocation(text, provider, container, account, prefix, options)
    if not parts.netloc:
        raise ConfigError(f"{text}: no bucket ({scheme}://bucket/prefix)")
    return TableLocation(text, provider, parts.netloc, "", prefix, options)
