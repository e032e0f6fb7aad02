"""extractive-v9 rules: no padding from a list intro, intros only with their items, reference
entries are not steps, a named subject the evidence never states is refused, and Markdown's
escaped numbering, single-mark emphasis and two-column bare tables read as a reader sees them."""

from __future__ import annotations

from llm_helpers import fast_policy, make_bundle

from citebound.cli.demo import padded_sentences
from citebound.llm import ExtractiveProvider
from citebound.llm.extractive.names import names
from citebound.text.markup import render_units

REFUSAL = fast_policy().refusal.model_text

BOILER = (
    "The boiler plant emits carbon dioxide from its two gas-fired burners.\n"
    "The permit sets the following limits:\n"
    "- Nitrogen oxides: 30 mg per cubic metre.\n"
    "- Dust: 5 mg per cubic metre."
)


def test_a_next_line_intro_does_not_pad_an_open_question() -> None:
    question = "What gas does the boiler plant emit?"
    answer = ExtractiveProvider().answer(make_bundle([BOILER], question), REFUSAL)
    assert answer == ("The boiler plant emits carbon dioxide from its two gas-fired burners. [C0]")
    assert padded_sentences(question, answer) == []


def test_an_intro_without_its_items_is_no_neighbour() -> None:
    # "limits" makes a quantity question: the intro holds the asked term, but alone it only
    # announces (the items are not quoted for this type), so it is not added as a neighbour.
    question = "What limits does the boiler plant permit set?"
    answer = ExtractiveProvider().answer(make_bundle([BOILER], question), REFUSAL)
    assert "following limits" not in answer


def test_a_list_intro_joins_only_with_its_items() -> None:
    texts = [
        "The get port passes a status telling whether the value is valid.",
        "The get port has the following return values:\n\n"
        "Value | Description\n----- | -----\n"
        "VALID | The value was read from storage.\n"
        "INVALID | The value could not be read from storage.",
    ]
    answer = ExtractiveProvider().answer(
        make_bundle(texts, "What status values can the get port return?"), REFUSAL
    )
    assert "VALID: The value was read from storage. [C1]" in answer
    assert "INVALID: The value could not be read from storage. [C1]" in answer
    # Without its rows the intro only announces: it never joins alone.
    bare = ["The get port passes a status telling whether the value is valid.", texts[1][:47]]
    alone = ExtractiveProvider().answer(
        make_bundle(bare, "What status values can the get port return?"), REFUSAL
    )
    assert "following return values" not in alone


def test_reference_entries_after_the_lead_are_not_its_steps() -> None:
    texts = [
        "- `check`: Builds, then runs unit tests. The `--all` flag runs all unit tests.\n"
        "- `coverage`: Similar to check, but generates coverage reports.\n"
        "- `new`: Creates a new component."
    ]
    answer = ExtractiveProvider().answer(
        make_bundle(texts, "How do I run all unit tests?"), REFUSAL
    )
    assert "coverage" not in answer and "Creates a new component" not in answer


def test_a_named_subject_no_evidence_states_is_refused() -> None:
    texts = ["0.0.0.0:50000: The default communication interface port of the ground system."]
    provider = ExtractiveProvider()
    ooc = "What is the default port of a PostgreSQL server?"
    assert names(ooc) == {"postgresql"}
    assert provider.answer(make_bundle(texts, ooc), REFUSAL) == REFUSAL
    # The same words without the foreign name are answered ...
    asked = "What is the default port of the ground system?"
    assert provider.answer(make_bundle(texts, asked), REFUSAL) != REFUSAL
    # ... and so is a name the evidence states with a typo'd or inflected ending.
    texts = ["The origins of the Raoulii family lie in Normandy."]
    typo = "What were the origins of the Raouliii family?"
    assert provider.answer(make_bundle(texts, typo), REFUSAL) != REFUSAL
    assert names("What is F´?") == frozenset()  # one letter is not a name


def test_markdown_numbering_emphasis_and_bare_tables_render_as_text() -> None:
    units = render_units(
        [
            "1\\. Instantiate an instance of the `TlmPacket` class.",
            "*TesterBase* is the base class of _C_; `*args*`, snake_case_name and 2 * 3 * 4 stay.",
            "Value | Description",
            "----- | -----",
            "PARAM_VALID | Parameter was retrieved",
        ]
    )
    assert [(u.kind, u.text) for u in units] == [
        ("item", "Instantiate an instance of the `TlmPacket` class."),
        (
            "prose",
            "TesterBase is the base class of C; `*args*`, snake_case_name and 2 * 3 * 4 stay.",
        ),
        ("row", "PARAM_VALID: Parameter was retrieved"),
    ]


def test_a_comparison_takes_the_lead_paragraphs_description_of_each_side() -> None:
    texts = [
        "Times can be specified in an absolute or relative time format. An absolute time starts "
        "with an A and specifies a calendar time. A relative time starts with an R and runs "
        "relative to the previous command.",
        "The header holds an absolute time and a relative time flag.",
    ]
    question = "What is the difference between absolute and relative times in a sequence?"
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert "specifies a calendar time. [C0]" in answer
    assert "relative to the previous command. [C0]" in answer
    assert "[C1]" not in answer


def test_a_drawback_question_is_not_answered_by_an_advantage() -> None:
    texts = [
        "Passive rate groups have the advantage that a slow cycle makes the rate group slip.",
        "Active rate groups run on a thread, so there is some jitter before the rate group runs.",
    ]
    question = "What is the disadvantage of active rate groups?"
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert "advantage" not in answer and "jitter" in answer


def test_the_next_sentence_naming_the_same_thing_goes_on_with_the_lead() -> None:
    texts = [
        "The logger component processes events from other components. The events are put in "
        "packets and sent to the ground interface. Filtering is done by severity."
    ]
    question = "What does the logger component do with events?"
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    assert answer.startswith(
        "The logger component processes events from other components. [C0] The events are put "
        "in packets and sent to the ground interface. [C0]"
    )


def test_an_it_sentence_that_holds_a_question_term_goes_on_with_the_lead() -> None:
    texts = [
        "The rate group is a passive component that drives a set of member components. It "
        "contains a synchronous cycle port that drives all the operations. It tracks time."
    ]
    answer = ExtractiveProvider().answer(make_bundle(texts, "What drives the rate group?"), REFUSAL)
    assert answer == (
        "The rate group is a passive component that drives a set of member components. [C0] It "
        "contains a synchronous cycle port that drives all the operations. [C0]"
    )


def test_an_acronym_is_stated_by_its_spelled_out_words_and_a_leading_name_counts() -> None:
    provider = ExtractiveProvider()
    texts = ["The American Automobile Association said 20 percent of gas stations ran dry."]
    question = "According to the AAA, what percent of gas stations ran dry?"
    assert provider.answer(make_bundle(texts, question), REFUSAL) != REFUSAL
    assert provider.answer(make_bundle(texts, "What does the ACLU say about gas?"), REFUSAL) == (
        REFUSAL
    )
    # A capitalised first word is a sentence start alone, part of a name with another one.
    assert names("Describe the pump.") == frozenset()
    texts = ["Harold Wilson supported Israel during the six day war."]
    question = "Harold WInston supported which country during the six day war?"
    assert provider.answer(make_bundle(texts, question), REFUSAL) != REFUSAL


def test_shell_comments_in_a_block_annotate_its_commands() -> None:
    lines = [
        "Upload the software to the board with:",
        "```sh",
        "# For ARM 64-bit hardware",
        "scp -r build-artifacts/aarch64-linux/app user@board:deployment",
        "# For ARM 32-bit hardware",
        "scp -r build-artifacts/arm-hf-linux/app user@board:deployment",
        "```",
    ]
    code = [u for u in render_units(lines, max_code_lines=2) if u.kind == "code"]
    assert len(code) == 1 and "`# For ARM 64-bit hardware`" in code[0].text
    # Counted in commands: two commands are over a one-command budget.
    assert [u for u in render_units(lines, max_code_lines=1) if u.kind == "code"] == []


def test_a_list_items_later_sentences_are_about_what_its_first_names() -> None:
    texts = [
        "The build tool takes these flags:\n"
        "- `-j JOBS`: set the number of parallel jobs while compiling. Defaults to 1, but more "
        "is faster.\n"
        "`tool build -j 10` will compile a project with 10 simultaneous jobs.\n"
        "- `-v`: print verbose output."
    ]
    question = "How many parallel compile jobs does the build tool use by default?"
    answer = ExtractiveProvider().answer(make_bundle(texts, question), REFUSAL)
    # The default is stated in the item's second sentence (it qualifies with the terms of the
    # item's first, as context); the first comes along to say what it is about.
    assert answer == (
        "`-j JOBS`: set the number of parallel jobs while compiling. [C0] Defaults to 1, but "
        "more is faster. [C0] `tool build -j 10` will compile a project with 10 simultaneous "
        "jobs. [C0]"
    )


def test_the_names_rule_is_a_policy_switch() -> None:
    texts = ["0.0.0.0:50000: The default communication interface port of the ground system."]
    bundle = make_bundle(texts, "What is the default port of a PostgreSQL server?")
    assert ExtractiveProvider().answer(bundle, REFUSAL) == REFUSAL
    assert ExtractiveProvider(names_stated=False).answer(bundle, REFUSAL) != REFUSAL


SEAL = "The following tools are needed to replace the seal:\n- a torque wrench\n- a 13 mm socket"


def test_lower_case_items_are_quoted_under_their_intro() -> None:
    # "- a torque wrench" starts in lower case as an item, not as a fragment of a cut sentence:
    # the intro is quoted with every item, never alone.
    answer = ExtractiveProvider().answer(
        make_bundle([SEAL], "What tools are needed to replace the seal?"), REFUSAL
    )
    assert answer == (
        "The following tools are needed to replace the seal: [C0]\n"
        "a torque wrench [C0]\na 13 mm socket [C0]"
    )
    loose = "To replace the seal you need these tools:\n\n- torque wrench\n- 13 mm socket\n- seal puller"
    answer = ExtractiveProvider().answer(
        make_bundle([loose], "Which tools do I need to replace the seal?"), REFUSAL
    )
    for item in ("torque wrench [C0]", "13 mm socket [C0]", "seal puller [C0]"):
        assert item in answer


def test_an_intro_whose_items_are_not_quotable_does_not_answer_alone() -> None:
    cut = SEAL.split("\n")[0] + "\n- a torque wrench for the\n- a socket of the"  # cut items
    answer = ExtractiveProvider().answer(
        make_bundle([cut], "What tools are needed to replace the seal?"), REFUSAL
    )
    assert answer == REFUSAL


PROPERTIES = (
    "The properties defining commands are shown below:\n\n"
    "1. opcode: a numerical value uniquely representing the command. This opcode is "
    "automatically adjusted to be relative to a component's base id, and thus will not "
    "collide with other commands defined by other components.\n"
    "2. mnemonic: a text value uniquely representing the command."
)


def test_a_lower_case_item_never_leads_an_answer() -> None:
    # F´ set 5 h08: "opcode: a numerical value ..." is an entry of a reference list; quoted
    # as the lead it would start the answer mid-sentence (a fragment to the reader).
    answer = ExtractiveProvider().answer(
        make_bundle([PROPERTIES], "How is a command opcode kept unique across components?"),
        REFUSAL,
    )
    assert not answer.startswith("opcode")
    assert "base id" in answer
