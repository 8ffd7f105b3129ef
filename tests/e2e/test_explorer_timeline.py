"""The README's example conversation, as a reader would run it, seen in the explorer's "What changed"
table (headless Chromium on the session's live API + worker, in a tenant of this test's own).

The events are read from README.md itself (the `-d '{"events": ...}'` bodies of its "Use it" section),
so the test fails when the README and what the service does with it part ways: Ana's move (Boston,
then Denver) and job change (Harbor Bank, then Stripe) are on the timeline with their dates, the old
values struck through and labelled with the value that superseded them, the new ones current, both
contradictions listed; after the README's correction of event 3, Boulder supersedes Boston instead.
The screenshot goes to var/test-output/; with PALIMPSEST_UPDATE_SCREENSHOTS=1 also to docs/img/
(shown by README.md and docs/explorer.md)."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.support import new_tenant
from tests.support.browser import driver, require_browser, wait_for
from tests.support.stack import live  # noqa: F401  (the session's API + worker)

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CONV = "readme-demo"


def readme_posts() -> list[list[dict]]:
    """The event batches the README's "Use it" section posts, in its order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Use it"):]
    section = section[: section.index("\n## ", 1)]
    bodies = [json.loads(b) for b in re.findall(r"-d '(\{.*?\})'", section, re.S)]
    return [b["events"] for b in bodies if "events" in b]


def wait_built(c: httpx.Client, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while any((st := c.get(f"/v1/conversations/{CONV}/status").json())["pending"].values()):
        assert time.time() < deadline, f"layers not built in time: {st}"
        time.sleep(0.5)


def changes(d) -> dict[tuple[str, str, str], dict]:  # noqa: ANN001
    """(who, what, value) -> what the row shows: its date, state, classes and the value's line-through."""
    from selenium.webdriver.common.by import By

    out = {}
    for tr in d.find_elements(By.CSS_SELECTOR, "#changes tr.assertion"):
        cell = {k: tr.find_element(By.CSS_SELECTOR, f"td.{k}") for k in ("who", "what", "value", "state")}
        out[(cell["who"].text, cell["what"].text, cell["value"].text)] = {
            "date": tr.find_element(By.CSS_SELECTOR, "time").text, "state": cell["state"].text,
            "class": tr.get_attribute("class"),
            "struck": "line-through" in cell["value"].value_of_css_property("text-decoration-line")}
    return out


def contradictions(d) -> list[str]:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    return [li.text for li in d.find_elements(By.CSS_SELECTOR, "#changes ul.contradictions li")]


def shot(d, name: str, element) -> Path:  # noqa: ANN001
    out = ROOT / "var" / "test-output"
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    element.screenshot(str(path))
    assert path.stat().st_size > 5_000
    if os.environ.get("PALIMPSEST_UPDATE_SCREENSHOTS"):
        from PIL import Image  # Pillow comes with matplotlib

        with Image.open(path) as img:  # 256 colours, as docs/explorer.md's other screenshots
            img.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(
                ROOT / "docs" / "img" / name, optimize=True)
    return path


def test_the_explorer_shows_the_readme_conversations_changes_and_the_correction(live, engine):  # noqa: F811
    require_browser()
    from selenium.webdriver.common.by import By

    first, correction = readme_posts()
    assert {e["conversation_id"] for e in first + correction} == {CONV}
    _, key = new_tenant(engine)
    d = driver(1500, 1300)
    try:
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
            assert c.post("/v1/events", json={"events": first}).status_code == 200
            wait_built(c)
            d.get(f"{live.url}/ui/#key={key}&conversation={CONV}")
            rows = wait_for(lambda: len(changes(d)) >= 4 and changes(d), timeout=60)
            boston, denver = rows[("Ana", "lives_in", "Boston")], rows[("Ana", "lives_in", "Denver")]
            bank, stripe = rows[("Ana", "works_at", "Harbor Bank")], rows[("Ana", "works_at", "Stripe")]
            assert (boston["date"], boston["state"], boston["struck"]) == ("2023-11-20", "superseded by Denver · 2024-06-02", True)
            assert (bank["date"], bank["state"], bank["struck"]) == ("2023-11-20", "superseded by Stripe · 2024-06-02", True)
            assert "superseded" in boston["class"] and "superseded" in bank["class"]
            for row in (denver, stripe):
                assert (row["date"], row["state"], row["struck"]) == ("2024-06-02", "current", False)
            assert rows[("Ben", "pet_name:dog", "Rex")]["state"] == "current"
            assert sorted(contradictions(d)) == ["Ana · lives_in: Boston (2023-11-20) → Denver (2024-06-02) · update",
                                                 "Ana · works_at: Harbor Bank (2023-11-20) → Stripe (2024-06-02) · update"]

            assert c.post("/v1/events", json={"events": correction}).status_code == 200
            wait_built(c)
            d.refresh()
            rows = wait_for(lambda: ("Ana", "lives_in", "Boulder") in (r := changes(d)) and r, timeout=60)
        boston = rows[("Ana", "lives_in", "Boston")]
        assert (boston["state"], boston["struck"]) == ("superseded by Boulder · 2024-06-02", True)
        assert rows[("Ana", "lives_in", "Boulder")]["state"] == "current"
        assert not any(v == "Denver" for _, _, v in rows)  # what event 3 said before its correction is gone
        assert rows[("Ana", "works_at", "Harbor Bank")]["state"] == "superseded by Stripe · 2024-06-02"
        assert "Ana · lives_in: Boston (2023-11-20) → Boulder (2024-06-02) · update" in contradictions(d)
        corrected = [r.text for r in d.find_elements(By.CSS_SELECTOR, "#timeline .event.superseded")]
        assert len(corrected) == 1 and "Denver" in corrected[0] and "corrected later" in corrected[0]
        shot(d, "explorer-changes.png", d.find_element(By.ID, "timeline-pane"))
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE" and e.get("source") == "javascript"]
        assert not errors, f"the page threw: {errors}"
    finally:
        d.quit()
