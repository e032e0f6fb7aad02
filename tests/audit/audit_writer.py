"""Subprocess for the durability test: append records forever, print each acknowledged id."""

from __future__ import annotations

import sys
from pathlib import Path

from audit_samples import PATHS, record_for

from citebound.audit import SQLiteAuditSink


def main(path: str) -> None:
    sink = SQLiteAuditSink(Path(path))
    i = 0
    while True:
        rid = f"req-{i:06d}"
        sink.append(record_for(PATHS[i % len(PATHS)], request_id=rid, store_evidence_text=True))
        # Printed only after append returned: the record is acknowledged as durable.
        sys.stdout.write(rid + "\n")
        sys.stdout.flush()
        i += 1


if __name__ == "__main__":
    main(sys.argv[1])
