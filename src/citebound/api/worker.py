"""The app factory of `citebound serve --workers N`: each uvicorn worker process builds its own
app (its own pipeline, store connections and audit sinks) from the effective config the parent
resolved, passed as JSON in `$CITEBOUND_SERVE_CONFIG` (a child of the same user; the parent
already validated it and ran the database migrations once)."""

from __future__ import annotations

import os

from fastapi import FastAPI

from citebound.api.app import create_app
from citebound.config import Config

CONFIG_ENV = "CITEBOUND_SERVE_CONFIG"


def app_from_env() -> FastAPI:
    """uvicorn factory (`citebound.api.worker:app_from_env`, factory=True)."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise RuntimeError(f"${CONFIG_ENV} is not set: start workers with `citebound serve`")
    return create_app(Config.model_validate_json(raw))
