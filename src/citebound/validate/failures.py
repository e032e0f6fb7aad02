"""Where a rejected answer failed: the sentences R5 rejected, by index and reason code.

A regeneration prompt names these (prompt/regenerate.py), and the audit keeps them per model
call. They carry only what the caller may know of a rejection anyway (the reason codes) plus a
sentence number: never the sentence text, a support score or an evidence span.

Order (deterministic): sentence-level findings by sentence index, then by the validator's
reason-code priority (`validator.PRIORITY`); then the answer-level codes (rules that concern
the whole answer, e.g. META_COMMENTARY, or a code no single sentence explains), in priority
order. Only codes the verdict actually failed on are kept: a rule the policy tolerates
(`new_facts = "flag"`, coverage above `min_attribution_coverage`) names nothing.

    >>> from citebound.policy import load_policy
    >>> from citebound.validate import EvidenceView, validate_view
    >>> view = EvidenceView.single("C0", "Torque the bolts to 40 Nm.")
    >>> text = "Torque the bolts to 40 Nm [C0]. Mars has two moons."
    >>> result = validate_view(view, text, load_policy("strict-v1"))
    >>> [(f.index, f.reason_code) for f in failed_sentences(view, text, result, load_policy())]
    [(1, 'UNCITED_FACTUAL_STATEMENT')]
"""

from __future__ import annotations

from citebound.contracts.enums import AssemblyStatus, ReasonCode, ValidationStatus
from citebound.contracts.execution import SentenceFailure, ValidationResult
from citebound.policy import Policy
from citebound.validate.analysis import analyse
from citebound.validate.validator import PRIORITY
from citebound.validate.view import EvidenceView

_RANK = {code.value: i for i, code in enumerate(PRIORITY)}


def failed_sentences(
    view: EvidenceView, text: str, result: ValidationResult, policy: Policy
) -> list[SentenceFailure]:
    """The located reasons `result` rejected `text` for; [] when it passed or the model text
    was never judged (a failed call, a failed assembly)."""
    if result.validation_status is ValidationStatus.PASSED:
        return []
    if not text.strip() or view.assembly_status is not AssemblyStatus.OK:
        return [SentenceFailure(index=None, reason_code=c) for c in result.reason_codes]
    whole_answer = [SentenceFailure(index=None, reason_code=c) for c in result.reason_codes]
    if ReasonCode.INTERNAL_ERROR.value in result.reason_codes:
        return whole_answer  # the analysis itself failed; do not run it again
    failed = set(result.reason_codes)
    refusals = (policy.refusal.model_text, policy.refusal.no_evidence_text)
    try:
        analysis = analyse(view, text, policy, refusals)
    except Exception:  # fail closed like the validator: never a traceback from the audit
        return whole_answer
    located = sorted(
        {(i, code.value) for i, code in analysis.sentence_codes if code.value in failed},
        key=lambda f: (f[0], _RANK.get(f[1], len(_RANK)), f[1]),
    )
    explained = {code for _, code in located}
    whole = [c for c in result.reason_codes if c not in explained]
    return [SentenceFailure(index=i, reason_code=c) for i, c in located] + [
        SentenceFailure(index=None, reason_code=c) for c in whole
    ]
