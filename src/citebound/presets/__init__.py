"""The shipped policy presets: one TOML file each in this package, and the one registry of
their names (what each is, which is the default) that `citebound.policy`, the CLI's help and
`citebound config show` read. Kept free of imports so the CLI can name presets before it loads
pydantic."""

from __future__ import annotations

__all__ = ["DEFAULT_PRESET", "PRESETS", "PRESET_SUMMARIES"]

# The one registry of shipped presets: what each is (`citebound config show`, errors, docs).
# Order matters where a bundle or record is matched to a preset by `policy_version` alone
# (strict-v1 and seed-v1 both carry R2_POLICY_V1): the default comes first.
PRESET_SUMMARIES: dict[str, str] = {
    "strict-v1": "The default, because its fitted gate refuses fewer answerable questions "
    "than seed-v1's while refusing at least 98% of out-of-corpus ones (SQuAD 2.0 dev tune "
    "split). seed-v1's caps, prompt and refusal string; a top similarity of 0.76 "
    "suffices alone and 0.55-0.70 passes when the best row holds the question's key terms, "
    "names or rare words (seed-v1 keeps the literal 0.76 gate).",
    "seed-v1": "Seeds 000/001 literally: top similarity 0.76 with nothing passing below it, "
    "their caps (6 chunks, 2 per document, no extra slot) and refusal string; strict-v1's "
    "values where the seeds freeze none. Refuses more answerable questions than strict-v1.",
    "hybridrag": "The hybrid-RAG contract: S anchors, its two refusal strings, its gate "
    "(min_score 0.20, 2 "
    "rows) and low confidence instead of failing on weak support.",
    "superprompt-v1": "The SuperPrompt contract (System_MD, Prompt_MD, S_CTX_MD, "
    "Attachments_MD) with seed-v1's plain 0.76 gate and strict-v1's other values.",
}
PRESETS: tuple[str, ...] = tuple(PRESET_SUMMARIES)
# The preset used when none is named (Config.policy, load_policy(), the CLI): fitted values,
# chosen because they refuse fewer answerable questions than the frozen 0.76 gate while refusing
# at least 98% of out-of-corpus ones on the tune data (presets/strict-v1.toml [gate]).
DEFAULT_PRESET = "strict-v1"
