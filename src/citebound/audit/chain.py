"""The audit chain: each record of a store carries the hash of the one before it.

A record's own `record_hash` proves its content unchanged since it was hashed; it cannot show
that a record is missing, moved or added by hand. So every sink (SQLite, PostgreSQL, Delta)
stores two more columns with each record, in append (`seq`; Delta `chain_seq`) order:

    prev_hash  = chain_hash of the previous record, GENESIS for the first
    chain_hash = "sha256:" + sha256("citebound-audit-chain-v1\\n" + prev_hash + "\\n" + record_hash)

`verify` walks a store in order and names the record at each break (docs/audit.md "The chain:
what verify proves"):

- EDITED: a record changed, re-hashed or not: its `record_hash` or its `chain_hash` no longer
  covers it;
- MISSING: a record deleted: the next record's `prev_hash` names no record;
- REORDERED: records swapped: a `prev_hash` names another record than the one stored before;
- UNCHAINED: a record inserted by hand (a forged append): no chain hash, or a wrong one;
- TRUNCATED: the newest records deleted: SQLite's AUTOINCREMENT counter, or the anchor, is
  past the last record;
- ANCHOR: the history up to a kept anchor rewritten: the anchored record's chain hash differs.

What it cannot prove alone: someone who can write the file *and* runs this code can rewrite
the whole tail from any record consistently. The anchor catches that: `citebound audit verify`
prints `N:HEAD` (record count and the newest chain hash); kept elsewhere (a ticket, a log
shipped off the host), `verify --anchor N:HEAD` later proves the first N records unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from citebound.contracts.audit import AuditRecord

GENESIS = "sha256:" + "0" * 64
ProblemKind = Literal["EDITED", "MISSING", "REORDERED", "UNCHAINED", "TRUNCATED", "ANCHOR"]


def link(prev_hash: str, record_hash: str) -> str:
    """The chain hash of a record whose predecessor's chain hash is `prev_hash`."""
    data = f"citebound-audit-chain-v1\n{prev_hash}\n{record_hash}".encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ChainRow:
    """One stored record with its position and chain columns."""

    seq: int
    record: AuditRecord
    prev_hash: str | None
    chain_hash: str | None


@dataclass(frozen=True)
class ChainProblem:
    """One break of the chain, at the record it names."""

    kind: ProblemKind
    seq: int
    request_id: str
    message: str


@dataclass(frozen=True)
class ChainReport:
    """What `verify` found: record count, newest chain hash, problems in store order."""

    count: int
    head: str
    problems: tuple[ChainProblem, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def anchor(self) -> str:
        """`N:HEAD`, to keep elsewhere and pass to `verify --anchor` later."""
        return f"{self.count}:{self.head}"

    def flag(self, record: AuditRecord) -> str | None:
        """The first problem at `record` ("EDITED: ..."), or None when it verifies."""
        for p in self.problems:
            if p.request_id == record.request_id and p.kind != "TRUNCATED":
                return f"{p.kind}: {p.message}"
        return None


def parse_anchor(anchor: str) -> tuple[int, str]:
    """`N:sha256:HEX` -> (N, "sha256:HEX"); ValueError when it is not one."""
    count, _, head = anchor.partition(":")
    if not count.isdigit() or not head.startswith("sha256:") or len(head) != len(GENESIS):
        raise ValueError(f"--anchor {anchor!r} is not N:sha256:HEX as `audit verify` prints it")
    return int(count), head


def _name(row: ChainRow) -> str:
    run = f" run {row.record.run_id}" if row.record.run_id else ""
    return f"record {row.record.request_id}{run} (seq {row.seq})"


def verify(
    rows: Sequence[ChainRow], *, issued: int | None = None, anchor: str | None = None
) -> ChainReport:
    """Check `rows` (in seq order) link up; `issued` is the highest seq the store ever gave
    out (SQLite's AUTOINCREMENT counter), `anchor` a kept `N:HEAD`.

    Raises:
        ValueError: `anchor` is malformed.
    """
    problems: list[ChainProblem] = []
    by_hash = {r.chain_hash: r for r in rows if r.chain_hash}

    def add(kind: ProblemKind, row: ChainRow, message: str) -> None:
        problems.append(ChainProblem(kind, row.seq, row.record.request_id, message))

    expected = GENESIS
    for i, row in enumerate(rows):
        if not row.record.hash_ok():
            add("EDITED", row, f"{_name(row)} does not match its record_hash: it was edited")
        elif row.chain_hash is None or row.prev_hash is None:
            add("UNCHAINED", row, f"{_name(row)} has no chain hash: not appended by citebound")
        elif row.chain_hash != link(row.prev_hash, row.record.record_hash):
            add(
                "UNCHAINED" if i == len(rows) - 1 else "EDITED",
                row,
                f"{_name(row)}: its chain hash does not cover its content (edited and "
                "re-hashed, or written by hand)",
            )
        if row.prev_hash is not None and row.prev_hash != expected:
            other = by_hash.get(row.prev_hash)
            if other is not None and other is not row:
                add(
                    "REORDERED",
                    row,
                    f"{_name(row)} follows {_name(other)} in the chain but is stored after "
                    f"{_name(rows[i - 1]) if i else 'nothing'}: records were reordered",
                )
            elif i == 0:
                add("MISSING", row, f"records before {_name(row)}, the oldest, were deleted")
            else:
                add(
                    "MISSING",
                    row,
                    f"a record between {_name(rows[i - 1])} and {_name(row)} was deleted",
                )
        expected = row.chain_hash or expected
    head = (rows[-1].chain_hash or GENESIS) if rows else GENESIS
    if rows and issued is not None and issued > rows[-1].seq:
        add(
            "TRUNCATED",
            rows[-1],
            f"records after {_name(rows[-1])} (seq {rows[-1].seq + 1}..{issued}) were deleted",
        )
    if anchor is not None:
        count, anchored = parse_anchor(anchor)
        if count > len(rows):
            last = rows[-1] if rows else None
            problems.append(
                ChainProblem(
                    "TRUNCATED",
                    last.seq if last else 0,
                    last.record.request_id if last else "",
                    f"the anchor names record {count} but the store holds {len(rows)}: "
                    "the newest records were deleted",
                )
            )
        elif count and rows[count - 1].chain_hash != anchored:
            add(
                "ANCHOR",
                rows[count - 1],
                f"{_name(rows[count - 1])} is not the anchored record {count}: the history "
                "up to it was rewritten",
            )
    return ChainReport(count=len(rows), head=head, problems=tuple(problems))
