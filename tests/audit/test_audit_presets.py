"""Replay and `citebound validate` find the preset a record or bundle was made with by its
fingerprint: strict-v1 records made before seed-v1 existed still resolve to strict-v1, and
seed-v1 (same policy_version R2_POLICY_V1) is never mistaken for it."""

from __future__ import annotations

from audit_samples import POLICY, record_for

from citebound.audit import replay
from citebound.cli.audit import _policy_for
from citebound.cli.validate import policy_for
from citebound.policy import load_policy
from citebound.testing.bundles import make_answer_bundle


def test_a_strict_v1_record_replays_under_strict_v1_with_its_fingerprint() -> None:
    assert POLICY.name == "strict-v1"
    record = record_for("ok", store_evidence_text=True)
    policy = _policy_for(record, None)
    assert policy.name == "strict-v1"
    report = replay(record, policy)
    assert report.replayable and report.policy_fingerprint_matches
    assert report.verdict_changed is False


def test_a_seed_v1_record_resolves_to_seed_v1() -> None:
    seed = load_policy("seed-v1")
    assert seed.policy_version == POLICY.policy_version  # the fingerprint tells them apart
    record = record_for("ok").model_copy(update={"policy_fingerprint": seed.fingerprint})
    assert _policy_for(record, None).name == "seed-v1"


def test_validate_picks_the_bundles_preset_and_the_default_for_a_bare_version() -> None:
    seed = load_policy("seed-v1")
    assert policy_for(make_answer_bundle(["x"], policy=seed), None).name == "seed-v1"
    assert policy_for(make_answer_bundle(["x"], policy=POLICY), None).name == "strict-v1"
    # A bundle assembled under an older strict-v1 (its fingerprint matches no preset now):
    # R2_POLICY_V1 is the default's version first, as before seed-v1 existed.
    old = make_answer_bundle(["x"], policy=POLICY)
    assert old.trace is not None
    old = old.model_copy(
        update={"trace": old.trace.model_copy(update={"policy_fingerprint": "sha256:" + "0" * 64})}
    )
    assert policy_for(old, None).name == "strict-v1"
