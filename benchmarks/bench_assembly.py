"""Assembly speed: validate + select + build prompt for bundles of 10, 50 and 200 rows.

Baseline, measured in the same run: the naive approach most RAG code uses (parse the bundle with
json.loads and join the top chunk texts into an f-string prompt). The ratio shows what the
contracts, checks, sanitization, token budgets and hashing cost on top of that.

Run: `python benchmarks/bench_assembly.py` (one core is enough; target: median < 1 ms at 50 rows).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import measure

from citebound.assemble import assemble_and_build
from citebound.policy import load_policy


def make_bundle_json(n: int) -> str:
    rows = [
        {
            "chunk_id": f"c{i:05d}",
            "knowledge_id": f"doc-{i % 13}",
            "rank": i,
            "similarity": round(0.95 - i * 0.001, 6),
            "chunk_text": f"Procedure {i}: close valve V{i}, wait {i % 7 + 1} minutes, then torque bolt B{i} to {20 + i % 30} Nm. "
            f"Record reading R{i} in the maintenance log and check seal S{i} for wear.",
            "knowledge_type_effective": "manual",
            "equipment_id": "EQ-1",
            "source": {
                "document": f"Manual {i % 13}",
                "heading_path": ["Maintenance", f"Step {i}"],
                "page": i % 40 + 1,
            },
        }
        for i in range(n)
    ]
    return json.dumps(
        {
            "request_id": "bench",
            "user_question": "How is bolt B3 torqued?",
            "retrieval_status": "SUCCESS",
            "index_version": "idx",
            "embedding_model": "m",
            "top_k": n,
            "results": rows,
        }
    )


def naive(raw: str) -> str:
    data = json.loads(raw)
    context = "\n\n".join(r["chunk_text"] for r in data["results"][:6])
    return f"Answer from the context.\n\n{context}\n\nQuestion: {data['user_question']}"


def main() -> None:
    policy = load_policy("strict-v1")
    print(f"{'rows':>5} {'citebound median':>17} {'p99':>8} {'naive median':>13} {'ratio':>6}")
    for n in (10, 50, 200):
        raw = make_bundle_json(n)
        assert assemble_and_build(raw, policy).prompt.build_status.value == "OK"
        ours = measure(lambda raw=raw: assemble_and_build(raw, policy))
        base = measure(lambda raw=raw: naive(raw))
        print(
            f"{n:>5} {ours.median_ms:>14.3f} ms {ours.p99_ms:>5.3f} ms {base.median_ms:>10.4f} ms {ours.median_ms / base.median_ms:>6.0f}x"
        )


if __name__ == "__main__":
    main()
