"""The memory explorer page in headless Chromium (Debian's chromium + chromium-driver, via Selenium),
on one real stack (API + worker) for the module: connect, reload, deep links, the entity graph.
Assertions are on what a user sees: text, classes, the URL, and boxes measured with
getBoundingClientRect. The screenshots go to var/test-output/; with PALIMPSEST_UPDATE_SCREENSHOTS=1
they also replace the ones docs/explorer.md shows (docs/img/)."""
from __future__ import annotations

import os
import re
import time
from itertools import combinations
from pathlib import Path

import httpx
import pytest

from app.embedded import ServiceStack
from app.storage import tenants
from tests.support import new_tenant, own_queue
from tests.support.browser import driver as _driver
from tests.support.browser import require_browser, wait_for

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
DOC_IMAGES = ROOT / "docs" / "img"

TURNS = [
    ("Ana", "We finally moved to Denver last spring.", "2024-03-01T10:00:00Z"),
    ("Ben", "How is the new apartment?", "2024-03-01T10:01:00Z"),
    ("Ana", "Small, but it has a view of the mountains.", "2024-03-01T10:02:00Z"),
    ("Ben", "I started a new job at the bakery on Main Street.", "2024-03-01T10:03:00Z"),
    ("Ana", "My sister Leah visited us in Denver in April.", "2024-05-02T18:00:00Z"),
    ("Ben", "Did Leah like the mountains?", "2024-05-02T18:01:00Z"),
    ("Ana", "She loved hiking near Boulder with Marco.", "2024-05-02T18:02:00Z"),
    ("Ben", "Marco from the climbing gym? He works at the library now.", "2024-05-02T18:03:00Z"),
    ("Ana", "Yes, and Leah is moving to Portland in June for a teaching job.", "2024-05-02T18:04:00Z"),
    ("Ben", "The bakery is opening a second shop in Boulder.", "2024-06-10T08:00:00Z"),
    ("Ana", "Leah decided to stay in Denver after all.", "2024-06-20T19:00:00Z"),
    ("Ben", "Great, we could all go to the Red Rocks concert in July.", "2024-06-20T19:05:00Z"),
]
STAY = "Leah decided to stay in Denver after all."


@pytest.fixture(scope="module")
def site(tmp_path_factory, database_url, redis_url, engine):
    """One stack with a tenant holding `friends` (12 events, every layer built) and `support`, plus
    another tenant with one event of its own."""
    require_browser()
    tmp = tmp_path_factory.mktemp("ui")
    key = tenants.new_key()
    with ServiceStack(var_dir=tmp, api_key=key, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                      log_dir=tmp / "logs") as stack:
        with httpx.Client(base_url=stack.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
            events = [{"conversation_id": "friends", "event_id": f"f{i}", "speaker": s, "content": text,
                       "occurred_at": at} for i, (s, text, at) in enumerate(TURNS)]
            events.append({"conversation_id": "support", "event_id": "s0", "speaker": "Kim",
                           "content": "My router keeps dropping the connection.",
                           "occurred_at": "2024-04-01T09:00:00Z"})
            assert c.post("/v1/events", json={"events": events}).status_code == 200
            deadline = time.time() + 300
            while any((st := c.get("/v1/conversations/friends/status").json())["pending"].values()):
                assert time.time() < deadline, f"layers not built in time: {st}; logs in {tmp / 'logs'}"
                time.sleep(0.5)
            pks = {e["content"]: e["id"] for e in c.get("/v1/conversations/friends/events").json()["events"]}
        _, other_key = new_tenant(engine)
        r = httpx.post(f"{stack.base_url}/v1/events", headers={"Authorization": f"Bearer {other_key}"},
                       json={"events": [{"conversation_id": "private", "event_id": "p0", "speaker": "Zoe",
                                         "content": "The other tenant's secret.",
                                         "occurred_at": "2024-01-01T00:00:00Z"}]})
        other_pk = r.json()["results"][0]["id"]
        yield {"url": stack.base_url, "key": key, "pks": pks, "other_pk": other_pk}


@pytest.fixture
def browser():
    d = _driver(1400, 1100)
    try:
        yield d
    finally:
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and e.get("source") == "javascript"]
        d.quit()
    assert not errors, f"the page threw: {errors}"


def _by():
    from selenium.webdriver.common.by import By

    return By


def js(d, script: str, *args):  # noqa: ANN001, ANN201
    return d.execute_script(script, *args)


def status(d) -> str:  # noqa: ANN001
    return d.find_element(_by().ID, "key-status").text


def conversations(d) -> dict[str, str]:  # noqa: ANN001
    return {li.get_attribute("data-id"): li.find_element(_by().CSS_SELECTOR, ".count").text
            for li in d.find_elements(_by().CSS_SELECTOR, "#conversations li")}


def linked_rows(d) -> list[str]:  # noqa: ANN001
    return [r.text for r in d.find_elements(_by().CSS_SELECTOR, "#timeline .event.linked")]


def shot(d, name: str, element=None) -> Path:  # noqa: ANN001
    out = ROOT / "var" / "test-output"
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    if element is not None:
        js(d, "arguments[0].scrollIntoView()", element)
        element.screenshot(str(path))
    else:
        d.save_screenshot(str(path))
    assert path.stat().st_size > 5_000
    if os.environ.get("PALIMPSEST_UPDATE_SCREENSHOTS"):
        from PIL import Image  # Pillow comes with matplotlib

        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        with Image.open(path) as img:  # 256 colours: a UI screenshot stays sharp at a third of the bytes
            small = img.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
            small.save(DOC_IMAGES / name, optimize=True)
    return path


def test_connect_then_reload_keeps_the_key_for_the_browser_session(site, browser):
    By, d = _by(), browser
    d.get(f"{site['url']}/ui/")
    assert "memory explorer" in d.title
    assert "not connected" in status(d) and not conversations(d)
    d.find_element(By.ID, "api-key").send_keys(site["key"])
    d.find_element(By.CSS_SELECTOR, "#key-form button[type=submit]").click()
    assert wait_for(lambda: conversations(d)) == {"friends": "12", "support": "1"}
    assert status(d) == "connected · 2 conversations"
    assert js(d, "return sessionStorage.getItem('palimpsest-key')") == site["key"]
    assert js(d, "return localStorage.getItem('palimpsest-key')") is None  # not kept beyond the session

    d.refresh()  # a reload: still connected, nothing typed
    assert wait_for(lambda: conversations(d)) == {"friends": "12", "support": "1"}
    d.find_element(By.CSS_SELECTOR, '#conversations li[data-id="friends"] a').click()
    rows = wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "#timeline .event"))
    assert len(rows) == 12 and "moved to Denver" in rows[0].text
    assert d.current_url.endswith("/ui/#conversation=friends")
    assert "friends" in d.find_element(By.CSS_SELECTOR, "#conversations li.active").text

    d.find_element(By.ID, "query").send_keys("Where did Ana move?")
    d.find_element(By.CSS_SELECTOR, "#query-form button").click()
    items = wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "#results .item"))
    top = items[0]
    assert "We finally moved to Denver last spring." in top.text
    assert "lexical #1" in top.find_element(By.CSS_SELECTOR, ".signals").text
    hit = d.find_element(By.CSS_SELECTOR, f"#event-{site['pks']['We finally moved to Denver last spring.']}")
    assert "hit" in hit.get_attribute("class").split()  # the evidence is highlighted in the timeline
    wait_for(lambda: "Where did Ana move?" in d.find_element(By.ID, "graph-caption").text)
    shot(d, "explorer.png")

    d.find_element(By.ID, "disconnect").click()  # forgetting the key: a reload is not connected
    assert js(d, "return sessionStorage.getItem('palimpsest-key')") is None
    d.refresh()
    wait_for(lambda: "not connected" in status(d))
    assert not conversations(d)


def test_a_new_browser_session_starts_without_the_key(site, browser):
    d = browser
    d.get(f"{site['url']}/ui/")
    wait_for(lambda: "not connected" in status(d))
    assert d.find_element(_by().ID, "api-key").get_attribute("value") == ""
    assert not conversations(d)


def test_deep_link_opens_the_conversation_connected_and_shows_the_event(site, browser):
    By, d = _by(), browser
    pk = site["pks"][STAY]
    d.get(f"{site['url']}/ui/#key={site['key']}&conversation=friends&event={pk}")
    wait_for(lambda: linked_rows(d))
    assert len(linked_rows(d)) == 1 and STAY in linked_rows(d)[0]
    assert "pal_" not in d.current_url and "key=" not in d.current_url  # the key left the URL...
    assert d.current_url.endswith(f"/ui/#conversation=friends&event={pk}")
    assert js(d, "return sessionStorage.getItem('palimpsest-key')") == site["key"]  # ...for the session
    assert "friends" in d.find_element(By.CSS_SELECTOR, "#conversations li.active").text
    row = d.find_element(By.CSS_SELECTOR, "#timeline .event.linked")
    pane = d.find_element(By.ID, "timeline-pane")
    r, p = (js(d, "return arguments[0].getBoundingClientRect()", n) for n in (row, pane))
    assert p["top"] <= r["top"] and r["bottom"] <= p["bottom"]  # scrolled into view
    assert js(d, "return window.scrollY") == 0  # inside the timeline: the page itself stays put
    fact = wait_for(lambda: d.find_elements(By.CSS_SELECTOR, f'#graph-svg .node.fact[data-event="{pk}"]'))[0]
    assert "linked" in fact.get_attribute("class").split()  # and its fact is marked in the graph
    shot(d, "explorer-deep-link.png")

    d.refresh()  # a reload keeps the key, the conversation and the event
    wait_for(lambda: linked_rows(d))
    assert STAY in linked_rows(d)[0] and status(d).startswith("connected")

    other = site["pks"]["Did Leah like the mountains?"]
    d.find_element(By.CSS_SELECTOR, f"#event-{other} a.permalink").click()  # a row's own link
    wait_for(lambda: linked_rows(d) and "Did Leah like the mountains?" in linked_rows(d)[0])
    assert d.current_url.endswith(f"#conversation=friends&event={other}") and len(linked_rows(d)) == 1

    d.get(f"{site['url']}/ui/#conversation=support")  # another conversation, then an event alone:
    wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "#timeline .event"))
    d.get(f"{site['url']}/ui/#event={pk}")  # its conversation is looked up
    wait_for(lambda: linked_rows(d) and STAY in linked_rows(d)[0])
    assert d.current_url.endswith(f"#conversation=friends&event={pk}")


def test_a_deep_link_to_another_tenants_event_shows_nothing_of_it(site, browser):
    d = browser
    d.get(f"{site['url']}/ui/#key={site['key']}&event={site['other_pk']}")
    wait_for(lambda: "not found" in status(d))
    assert status(d) == f"event {site['other_pk']} not found"
    assert "secret" not in d.find_element(_by().TAG_NAME, "body").text
    assert set(conversations(d)) == {"friends", "support"}


def boxes(d, selector: str) -> list[dict]:  # noqa: ANN001
    return js(d, """return [...document.querySelectorAll(arguments[0])].map((n) => {
        const r = n.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, text: n.textContent};
    });""", selector)


def overlapping(rects: list[dict]) -> list[tuple[str, str]]:
    return [(a["text"], b["text"]) for a, b in combinations(rects, 2)
            if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]]


def test_entity_graph_reads(site, browser):
    By, d = _by(), browser
    d.get(f"{site['url']}/ui/#key={site['key']}&conversation=friends")
    wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "#graph-svg .node"))
    legend = d.find_element(By.ID, "graph-legend")
    assert legend.is_displayed()
    for words in ("person", "place", "fact (click: its event)", "topic", "named in the question", "mentions"):
        assert words in legend.text

    # entities, facts and topics in three columns, left to right, each label inside its box
    ent, fact, topic = (boxes(d, f"#graph-svg .node.{k} rect") for k in ("entity", "fact", "topic"))
    assert len(ent) >= 5 and len(fact) >= 5 and topic
    assert max(b["right"] for b in ent) < min(b["left"] for b in fact)
    assert max(b["right"] for b in fact) < min(b["left"] for b in topic)
    names = {b["text"] for b in boxes(d, "#graph-svg .node.entity .label")}
    assert {"Leah", "Denver", "Ana"} <= names
    leah = d.find_element(By.XPATH, "//*[@id='graph-svg']//*[contains(@class,'entity')][.//*[text()='Leah']]")
    assert leah.get_attribute("data-kind") == "person"
    facts = [b["text"] for b in boxes(d, "#graph-svg .node.fact .label")]
    assert facts.index("We finally moved to Denver last spring.") < facts.index(STAY)  # oldest first

    def reads():
        labels = boxes(d, "#graph-svg .label, #graph-svg .col-head")
        assert not overlapping(labels), overlapping(labels)
        for group in d.find_elements(By.CSS_SELECTOR, "#graph-svg .node"):
            (label,), (rect,) = boxes(d, f'#graph-svg .node[data-id="{group.get_attribute("data-id")}"] .label'), \
                boxes(d, f'#graph-svg .node[data-id="{group.get_attribute("data-id")}"] rect')
            assert rect["left"] <= label["left"] and label["right"] <= rect["right"], label["text"]  # not cut off
        return labels

    before = reads()
    svg = boxes(d, "#graph-svg")[0]
    assert all(svg["left"] <= b["left"] and b["right"] <= svg["right"] for b in before)
    shot(d, "explorer-graph.png", d.find_element(By.ID, "graph-pane"))

    d.find_element(By.ID, "zoom-in").click()
    d.find_element(By.ID, "zoom-in").click()
    assert d.find_element(By.ID, "graph-svg").get_attribute("data-zoom") == "1.56"
    after = reads()
    width = {"before": next(b["width"] for b in before if b["text"] == "Leah"),
             "after": next(a["width"] for a in after if a["text"] == "Leah")}
    ratio = width["after"] / width["before"]
    assert ratio == pytest.approx(1.5625, rel=0.03)  # bigger, and still apart
    d.find_element(By.ID, "zoom-reset").click()
    assert d.find_element(By.ID, "graph-svg").get_attribute("data-zoom") == "1.00"

    leah.click()  # an entity: the graph around it, the entity outlined
    wait_for(lambda: d.find_element(By.ID, "graph-caption").text.startswith("around Leah"))
    seeds = {b["text"] for b in boxes(d, "#graph-svg .node.seed .label")}
    assert seeds == {"Leah"}
    reads()

    pk = site["pks"][STAY]
    d.find_element(By.CSS_SELECTOR, f'#graph-svg .node.fact[data-event="{pk}"]').click()  # a fact: its event
    wait_for(lambda: linked_rows(d))
    assert STAY in linked_rows(d)[0] and d.current_url.endswith(f"#conversation=friends&event={pk}")

    d.set_window_size(1000, 1100)  # a narrow window: long facts are shortened, whole on hover
    d.refresh()
    wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "#graph-svg .node"))
    reads()
    short = [g for g in d.find_elements(By.CSS_SELECTOR, "#graph-svg .node.fact")
             if g.find_element(By.CSS_SELECTOR, ".label").text.endswith("…")]
    assert short
    whole = js(d, "return arguments[0].querySelector('title').textContent", short[0])
    assert whole.split("\n")[0] in {text for _, text, _ in TURNS}
    assert whole.startswith(short[0].find_element(By.CSS_SELECTOR, ".label").text[:-1])


def test_the_explorer_docs_show_small_screenshots():
    text = (ROOT / "docs" / "explorer.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\((img/[^)]+\.png)\)", text)
    assert {"img/explorer.png", "img/explorer-graph.png", "img/explorer-deep-link.png"} <= set(shown)
    for rel in shown:
        path = ROOT / "docs" / rel
        assert path.exists(), rel
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size < 250_000, rel
