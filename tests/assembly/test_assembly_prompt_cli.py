"""`citebound assemble-prompt`: packs from a file or stdin, camelCase JSON out, exact user bytes,
one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from citebound import assemble_prompt
from citebound.cli import main

PACKS = [
    {
        "id": "p1",
        "docId": "corpus:abc123",
        "headingPath": ["Chapter 3", "Section 3.2"],
        "score": 0.8,
        "spans": [{"chunkId": "p1", "text": "Torque is 40 Nm.", "start": 0, "end": 16}],
    },
    {
        "id": "p2",
        "docId": "corpus:xyz",
        "score": 0.3,
        "spans": [{"chunkId": "p2", "text": "Use a calibrated wrench.", "start": 0, "end": 24}],
    },
]


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_packs_file_gives_the_library_result(tmp_path: Path) -> None:
    path = tmp_path / "packs.json"
    path.write_text(json.dumps(PACKS), "utf-8")
    code, out, _ = _run(
        "assemble-prompt", "What torque?", "--packs", str(path), "--headroom-tokens", "100000"
    )
    assert code == 0
    expected = assemble_prompt("What torque?", PACKS, headroom_tokens=100000)
    assert json.loads(out) == expected.model_dump(mode="json", by_alias=True)


def test_stdin_footnote_and_user_only(tmp_path: Path) -> None:
    code, out, _ = _run(
        "assemble-prompt",
        "What torque?",
        "--packs",
        "-",
        "--citation-style",
        "footnote",
        "--user-only",
        stdin=json.dumps({"packs": PACKS}),
    )
    assert code == 0
    assert out == assemble_prompt("What torque?", PACKS, citation_style="footnote").prompt.user
    assert "[^1]\nDoc: corpus:abc123\nPath: Chapter 3 > Section 3.2\n---\n" in out


def test_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "x"}]', "utf-8")
    code, _, err = _run("assemble-prompt", "Q", "--packs", str(bad))
    assert code == 2 and err.startswith("citebound: packs[0].") and err.count("\n") == 1
    code, _, err = _run("assemble-prompt", "Q", "--packs", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read packs" in err
    code, _, err = _run("assemble-prompt", "Q", "--store", str(tmp_path / "nowhere"))
    assert code == 2 and "no store at" in err
    code, _, err = _run(
        "assemble-prompt", "Q", "--packs", "-", "--headroom-tokens", "-1", stdin="[]"
    )
    assert code == 2
