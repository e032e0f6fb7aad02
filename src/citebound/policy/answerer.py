"""Policy section `[answerer]`: the knobs of the built-in `extractive` answerer
(llm/extractive, docs/answers.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from citebound.contracts.base import Contract

# The kinds of answer a factoid question can expect (llm/extractive/answer_type.py).
AnswerKind = Literal["person", "place", "name", "date", "number"]


class AnswererPolicy(Contract):
    """Knobs of the built-in `extractive` answerer (llm/extractive, docs/answers.md).

    The defaults are the values fitted for strict-v1; each preset states them in `[answerer]`
    with what they were fitted on. A sentence's score is the IDF-weighted share of the
    question's terms it holds (+ `context_weight` for terms in its heading path) + type cues.
    """

    floor: float = Field(
        default=0.2,
        ge=0,
        lt=1,
        description="A sentence is a candidate only when its share of the question's terms is "
        "strictly above this.",
    )
    min_matches: int = Field(
        default=2,
        ge=1,
        description="Distinct question terms a sentence must share (a question of two content "
        "terms needs one).",
    )
    max_sentences: int = Field(
        default=3, ge=1, description="Most sentences outside lists and procedures."
    )
    max_sentence_chars: int = Field(
        default=600, ge=1, description="Longer 'sentences' (tables, run-on text) are never quoted."
    )
    relative_floor: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="A further sentence needs this share of the lead's score and a question "
        "term the answer lacks.",
    )
    rank_tolerance: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="The lead comes from the best-ranked evidence whose best sentence scores at "
        "least this share of the best sentence overall.",
    )
    max_steps: int = Field(
        default=8, ge=0, description="Most list items or procedure steps quoted after the lead."
    )
    context_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Weight of question terms found in the sentence's document title / heading "
        "path (never enough alone).",
    )
    type_bonus: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Added when the sentence has what the question type asks for (definition, "
        "number, reason).",
    )
    missing_number_penalty: float = Field(
        default=0.1, ge=0, le=1, description="Taken from a quantity answer without a digit."
    )
    step_bonus: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Added to items/steps for list and procedure questions.",
    )
    phrase_bonus: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Added per pair of neighbouring question terms the sentence also has side "
        "by side ('battle of Hastings').",
    )
    tie_share: float = Field(
        default=0.9,
        ge=0,
        le=2,
        description="A further sentence scoring at least this share of the lead's score is a "
        "near-tie the scores cannot separate: it joins even without a new question term "
        "(above 1: never).",
    )
    max_tied: int = Field(
        default=3, ge=1, description="Most sentences in an answer made of near-ties."
    )
    redundant_share: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="A further sentence whose content terms are at least this share already "
        "quoted says nothing new and is left out.",
    )
    intro_penalty: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Taken from a list intro ('... the following:') for other question types.",
    )
    prefer_defining: bool = Field(
        default=True,
        description="For a 'What is X?' question, the lead is a sentence that defines X (names "
        "X before its defining verb or colon) when there is one.",
    )
    subject_qualifiers: int = Field(
        default=2,
        ge=0,
        description="A defining sentence's subject phrase may hold this many terms besides X "
        "('`Svc::ComStub` is', 'A queued component has'); more is a phrase mentioning X.",
    )
    anaphora_penalty: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Taken from a sentence that starts by pointing back at an earlier one "
        "('In this case, this component ...', 'It ...', 'These ...').",
    )
    max_subject_terms: int = Field(
        default=3,
        ge=0,
        description="'What is / does X?' asks about a named subject when X has at most this "
        "many content terms ('the ActiveRateGroup component'); longer ones ('the name of the "
        "river that ...') are questions in definition form. Scopes the anaphora and intro "
        "rules.",
    )
    weak_lead: bool = Field(
        default=True,
        description="The lead is never a sentence that points back at an earlier one, nor (for "
        "questions other than list, procedure and open ones) a list intro ending in ':', when "
        "another sentence qualifies.",
    )
    prefer_overview: bool = Field(
        default=True,
        description="For a 'What is X?' question, a sentence defining X in an introduction / "
        "overview section leads before one defining it elsewhere (design notes, tables).",
    )
    max_code_lines: int = Field(
        default=3,
        ge=0,
        description="A 'How do I ...?' answer quotes a fenced code block of at most this many "
        "non-blank lines, verbatim in backticks, right after the sentence introducing it "
        "(0: code is never quoted).",
    )
    manner_follower: bool = Field(
        default=True,
        description="'How does X <verb> ...?': the sentence after a one-sentence lead joins "
        "when it goes on about the same subject and says how ('It does so by ...').",
    )
    names_stated: bool = Field(
        default=True,
        description="Refuse a question none of whose names (capitalised words) "
        "any evidence states ('... a PostgreSQL server?'; llm/extractive/names.py).",
    )
    compared_stated: bool = Field(
        default=True,
        description="Refuse a comparison ('..., Bella or Al Jamila?', 'Are A and B both ...?') "
        "when no evidence states either compared name in full (llm/extractive/compared.py).",
    )
    transposed_min_letters: int = Field(
        default=5,
        ge=2,
        description="A name with two neighbouring letters swapped counts as stated from this "
        "many letters, never for a word with a digit ('CD4071' is not 'CD4017').",
    )
    answer_types: tuple[AnswerKind, ...] = Field(
        default=("person", "place", "name", "date", "number"),
        description="The expected kinds of answer (from a who / when / where / how-many "
        "question's wh-word and head noun) the answer-type rules apply to (empty: off; "
        "llm/extractive/answer_type.py).",
    )
    answer_type_bonus: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Added to a sentence holding the kind of answer the question expects (a "
        "name, date or number the question does not hold).",
    )
    answer_type_penalty: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Taken from a sentence lacking the kind of answer the question expects.",
    )
    answer_type_firm: tuple[AnswerKind, ...] = Field(
        default=("date", "number"),
        description="Kinds whose test is firm (digits, month names): a lead without one takes "
        "the sentence right after it in its evidence when that one holds one, and a lead "
        "holding one takes no near-ties (it answers).",
    )
    neighbours: Literal["none", "next", "both"] = Field(
        default="next",
        description="A sentence right next to the lead in its evidence ('next': the one after, "
        "'both': also the one before) joins when it holds a question term the lead lacks, "
        "even with fewer shared terms than a candidate needs (it continues the lead).",
    )
    code_scope: bool = Field(
        default=True,
        description="A question naming an item by its code ('the HP-220 pump') is answered "
        "only by a sentence whose text or section names that code and that holds a term of "
        "what is asked of it (text/codes.py).",
    )
    asked_scope: bool = Field(
        default=True,
        description="A question whose kind of answer is known (who / when / where / how many "
        "/ what colour ...) is answered only by a sentence that holds what it asks (the verb "
        "of 'Who designed X?', the noun of 'What is the mass of X?') or a filler of that kind "
        "(a name, a date, a number, a colour) (llm/extractive/asked.py).",
    )
    # The one default that is not strict-v1's value: on, every bare `ExtractiveProvider()`
    # (unit tests, offline studies) would load the MiniLM encoder. The presets turn it on.
    semantic: bool = Field(
        default=False,
        description="Add the question-sentence similarity of the packaged MiniLM encoder to "
        "sentence choice (llm/extractive/semantic.py); off when the encoder is unavailable.",
    )
    semantic_weight: float = Field(
        default=0.0,
        ge=0,
        le=2,
        description="Taken from an embedded sentence's score per unit of cosine similarity "
        "below the closest sentence's (0: no ranking term; the encoder then runs only when "
        "no sentence qualifies on its terms).",
    )
    semantic_qualify: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="A prose sentence whose similarity to the question is at least this "
        "qualifies even when it shares too few question terms (1: only a perfect match).",
    )
    semantic_max_sentences: int = Field(
        default=20,
        ge=0,
        description="Candidate sentences embedded per question at most, in evidence (rank) "
        "order: bounds the signal's cost.",
    )
