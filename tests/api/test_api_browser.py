"""The web page in a real headless Chromium (Debian's /usr/bin/chromium via Playwright).

Screenshots go to test-artifacts/ (gitignored) so a person can check how the page looks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from api_helpers import KEYS, PLANT_QUESTION, UNANSWERABLE, auth, non_finite_copy
from api_live import LiveServer

from citebound.config import Config, load_config
from citebound.pipeline.table import BY_NAME, STAGES, buttons

CHROMIUM = Path(os.environ.get("CITEBOUND_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium)",
    ),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def server(api_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    audit = tmp_path_factory.mktemp("browser-audit") / "audit.sqlite"
    config = load_config(
        env={},
        overrides={
            "store": str(api_store),
            "collection": "demo",
            "provider.name": "extractive",
            "audit.sqlite_path": str(audit),
        },
    )
    with LiveServer(config) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: object, server: LiveServer) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(server.url + "/")
    pg.wait_for_selector("#collection option[value='demo']", state="attached")
    yield pg
    context.close()
    assert not errors, f"browser errors: {errors}"


def shot(pg: object, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def ask(pg: object, question: str) -> None:
    pg.fill("#question", question)  # type: ignore[attr-defined]
    pg.click("#ask-btn")  # type: ignore[attr-defined]
    # The answer streams in; the request is complete when the page is no longer busy.
    pg.wait_for_selector("body:not(.busy) #result:not([hidden])")  # type: ignore[attr-defined]


def test_answerable_question_shows_citations(page: object) -> None:
    pg = page
    ask(pg, PLANT_QUESTION)
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]
    assert "45 Nm" in pg.inner_text("#answer")  # type: ignore[attr-defined]
    chips = pg.locator("#answer .chip")  # type: ignore[attr-defined]
    sources = pg.locator("#sources .source")  # type: ignore[attr-defined]
    assert chips.count() >= 1 and sources.count() >= 1
    assert chips.first.inner_text() == sources.first.get_attribute("data-anchor")
    assert "confidence" in sources.first.inner_text()
    assert "Confidence:" in pg.inner_text("#confidence")  # type: ignore[attr-defined]
    shot(pg, "answer")


def test_anchors_read_in_citation_order(page: object) -> None:
    """#15: chips numbered C0, C1, ... in the order the answer cites them, sources listed in
    that order (the model cited the evidence out of rank order for this question)."""
    pg = page
    ask(pg, "How do I replace the HP-220 mechanical seal?")
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]
    chips = [c.inner_text() for c in pg.locator("#answer .chip").all()]  # type: ignore[attr-defined]
    first = list(dict.fromkeys(chips))
    assert len(first) > 1 and first == [f"C{i}" for i in range(len(first))]
    sources = [
        s.get_attribute("data-anchor")
        for s in pg.locator("#sources .source").all()  # type: ignore[attr-defined]
    ]
    assert sources == first
    shot(pg, "anchors-in-order")


def test_unanswerable_question_shows_the_refusal(page: object, server: LiveServer) -> None:
    pg = page
    ask(pg, UNANSWERABLE)
    policy = server.app.state.runtime.ctx.policy
    assert pg.inner_text("#status-badge") == "Refused"  # type: ignore[attr-defined]
    refusal = pg.inner_text(".refusal-text")  # type: ignore[attr-defined]
    assert refusal in {policy.refusal.no_evidence_text, policy.refusal.model_text}
    assert pg.locator("#answer .chip").count() == 0  # type: ignore[attr-defined]
    assert pg.is_visible("#sources-empty")  # type: ignore[attr-defined]
    shot(pg, "refusal")


def test_step_through_the_eight_seed_buttons(page: object) -> None:
    """Seed 002 manual mode: 8 buttons in the seed's order, each running its grouped stages
    and showing what changed in the SuperPrompt."""
    pg = page
    pg.click("#mode-step")  # type: ignore[attr-defined]
    pg.fill("#question", PLANT_QUESTION)  # type: ignore[attr-defined]
    pg.click("#ask-btn")  # type: ignore[attr-defined]
    pg.wait_for_selector(".stage-btn.next[data-button='A0_PreProcessing']")  # type: ignore[attr-defined]
    names = [
        b.get_attribute("data-button")
        for b in pg.locator(".stage-btn").all()  # type: ignore[attr-defined]
    ]
    assert names == [name for name, _ in buttons()]
    assert pg.is_hidden("#result")  # type: ignore[attr-defined]
    seed_buttons = buttons()
    for i, (name, stages) in enumerate(seed_buttons):
        button = f".stage-btn[data-button='{name}']"
        later = seed_buttons[i + 1 :]
        if later:  # steps after the next one cannot be pressed yet
            assert pg.is_disabled(f".stage-btn[data-button='{later[-1][0]}']")  # type: ignore[attr-defined]
        pg.click(button)  # type: ignore[attr-defined]
        pg.wait_for_selector(f"{button}.done")  # type: ignore[attr-defined]
        assert pg.inner_text(".seed-title") == f"{i + 1} · {name}"  # type: ignore[attr-defined]
        title = pg.inner_text("#stage-view h3 >> nth=1")  # type: ignore[attr-defined]
        assert title.endswith(BY_NAME[stages[-1]].label)
        view = pg.inner_text("#stage-view")  # type: ignore[attr-defined]
        changed = [
            d.get_attribute("data-field")
            for d in pg.locator(".seed-change").all()  # type: ignore[attr-defined]
        ]
        if name == "A0_PreProcessing":
            assert {"stage", "body", "prompt_ready"} <= set(changed)
        if name == "Retrieval":
            assert "views_by_stage" in changed
            assert pg.locator("#stage-view table.kept tbody tr").count() > 0  # type: ignore[attr-defined]
            shot(pg, "step-retrieval")
        if name == "A4_Condenser":
            assert pg.locator(".seed-parts .part").count() == 2  # type: ignore[attr-defined]
            pg.click(".seed-parts .part[data-part='assembled']")  # type: ignore[attr-defined]
            view = pg.inner_text("#stage-view")  # type: ignore[attr-defined]
            assert "dropped" in view.lower() and "DROP_" in view
            shot(pg, "step-assembled")
        if name == "Prompt_Builder":
            assert pg.locator(".seed-parts .part").count() == len(stages)  # type: ignore[attr-defined]
            assert "stage" not in changed  # the Prompt_Builder keeps `a5`
            assert "PASSED" in view
            shot(pg, "step-validated")
    pg.wait_for_selector("#result:not([hidden])")  # type: ignore[attr-defined]
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]
    assert "All stages ran" in pg.inner_text("#pipeline-hint")  # type: ignore[attr-defined]
    # A finished step can be reopened.
    pg.click(".stage-btn[data-button='A3_NLI_Gate']")  # type: ignore[attr-defined]
    assert "A3_NLI_Gate" in pg.inner_text(".seed-title")  # type: ignore[attr-defined]
    assert "A3 gate" in pg.inner_text("#stage-view")  # type: ignore[attr-defined]
    shot(pg, "step-done")


def test_open_a_source_shows_the_highlighted_span(page: object) -> None:
    pg = page
    ask(pg, PLANT_QUESTION)
    pg.click("#sources .source >> nth=0")  # type: ignore[attr-defined]
    pg.wait_for_selector("#doc-viewer:not([hidden]) mark#highlight")  # type: ignore[attr-defined]
    mark = pg.locator("mark#highlight")  # type: ignore[attr-defined]
    assert mark.is_visible() and len(mark.inner_text().strip()) > 20
    assert pg.inner_text("#doc-title")  # type: ignore[attr-defined]
    box = mark.bounding_box()
    assert box is not None and 0 <= box["y"] < 900, "the highlight is scrolled into view"
    shot(pg, "document")
    pg.click("#doc-close")  # type: ignore[attr-defined]
    assert pg.is_hidden("#doc-viewer")  # type: ignore[attr-defined]
    # A citation chip in the answer opens the same viewer.
    pg.click("#answer .chip >> nth=0")  # type: ignore[attr-defined]
    pg.wait_for_selector("#doc-viewer:not([hidden]) mark#highlight")  # type: ignore[attr-defined]


def test_feedback_is_stored(page: object, server: LiveServer) -> None:
    pg = page
    ask(pg, PLANT_QUESTION)
    meta = pg.inner_text("#answer-meta")  # type: ignore[attr-defined]
    request_id = meta.split()[1]
    pg.fill("#feedback-comment", "torque value matches the procedure")  # type: ignore[attr-defined]
    pg.click("#feedback button[data-verdict='correct']")  # type: ignore[attr-defined]
    pg.wait_for_selector("#feedback-status.ok")  # type: ignore[attr-defined]
    assert "recorded as correct" in pg.inner_text("#feedback-status")  # type: ignore[attr-defined]
    assert pg.is_disabled("#feedback button[data-verdict='incorrect']")  # type: ignore[attr-defined]
    stored = server.app.state.runtime.feedback_sink().feedback(request_id)
    assert [(f.verdict, f.comment) for f in stored] == [
        ("correct", "torque value matches the procedure")
    ]
    shot(pg, "feedback")


def test_page_asks_for_a_key_when_the_server_needs_one(
    browser: object, api_store: Path, tmp_path: Path
) -> None:
    from citebound.api import hash_key

    config = load_config(
        env={},
        overrides={
            "store": str(api_store),
            "collection": "demo",
            "audit.sqlite_path": str(tmp_path / "audit.sqlite"),
            "api.keys": [{"name": "ui", "sha256": hash_key("ui-key"), "collections": ["demo"]}],
        },
    )
    with LiveServer(config) as srv:
        context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
        pg = context.new_page()
        pg.goto(srv.url + "/")
        pg.wait_for_selector("#key-form:not([hidden])")
        pg.wait_for_selector("#error:not([hidden])")  # after /v1/collections said 401
        assert "needs an API key" in pg.inner_text("#error")
        pg.fill("#api-key", "ui-key")
        pg.click("#key-form button")
        pg.wait_for_selector("#collection option[value='demo']", state="attached")
        assert pg.locator("#collection option").count() == 1  # only the key's collection
        ask(pg, PLANT_QUESTION)
        assert pg.inner_text("#status-badge") == "Answered"
        shot(pg, "api-key")
        context.close()


OIL = "What oil grade does the GB-7 gearbox use?"
HOLD = "How many litres of it does it hold?"


def test_two_turn_conversation_stays_on_screen(page: object) -> None:
    pg = page
    ask(pg, OIL)
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]
    assert "ISO VG 220" in pg.inner_text("#answer")  # type: ignore[attr-defined]
    ask(pg, HOLD)
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]
    assert "18 litres" in pg.inner_text("#answer")  # type: ignore[attr-defined]
    assert pg.inner_text("#current-question") == HOLD  # type: ignore[attr-defined]
    # The first turn stays on screen, rendered, with its own citation chips.
    turns = pg.locator("#turns .turn")  # type: ignore[attr-defined]
    assert turns.count() == 1
    assert OIL in turns.first.inner_text() and "ISO VG 220" in turns.first.inner_text()
    assert pg.locator("#answer .chip").count() >= 1  # type: ignore[attr-defined]
    # Every turn's chips open the source viewer.
    pg.click("#turns .turn-answer .chip >> nth=0")  # type: ignore[attr-defined]
    pg.wait_for_selector("#doc-viewer:not([hidden]) mark#highlight")  # type: ignore[attr-defined]
    assert "GB-7" in pg.inner_text("#doc-title")  # type: ignore[attr-defined]
    pg.click("#doc-close")  # type: ignore[attr-defined]
    pg.click("#answer .chip >> nth=0")  # type: ignore[attr-defined]
    pg.wait_for_selector("#doc-viewer:not([hidden]) mark#highlight")  # type: ignore[attr-defined]
    pg.click("#doc-close")  # type: ignore[attr-defined]
    # The pipeline panel explains the last turn (auto mode, read-only).
    assert pg.locator(".stage-btn.done").count() == len(STAGES)  # type: ignore[attr-defined]
    shot(pg, "conversation")
    pg.click("#new-chat")  # type: ignore[attr-defined]
    assert pg.is_hidden("#conversation") and pg.is_hidden("#result")  # type: ignore[attr-defined]
    ask(pg, HOLD)  # without the first turn the follow-up makes no sense: refused
    assert pg.inner_text("#status-badge") == "Refused"  # type: ignore[attr-defined]


def test_refusal_in_a_conversation(page: object, server: LiveServer) -> None:
    pg = page
    ask(pg, OIL)
    ask(pg, UNANSWERABLE)
    policy = server.app.state.runtime.ctx.policy
    assert pg.inner_text("#status-badge") == "Refused"  # type: ignore[attr-defined]
    assert pg.inner_text(".answer .refusal-text") in {  # type: ignore[attr-defined]
        policy.refusal.no_evidence_text,
        policy.refusal.model_text,
    }
    assert pg.locator("#answer .chip").count() == 0  # type: ignore[attr-defined]
    # It shares no word with the gearbox turn: a new conversation, said on the page.
    assert pg.locator("#turns .turn").count() == 0  # type: ignore[attr-defined]
    assert pg.is_visible("#topic-note")  # type: ignore[attr-defined]


def test_a_question_sharing_a_word_keeps_the_conversation(page: object) -> None:
    pg = page
    ask(pg, OIL)
    ask(pg, "What is the flash point of the GB-7 gearbox oil?")  # shares GB-7: same conversation
    assert pg.locator("#turns .turn").count() == 1  # type: ignore[attr-defined]
    assert pg.is_hidden("#topic-note")  # type: ignore[attr-defined]
    ask(pg, HOLD)  # a reference word: still a follow-up, GB-7 found
    assert pg.locator("#turns .turn").count() == 2  # type: ignore[attr-defined]
    assert "18 litres" in pg.inner_text("#answer")  # type: ignore[attr-defined]


def test_new_conversation_is_offered_from_the_start(page: object) -> None:
    pg = page
    assert pg.is_visible("#new-chat")  # type: ignore[attr-defined]
    ask(pg, OIL)
    ask(pg, PLANT_QUESTION)  # the HP-220 impeller: nothing in common with the gearbox turn
    assert pg.locator("#turns .turn").count() == 0  # type: ignore[attr-defined]
    assert pg.is_visible("#topic-note") and pg.is_visible("#new-chat")  # type: ignore[attr-defined]
    assert pg.inner_text("#status-badge") == "Answered"  # type: ignore[attr-defined]


def test_markdown_is_rendered_without_raw_html(page: object) -> None:
    pg = page
    ask(pg, OIL)
    hostile = "**Bold** and `code` <img src=x onerror=alert(1)> [C0]\n\n- one\n- two\n\n# Title"
    pg.evaluate(  # type: ignore[attr-defined]
        "(t) => { const a = document.querySelector('#answer'); a.replaceChildren("
        "...renderMarkdown(t, ui.result.sources)); }",
        hostile,
    )
    assert pg.locator("#answer strong").inner_text() == "Bold"  # type: ignore[attr-defined]
    assert pg.locator("#answer code").first.inner_text() == "code"  # type: ignore[attr-defined]
    assert pg.locator("#answer img").count() == 0  # type: ignore[attr-defined]
    assert "<img src=x onerror=alert(1)>" in pg.inner_text("#answer")  # type: ignore[attr-defined]
    assert pg.locator("#answer ul li").count() == 2  # type: ignore[attr-defined]
    assert pg.locator("#answer .chip").count() == 1  # type: ignore[attr-defined]


def test_phone_layout_has_no_sideways_scroll(browser: object, server: LiveServer) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.goto(server.url + "/")
    pg.wait_for_selector("#collection option[value='demo']", state="attached")
    width = "() => document.documentElement.scrollWidth"
    assert pg.evaluate(width) <= 390
    ask(pg, OIL)
    ask(pg, HOLD)
    assert "18 litres" in pg.inner_text("#answer")
    wide = pg.evaluate(
        "() => [...document.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right"
        " > 390.5).map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 12)"
    )
    assert pg.evaluate(width) <= 390, f"the page scrolls sideways at 390 px: {wide}"
    box = pg.locator("#ask-btn").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
    shot(pg, "phone-conversation")
    pg.click("#answer .chip >> nth=0")
    pg.wait_for_selector("#doc-viewer:not([hidden]) mark#highlight")
    panel = pg.locator(".doc-panel").bounding_box()
    assert panel is not None and panel["width"] <= 390
    shot(pg, "phone-document")
    context.close()


def test_api_docs_render_offline(browser: object, server: LiveServer) -> None:
    # Every request that leaves loopback is aborted: /docs must render from local assets only.
    context = browser.new_context()  # type: ignore[attr-defined]
    outside: list[str] = []

    def guard(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith(server.url):
            route.continue_()  # type: ignore[attr-defined]
        else:
            outside.append(url)
            route.abort()  # type: ignore[attr-defined]

    context.route("**/*", guard)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server.url + "/docs")
    pg.wait_for_selector("details summary .method")
    text = pg.inner_text("#api")
    assert "/v1/answer" in text and "/v1/chat/completions" in text and "PublicResponse" in text
    context.close()
    assert not outside and not errors, (outside, errors)


def test_browser_parses_an_audit_record_with_non_finite_numbers(
    browser: object, make_config: Callable[..., Config]
) -> None:
    """GET /v1/audit/{id} is read by JavaScript clients (an admin's page, a dashboard):
    Chromium's JSON.parse must accept a record holding NaN / ±Infinity, and see the documented
    strings where the numbers were."""
    with LiveServer(make_config(keys=True)) as srv:
        (sink,) = srv.app.state.runtime.ctx.sinks
        r = httpx.post(
            srv.url + "/v1/answer", json={"question": PLANT_QUESTION}, headers=auth("admin")
        )
        (real,) = sink.find(r.json()["request_id"])
        sink.append(non_finite_copy(real, "browser-non-finite"))
        context = browser.new_context()  # type: ignore[attr-defined]
        pg = context.new_page()
        pg.goto(srv.url + "/healthz")  # same origin as the API
        got = pg.evaluate(
            """async ([id, key]) => {
                const resp = await fetch('/v1/audit/' + id,
                                         {headers: {Authorization: 'Bearer ' + key}});
                const text = await resp.text();
                try {
                    const rec = JSON.parse(text).records[0];
                    return {min: rec.min_support, cov: rec.attribution_coverage,
                            lat: rec.llm_latency_ms, hash: rec.record_hash};
                } catch (e) { return {error: String(e), text: text.slice(0, 200)}; }
            }""",
            ["browser-non-finite", KEYS["admin"][0]],
        )
        context.close()
        assert "error" not in got, got
        assert (got["min"], got["cov"], got["lat"]) == ("NaN", "Infinity", "-Infinity")
        assert got["hash"] == sink.find("browser-non-finite")[0].record_hash
