"""Print the OpenAPI document (`python -m citebound.api.openapi > tests/api/openapi.json`).

The document does not depend on the config, so the snapshot test pins the public HTTP surface.
"""

from __future__ import annotations

import json
import sys
import tempfile
from typing import Any

from citebound.api.app import create_app
from citebound.config import load_config


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document (built on an empty temporary store)."""
    with tempfile.TemporaryDirectory(prefix="citebound-openapi-") as tmp:
        app = create_app(load_config(env={}, overrides={"store": tmp}))
        try:
            return app.openapi()
        finally:
            app.state.runtime.close()


def render() -> str:
    """Canonical text of the document: sorted keys, two-space indent, final newline."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
