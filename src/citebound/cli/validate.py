"""`citebound validate`: run R5 on an answer against the bundle printed by `citebound assemble`.

Exit codes: 0 PASSED, 2 FAILED (or unusable input), with the ValidationResult JSON on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from pydantic import ValidationError

from citebound.cli._common import EXIT_FAILED, EXIT_OK, fail, to_json
from citebound.contracts.assembly import AnswerBundle
from citebound.errors import ConfigError
from citebound.policy import DEFAULT_PRESET, PRESETS, Policy, load_policy
from citebound.validate import validate_text


def load_bundle(path: Path) -> AnswerBundle:
    """Read `{"answer_bundle": {...}, "prompt": {...}}` (assemble output) or a bare bundle."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        fail(f"cannot read bundle {path}: {err}")
    if isinstance(data, dict) and "answer_bundle" in data:
        data = data["answer_bundle"]
    try:
        return AnswerBundle.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        fail(f"{path} is not an AnswerBundle: field '{where}': {first['msg']}")


def policy_for(bundle: AnswerBundle, name: str | None) -> Policy:
    """`--policy` if given, else the preset the bundle was assembled with (by fingerprint,
    else by version: the first of `PRESETS` with it, the default for R2_POLICY_V1), else the
    default preset."""
    try:
        if name:
            return load_policy(name)
        if bundle.trace is not None:
            for preset in PRESETS:
                policy = load_policy(preset)
                if policy.fingerprint == bundle.trace.policy_fingerprint:
                    return policy
            for preset in PRESETS:
                policy = load_policy(preset)
                if policy.policy_version == bundle.trace.policy_version:
                    return policy
        return load_policy(DEFAULT_PRESET)
    except ConfigError as err:
        fail(str(err))


@click.command("validate")
@click.option(
    "--bundle",
    "bundle_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="JSON printed by `citebound assemble` (or a bare AnswerBundle).",
)
@click.option("--answer", default=None, help="The model answer text.")
@click.option(
    "--answer-file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Read the answer from this file (bytes kept as is).",
)
@click.option(
    "--policy",
    "policy_name",
    default=None,
    help="Preset name or TOML file. Default: the preset the bundle was assembled with.",
)
def validate_command(
    bundle_path: Path, answer: str | None, answer_file: Path | None, policy_name: str | None
) -> None:
    """Validate an answer (R5): exit 0 PASSED, 2 FAILED; prints the ValidationResult JSON."""
    if (answer is None) == (answer_file is None):
        fail("give exactly one of --answer TEXT or --answer-file F")
    if answer_file is not None:
        try:
            # newline="" keeps CR/LF exactly: the validator sees the bytes the model produced.
            with answer_file.open(encoding="utf-8", newline="") as fh:
                answer = fh.read()
        except (OSError, UnicodeDecodeError) as err:
            fail(f"cannot read answer file {answer_file}: {err}")
    assert answer is not None
    bundle = load_bundle(bundle_path)
    result = validate_text(bundle, answer, policy_for(bundle, policy_name))
    click.echo(to_json(result))
    if result.validation_status != "PASSED":
        click.echo(f"citebound: FAILED {result.failure_reason}: {result.message}", err=True)
        raise SystemExit(EXIT_FAILED)
    raise SystemExit(EXIT_OK)


COMMANDS = [validate_command]
