"""`extractive` provider: the built-in, deterministic, offline answerer (no model, no network).

It is the honest baseline every LLM is compared with. It reads the `AnswerBundle` carried in
the request, scores every evidence sentence against the question, and emits the best ones
*verbatim*, each followed by its own citation marker::

    The pump runs at 40 bar. [C0] Relief valves open at 45 bar. [C1]

Rules that keep every answer valid for the post-generation validator:

* a sentence is quoted exactly as `candidates` cut it from one evidence text and cites that
  evidence, so every number, date and code in it appears in the evidence it cites;
* the answer is re-split with the validator's splitter and must give back exactly the emitted
  pieces, or the exact refusal is returned instead (fail closed);
* when no sentence qualifies, the policy's exact `refusal.model_text` is returned.

Roles: `candidates` (what may be quoted), `scoring` / `answer_type` (how well it answers),
`choice` (lead, near-ties), `commands` (blocks), `joining` (markers); this module ranks and
assembles; the tuning values are the policy's `[answerer]` section (`AnswererPolicy`).
"""

from __future__ import annotations

from pydantic import ValidationError

from citebound.contracts.assembly import AnswerBundle
from citebound.contracts.base import sha256_hex
from citebound.contracts.enums import ReasonCode
from citebound.contracts.provider import ProviderReply, ProviderRequest
from citebound.errors import ConfigError, ProviderError
from citebound.policy import AnswererPolicy
from citebound.text.codes import scope as code_scope
from citebound.text.codes import section_codes
from citebound.text.markup import question_type
from citebound.text.terms import framing_terms, key_terms, terms
from citebound.validate.analysis import is_factual

from . import asked as asking
from . import commands, semantic
from .answer_type import answered, asked, carries, completion, shape_bonus
from .candidates import Candidate, candidates
from .choice import join_near_ties, lead_pool, pick_lead
from .compared import names_held
from .following import (
    antecedent,
    follower,
    negating_intro,
    neighbours,
    steps,
    with_negating_intros,
)
from .joining import cited, count_tokens, join, marker_pattern
from .scoring import (
    answers_type,
    asks_manner,
    continues,
    names_again,
    names_subject,
    opposite_side,
    pairs,
    says_how,
    type_bonus,
    weights,
)

# The answerer's version: a new one whenever its answers change (what each changed:
# docs/answers.md "Answerer versions").
EXTRACTIVE_MODEL = "extractive-v14"


class ExtractiveProvider:
    """Deterministic extractive answerer; see the module docstring for its rules.

    Args:
        settings: The policy's `[answerer]` values (default: `AnswererPolicy()`, strict-v1's).
        **overrides: Single values replaced on top of `settings` (`floor=0.3`), validated.

    Example:
        >>> p = ExtractiveProvider(floor=0.25)
        >>> (p.name, p.model, p.settings.floor)
        ('extractive', 'extractive-v13', 0.25)
    """

    def __init__(
        self,
        settings: AnswererPolicy | None = None,
        *,
        signal: semantic.SemanticSignal | None = None,
        **overrides: object,
    ) -> None:
        # Question-sentence similarity (`semantic`), used only when the policy turns it on.
        self.semantic = signal or semantic.SemanticSignal()
        base = settings or AnswererPolicy()
        try:
            self.settings = AnswererPolicy.model_validate({**base.model_dump(), **overrides})
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "answerer"
            raise ConfigError(
                f"invalid extractive setting '{field}': {first['msg']}", field=field
            ) from None

    @property
    def name(self) -> str:
        return "extractive"

    @property
    def model(self) -> str:
        return EXTRACTIVE_MODEL

    def complete(self, request: ProviderRequest) -> ProviderReply:
        bundle = request.answer_bundle
        if bundle is None:
            raise ProviderError(
                "the extractive provider answers from the AnswerBundle; none was given",
                reason_code=ReasonCode.LLM_CONFIG,
                provider=self.name,
            )
        text = self.answer(
            bundle,
            request.refusal_text,
            extra_terms=request.followup_terms,
            max_tokens=request.max_output_tokens,
        )
        # The exact refusal is never "too long": only an answer can exceed the cap.
        over = text != request.refusal_text and count_tokens(text) > request.max_output_tokens
        return ProviderReply(
            text=text,
            finish_reason="length" if over else "stop",
            response_id="extractive-" + sha256_hex(request.prompt_sha256 + "\n" + text)[:24],
            reported_model=self.model,
        )

    def answer(
        self,
        bundle: AnswerBundle,
        refusal_text: str,
        *,
        extra_terms: str = "",
        max_tokens: int | None = None,
    ) -> str:
        """The answer text for `bundle`, or exactly `refusal_text`.

        `extra_terms` (a follow-up rewrite's carried entities) count as question terms, but a
        sentence must still share a term with the question itself ("How many litres does it
        hold?" must not quote every GB-7 line). With `max_tokens`, trailing sentences are left
        out while the answer is longer (one sentence is never cut: the caller sees the length).
        """
        chosen = self.choose(bundle, refusal_text, extra_terms=extra_terms)
        if not any(is_factual(c.text) for c in chosen):
            # Only labels ("Returns:", "Run some commands:") whose items could not be quoted:
            # such an answer states nothing, and the validator fails it as EMPTY_ANSWER.
            chosen = []
        # A whole row the splitter cuts ("...; Sep. 21, 2014") is cited piece by piece.
        pieces = [cited(c.parts or (c.text,), c.anchor) for c in chosen]
        # A quoted command goes on a line of its own, under the sentence introducing it.
        breaks = frozenset(i for i, c in enumerate(chosen) if c.kind == "code")
        pattern = marker_pattern(bundle.citation_style)
        units = commands.groups(chosen)  # a block is dropped with its introduction
        while max_tokens is not None and len(units) > 1:
            if count_tokens(join(pieces, pattern, breaks) or "") <= max_tokens:
                break
            del pieces[units.pop()[0] :]
        return (join(pieces, pattern, breaks) if pieces else None) or refusal_text

    def rank(
        self,
        bundle: AnswerBundle,
        refusal_text: str,
        *,
        extra_terms: str = "",
        blocks: commands.Blocks | None = None,
        sims: dict[semantic.Key, float] | None = None,
    ) -> tuple[list[tuple[float, Candidate]], list[Candidate]]:
        """Qualifying sentences with their scores, best first, and all candidates (`blocks`:
        the quotable command blocks, when the caller has them; `sims`: the sentences'
        similarities to the question, when computed already)."""
        p = self.settings
        own = terms(bundle.user_question)
        question = own | terms(extra_terms)
        if not question:
            return [], []
        if not names_held(bundle, bundle.user_question, p):
            return [], []  # the evidence is about something else than what is named
        qtype = question_type(bundle.user_question)
        named = names_subject(qtype, bundle.user_question, p.max_subject_terms)
        phrases = pairs(bundle.user_question)
        atype = asked(bundle.user_question, p)
        cands = candidates(bundle, question, refusal_text, p)
        if blocks is None:
            blocks = commands.blocks(bundle, refusal_text, question, p)
        weight = weights(question, cands)
        total = sum(weight.values())
        if sims is None:
            # The ranking term needs the similarities up front; without it (no weight) they
            # only matter when no sentence qualifies on its terms (the fallback below).
            ranked = p.semantic and p.semantic_weight > 0
            sims = self.semantic.similarities(bundle.user_question, cands, p) if ranked else {}
        # A one-letter term ("F" of "F´", "L" of "L and P") counts when matched but is never
        # required. A two-term question ("What is a topology in F´?") needs one match, a longer
        # one `min_matches`, so one shared word ("painted") does not answer "Who painted the
        # Mona Lisa?". Carried terms (a follow-up's entities) rank sentences but never lower
        # the bar: it counts the question's own terms, as for the same question asked alone.
        core = frozenset(t for t in question if len(t) > 1 or t.isdigit()) or question
        # Framing words ("In what country", "How long", "typically") count when held, and go
        # unrequired only for a sentence holding the kind they ask for (answer_type.py):
        # "Normandy is in France." answers "In what country is Normandy located?"; "Inspect the
        # pump seals ..." does not answer "Which country typically manufactures the pump?".
        bar = key_terms(bundle.user_question) or own or core
        framed = framing_terms(bundle.user_question) - bar
        needed = min(p.min_matches, max(1, len(bar) + len(framed) - 1))
        needed_kind = min(p.min_matches, max(1, len(bar) - 1))
        # Only a sentence about the HP-220 saying what is asked of it answers (text/codes.py).
        coded = code_scope(bundle.user_question) if p.code_scope else None
        sections = section_codes(bundle.selected_evidence) if coded is not None else []
        # Only a sentence holding what is asked, or a filler of its kind, answers (asked.py).
        wanted = asking.scope(bundle.user_question) if p.asked_scope else None
        scored: list[tuple[float, Candidate]] = []
        for c in cands:
            if (
                c.lower
                or opposite_side(bundle.user_question, c)
                or (c.negated_by >= 0 and negating_intro(c, cands) is None)
            ):
                # A lower-case item ("- a torque wrench") is quoted only under the intro that
                # announces its list (`steps`): alone it neither leads nor joins.
                continue
            # The sentence introducing a command block ("... the `raspberrypi` platform can be
            # used:" + "$ fprime-util generate raspberrypi") is quoted with it, so the block's
            # question terms count as its own; no other sentence of its line (commands.py).
            block = commands.block_of(c, blocks)
            shared = c.shared | block.shared if block is not None else c.shared
            # The section a sentence sits in says what it is about ("CmdSequencer" in the
            # heading): such terms count toward a match, at reduced weight, never alone.
            context = c.context - shared
            # A framing word counts next to a required one, never alone ("Each country sends
            # ..." does not answer "In what country is the abbey?").
            held = len(shared & bar) + len(context & bar)
            extra = len((shared | context) & framed) if held else 0
            matched = held + extra
            kind = bool(framed) and carries(atype, c.text, bundle.user_question)
            need, asked_terms = (
                (needed_kind, len(bar) + extra) if kind else (needed, len(bar) + len(framed))
            )
            # A paraphrase close enough in meaning qualifies with too few shared terms.
            close = semantic.close(sims, c, p)
            if not close and (
                not shared or matched < need or min(1.0, matched / asked_terms) <= p.floor
            ):
                continue
            if own and not (shared & own) and not close:
                continue  # only carried terms matched
            if coded is not None and not coded.admits(
                c.text, sections[c.ev], shared | context | c.context
            ):
                continue  # another item's sentence, or one that says something else of it
            if wanted is not None and not asking.admitted(wanted, c, cands, bundle.user_question):
                continue  # about the item, silent on what is asked of it
            coverage = (
                # Summed in term order: equal term sets give equal scores, bit for bit, whatever
                # the set's iteration order (ties are then broken by the stated rules).
                sum(weight[t] for t in sorted(shared))
                + p.context_weight * sum(weight[t] for t in sorted(context))
            ) / total
            said = pairs(c.text) | pairs(block.text) if block is not None else pairs(c.text)
            phrase = p.phrase_bonus * len(phrases & said)
            # "Who ruled Cyprus?": a sentence with a name the question lacks may answer it.
            shape = shape_bonus(atype, c, bundle.user_question, p)
            meaning = semantic.bonus(sims, c, p)
            score = coverage + type_bonus(qtype, c, p, named=named) + phrase + shape + meaning
            scored.append((score, c))
        if not scored and not sims and p.semantic:
            # Nothing qualifies on shared terms: a paraphrase close in meaning may (semantic.py;
            # {} when the encoder is unavailable: the refusal stands).
            fallback = self.semantic.similarities(bundle.user_question, cands, p)
            if fallback:
                return self.rank(
                    bundle, refusal_text, extra_terms=extra_terms, blocks=blocks, sims=fallback
                )
        # Tie-break everywhere: score desc, then evidence order (rank), line, sentence order.
        scored.sort(key=lambda sc: (-sc[0], sc[1].ev, sc[1].line, sc[1].pos))
        return scored, cands

    def choose(
        self, bundle: AnswerBundle, refusal_text: str, *, extra_terms: str = ""
    ) -> list[Candidate]:
        """The sentences to quote, in answer order (empty: refuse)."""
        p = self.settings
        question = terms(bundle.user_question) | terms(extra_terms)
        blocks = commands.blocks(bundle, refusal_text, question, p)
        scored, cands = self.rank(bundle, refusal_text, extra_terms=extra_terms, blocks=blocks)
        qtype = question_type(bundle.user_question)
        named = names_subject(qtype, bundle.user_question, p.max_subject_terms)
        if not scored:
            return []
        pool, defined = lead_pool(scored, cands, blocks, bundle.user_question, qtype, named, p)
        if not pool:
            return []
        lead_score, lead = pick_lead(pool, blocks, p)
        chosen = [lead]
        block = commands.block_of(lead, blocks)
        if block is not None:
            # "How do I ...?" answered by the sentence that introduces a command and the
            # command itself: nothing else is needed.
            return with_negating_intros([lead, block], cands)
        # The sentence right after the lead (same unit, else the next unit's first), looked up
        # once for the rules below.
        after = follower(lead, cands)
        if after is not None and after.lower:
            after = None  # a lower-case item goes only with its list's intro (`steps`)
        # "X downlinks information. This information includes:" + items: the intro right
        # after the lead announces the list that answers, so it and its items come along;
        # ... or it opens the next line ("... will return a status of that send." / "These
        # responses are ... described in the following table:" + rows).
        # An open question ("What gas does the boiler plant emit?") takes the next line's
        # intro only when it names something asked that the lead does not: "The permit sets
        # the following emission limits:" under "The plant emits CO2." would pad the answer.
        intro = (
            after
            if after is not None
            and after.intro
            and (
                after.line == lead.line
                or qtype in ("procedure", "list")
                or (qtype == "other" and bool(after.shared - lead.shared))
            )
            else None
        )
        listed = steps(intro, cands, p.max_steps) if intro is not None else []
        if intro is not None and listed:
            # An intro with nothing quotable after it (its items filtered, or a command
            # block: that goes only with a lead that introduces it) would only announce.
            chosen.append(intro)
            chosen.extend(listed)
        elif intro is None and (qtype in ("procedure", "list") or lead.intro):
            chosen.extend(steps(lead, cands, p.max_steps))
        # A one-line definition ("`BufferManager` is a passive ISF component.") names the
        # kind; the sentence right after it that goes on about the subject ("It allocates a
        # set of fixed-sized buffers ...") says what it does.
        if (
            len(chosen) == 1
            and defined
            and after is not None
            and not after.intro  # "It does the following:" only announces
            and continues(after, lead)
        ):
            chosen.append(after)
        # Any other lead: the next sentence that names again what it spoke of ("... processes
        # events from other components." / "The events are put in packets ...") goes on with
        # it; near-ties are still weighed after it (`again`).
        again = (
            len(chosen) == 1
            and after is not None
            and (names_again(after, lead) or (continues(after) and bool(after.shared)))
        )
        if (
            len(chosen) == 1
            and p.manner_follower
            and after is not None
            and says_how(after)
            and asks_manner(bundle.user_question)
        ):
            chosen.append(after)
        if len(chosen) == 1 and qtype == "comparison":
            # A comparison's lead names both sides; the sentences after it in its paragraph
            # that speak of them describe each ("An absolute time starts with an `A` ... A
            # relative command ... runs relative to the previous command").
            chosen.extend(
                [
                    c
                    for c in cands
                    if c.ev == lead.ev and c.line == lead.line and c.pos > lead.pos and c.shared
                ][: p.max_sentences - 1]
            )
        # "Stop when answered": a lead without the name / date / number the question asks for
        # takes the sentence next to it that holds one (answer_type.py); nothing else joins.
        kind = asked(bundle.user_question, p)
        if len(chosen) == 1:
            found = completion(kind, lead, after, bundle.user_question, p)
            chosen.extend([found] if found is not None else [])
        single = len(chosen) == 1
        if single and again and after is not None:
            chosen.append(after)
        elif single and p.neighbours != "none":
            chosen.extend(neighbours(lead, after, cands, p))
        if single:
            covered = set().union(*(c.shared for c in chosen))
            # Near-ties: the lexical score cannot tell which of them answers, unless the lead
            # already has what the question type asks for (a number, a defining phrase), or the
            # date / number the question expects (answer_type.py `answered`).
            ties = not (answers_type(qtype, lead) or answered(kind, lead, bundle.user_question, p))
            if qtype == "comparison":
                # The lead's own document goes on to describe each side it compares ("An
                # absolute time starts with an A ... A relative command ... runs relative to
                # the previous command"): its sentences are taken before other documents'.
                scored = sorted(scored, key=lambda sc: sc[1].ev != lead.ev)
            join_near_ties(chosen, covered, scored, cands, lead_score, ties, qtype, named, p)
        # A later sentence of a list item leans on the item's first sentence, which names what
        # the item is about ("`-j JOBS`: set the number of parallel jobs ..." / "Defaults to 1,
        # ..."): it comes along, when it speaks of the question.
        firsts = {(c.ev, c.line): c for c in cands if c.kind == "item" and c.pos == 0}
        for c in list(chosen):
            head = firsts.get((c.ev, c.line)) if c.kind == "item" and c.pos else None
            if head is not None and head.shared and not head.lower and head not in chosen:
                chosen.append(head)
        # A lead that points back at the sentence before it in its paragraph ("It allows a
        # more convenient way of using mutex, ...", "This only happens when ...") names
        # neither what "it" is nor what "this" is: that sentence comes along (`antecedent`).
        before = antecedent(lead, cands)
        if before is not None and before not in chosen:
            chosen.append(before)
        chosen = with_negating_intros(chosen, cands)
        # The lead's evidence first (its sentences in reading order), then the others by rank.
        chosen.sort(key=lambda c: (c.ev != lead.ev, c.ev, c.line, c.pos))
        return chosen
