"""Entry point of the ingest worker process (`ingest.worker`): `python -m
citebound.ingest._worker_main MEMORY_MB`. Jobs arrive on stdin and results leave on the
original stdout as pickles; fd 1 is then pointed at stderr, so a stray print of a parser can
never corrupt the channel."""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection


def main() -> None:  # pragma: no cover - runs in the worker process
    channel_out = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    channel_in = Connection(os.dup(0), writable=False)
    # Here, not at the top: imported once fd 1 points at stderr, so nothing the parsers print
    # while they load reaches the channel.
    from citebound.ingest.worker import serve

    serve(channel_in, channel_out, int(sys.argv[1]) if len(sys.argv) > 1 else 0)


if __name__ == "__main__":
    main()
