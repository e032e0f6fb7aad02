"""`citebound ask`, `citebound config show` and `citebound demo` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citebound.cli import main
from citebound.contracts import PublicResponse
from citebound.store.sqlite import SqliteStore

TORQUE = "What torque should the HP-220 impeller bolts be tightened to?"


def _ask(store: SqliteStore, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "audit.sqlite")}
    result = CliRunner().invoke(
        main, ["ask", *args, "--store", str(store.root), "--collection", "demo"], env=env
    )
    return result.exit_code, result.stdout, result.stderr


def test_ask_answers_with_sources(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE)
    assert code == 0
    assert out.startswith("Answer:\n") and "\nSources:\n- [C" in out
    assert "45 Nm" in out and "score" not in out
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--show-scores")
    assert code == 0 and "(score: " in out


def test_ask_json_is_a_public_response(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--json")
    resp = PublicResponse.model_validate_json(out)
    assert code == 0 and resp.status.value == "OK" and resp.citations
    assert "chunk_text" not in out and "similarity" not in out


def test_ask_refusal_exits_3(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = _ask(
        demo_store, tmp_path, "Who is the CEO of the company that operates this plant?"
    )
    assert code == 3
    assert "NO_EVIDENCE: The provided evidence does not contain sufficient information" in out
    assert err.startswith("citebound: NO_EVIDENCE: GATE_")
    assert "refused before any LLM call (top similarity 0." in err and "min_score 0." in err


def test_ask_explains_a_low_coverage_refusal(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Similar enough (the HP-220 words), but the best chunk, headings included, holds 4 of its
    # 17 key terms (hp, 220, impeller, bolt).
    monkeypatch.chdir(tmp_path)
    question = (
        "HP-220 impeller bolts: which lunar rover gearbox telescope spectrometer galaxy nebula"
        " quasar comet orbit asteroid planet moon?"
    )
    code, out, err = _ask(demo_store, tmp_path, question)
    assert code == 3 and "NO_EVIDENCE: The provided evidence" in out
    assert err.startswith("citebound: NO_EVIDENCE: GATE_LOW_COVERAGE")
    assert "holds 24% of the question's key words" in err


@pytest.mark.integration
def test_ask_says_when_the_model_refused_evidence_that_passed_the_gate(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citebound.testing import ScriptedLLMServer

    monkeypatch.chdir(tmp_path)
    with ScriptedLLMServer() as server:
        server.reply(
            "NO_EVIDENCE: The provided evidence does not contain sufficient information to "
            "answer this question."
        )
        code, _, err = _ask(
            demo_store, tmp_path, TORQUE, "--provider", "openai", "--model", "m",
            "--base-url", server.base_url,
        )  # fmt: skip
    assert code == 3
    assert err.startswith("citebound: NO_EVIDENCE: the model refused: the ")
    assert "evidence chunk(s) that passed the gate" in err


def test_ask_failure_exits_2(
    demo_store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"CITEBOUND_AUDIT_SQLITE_PATH": str(tmp_path / "a.sqlite")}
    result = CliRunner().invoke(
        main, ["ask", TORQUE, "--store", str(demo_store_dir), "--collection", "nope"], env=env
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("citebound: FAILED: STORE_UNAVAILABLE: no collection 'nope'")
    assert "ingest" in result.stderr


def test_ask_step_prints_every_stage(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--step")
    assert code == 0
    labels = [
        "[A0 preprocess]",
        "[A2 shape]",
        "[retrieve]",
        "[rerank]",
        "[A3 gate]",
        "[assemble]",
        "[A4 condense]",
        "[A5 format]",
        "[build prompt]",
        "[execute]",
        "[validate]",
        "[record]",
        "[package]",
    ]
    positions = [out.index(label) for label in labels]
    assert positions == sorted(positions)
    assert "dropped " in out and "sha256=" in out


def test_ask_questions_batch(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps({"_id": "q1", "text": TORQUE})
        + "\n\n"
        + json.dumps({"_id": "q2", "text": "Who is the CEO of this plant?"})
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile), "--out", str(out))
    assert code == 0
    rows = [PublicResponse.model_validate_json(line) for line in out.read_text().splitlines()]
    assert [(r.request_id, r.status.value) for r in rows] == [("q1", "OK"), ("q2", "NO_EVIDENCE")]
    assert "2 questions" in err


def test_ask_questions_rerun_gets_a_new_run_and_repeated_ids_are_refused(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"_id": "q1", "text": TORQUE}) + "\n")
    runs = []
    for _ in range(2):  # the same ids into the same audit file: each run is its own
        out = tmp_path / "out.jsonl"
        code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile), "--out", str(out))
        assert code == 0
        assert PublicResponse.model_validate_json(out.read_text()).status.value == "OK"
        runs.append(err.split("(run ")[1].split(")")[0])
    assert runs[0] != runs[1]
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile), "--run-id", "nightly-1")
    assert code == 0 and "(run nightly-1)" in err
    qfile.write_text(qfile.read_text() + json.dumps({"_id": "q1", "text": "again"}) + "\n")
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile))
    assert code == 2 and "q.jsonl:2" in err and "repeats line 1" in err


def test_ask_filters_restrict_the_evidence(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--json", "--equipment-id", "HP-220")
    resp = PublicResponse.model_validate_json(out)
    assert code == 0 and resp.citations
    assert {c.equipment_id for c in resp.citations} == {"HP-220"}
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--equipment-id", "CX-9")
    assert code == 3  # the torque is only in HP-220 documents
    code, _, err = _ask(demo_store, tmp_path, TORQUE, "--date-to", "2024-13-45")
    assert code == 2 and "2024-13-45" in err


def test_ask_usage_errors(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _ask(demo_store, tmp_path)
    assert code == 2 and "QUESTION or --questions" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": 1}\n')
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(bad))
    assert code == 2 and "bad.jsonl:1" in err


def test_a_question_that_is_not_valid_unicode_is_refused_before_any_work(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bytes that are not UTF-8 on the command line reach Python as lone surrogates ('\udcff'),
    # and a JSON escape without its pair ("\ud800") too: no store can keep them, and the
    # tokenizer raised a TypeError (a traceback) before this check.
    monkeypatch.chdir(tmp_path)
    code, _, err = _ask(demo_store, tmp_path, "What torque\udcff?")
    assert code == 2 and "not valid Unicode" in err and "Traceback" not in err
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"_id": "q1", "text": "What torque\\ud800?"}\n')
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile))
    assert code == 2 and "q.jsonl:1" in err and "not valid Unicode" in err
    qfile.write_bytes(b'{"_id": "q1", "text": "What torque\xff?"}\n')
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile))
    assert code == 2 and "not UTF-8" in err
    assert not (tmp_path / "audit.sqlite").exists()
    code, _, _ = _ask(demo_store, tmp_path, TORQUE)  # the control: same store, answered
    assert code == 0 and (tmp_path / "audit.sqlite").exists()


def test_a_question_holding_nul_is_refused_before_any_work(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL cannot store U+0000: refused up front, for every store, nothing audited.
    monkeypatch.chdir(tmp_path)
    code, _, err = _ask(demo_store, tmp_path, "What torque\x00?")
    assert code == 2 and "U+0000" in err
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"_id": "q1", "text": TORQUE}) + "\n")
    qfile.write_text(qfile.read_text() + json.dumps({"_id": "q2", "text": "What\x00?"}) + "\n")
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile))
    assert code == 2 and "q.jsonl:2" in err and "U+0000" in err
    qfile.write_text(json.dumps({"_id": "q\x001", "text": TORQUE}) + "\n")
    code, _, err = _ask(demo_store, tmp_path, "--questions", str(qfile))
    assert code == 2 and "q.jsonl:1" in err and "U+0000" in err
    assert not (tmp_path / "audit.sqlite").exists()
    code, _, _ = _ask(demo_store, tmp_path, TORQUE)  # the control: same store, answered
    assert code == 0 and (tmp_path / "audit.sqlite").exists()


def test_config_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "citebound.toml").write_text('policy = "hybridrag"\n')
    result = CliRunner().invoke(main, ["config", "show"], env={"CITEBOUND_PROVIDER": "ollama"})
    data = json.loads(result.stdout)
    assert result.exit_code == 0
    assert (
        data["config"]["policy"] == "hybridrag" and data["config"]["provider"]["name"] == "ollama"
    )
    assert data["policy_version"] == "HYBRIDRAG_POLICY_V1"
    assert data["config_fingerprint"].startswith("sha256:") and data[
        "policy_fingerprint"
    ].startswith("sha256:")
    # Which preset is in force, which is the default and why, what the others are (#32).
    assert (data["policy_name"], data["default_policy"]) == ("hybridrag", "strict-v1")
    assert list(data["presets"]) == ["strict-v1", "seed-v1", "hybridrag", "superprompt-v1"]
    assert data["presets"]["strict-v1"].startswith("The default, because")
    assert "literally" in data["presets"]["seed-v1"]
    (tmp_path / "citebound.toml").write_text("[limits]\nn2_rerank_top_k = 0\n")
    result = CliRunner().invoke(main, ["config", "show"], env={})
    assert result.exit_code == 2 and "limits.n2_rerank_top_k" in result.stderr


@pytest.mark.slow
def test_demo_runs_offline_and_meets_every_expectation(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--keep", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert "11/11 questions behaved as expected" in result.stdout
    assert "11 audit records" in result.stdout


def test_audit_replay_reads_evidence_from_the_store(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    audit = tmp_path / "audit.sqlite"
    result = CliRunner().invoke(
        main,
        ["ask", TORQUE, "--store", str(demo_store.root), "--collection", "demo", "--json"],
        env={"CITEBOUND_AUDIT_SQLITE_PATH": str(audit)},
    )
    rid = json.loads(result.stdout)["request_id"]
    replayed = CliRunner().invoke(
        main, ["audit", "replay", rid, "--audit", str(audit), "--store", str(demo_store.root)]
    )
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.stdout)["replayable"] is True and "same verdict" in replayed.stderr
    no_store = CliRunner().invoke(
        main, ["audit", "replay", rid, "--audit", str(audit), "--store", str(tmp_path / "none")]
    )
    assert no_store.exit_code == 2 and "not available" in no_store.stderr


def test_sources_carry_the_file_path_and_step_shows_titles_and_scores(
    demo_store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE)
    assert code == 0
    sources = out.split("Sources:\n", 1)[1].splitlines()
    assert sources and all(line.rstrip().endswith(".md)") for line in sources if line.strip())
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--json")
    citations = json.loads(out)["citations"]
    assert citations and all(c["source_path"].startswith("docs/") for c in citations)
    code, out, _ = _ask(demo_store, tmp_path, TORQUE, "--step")
    kept = [line for line in out.splitlines() if line.startswith("    kept    ")]
    assert kept and all(" sim 0." in line or " sim 1." in line for line in kept)
    assert any("Incident Report IR-2024-031 HP-220 Impeller Loosening > " in line for line in kept)


@pytest.mark.slow
def test_demo_never_prints_a_path_it_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    real_mkdtemp = __import__("tempfile").mkdtemp

    def mkdtemp(*args: object, **kwargs: object) -> str:
        made.append(real_mkdtemp(dir=tmp_path, prefix="citebound-demo-"))
        return made[-1]

    monkeypatch.setattr("tempfile.mkdtemp", mkdtemp)
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert made and not Path(made[0]).exists()
    assert made[0] not in result.output
    assert "11 audit records written to the temporary store, now deleted" in result.stdout
