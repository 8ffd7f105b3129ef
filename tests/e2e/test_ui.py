"""The memory explorer page in headless Chromium (Debian's chromium + chromium-driver, via Selenium):
load it, connect with a key, open a conversation, ask a question, check what is shown, screenshot it.
"""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support import own_queue
from tests.support.browser import driver as _driver
from tests.support.browser import require_browser, wait_for
from app.embedded import ServiceStack
from app.storage import tenants

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

TURNS = [
    ("Ana", "We finally moved to Denver last spring."),
    ("Ben", "How is the new apartment?"),
    ("Ana", "Small, but it has a view of the mountains."),
    ("Ben", "I started a new job at the bakery on Main Street."),
]


def test_explorer_shows_timeline_and_evidence(tmp_path, database_url, redis_url):
    require_browser()
    from selenium.webdriver.common.by import By

    key = tenants.new_key()
    with ServiceStack(var_dir=tmp_path, api_key=key, database_url=database_url, redis_url=redis_url, queue=own_queue(),
                      log_dir=tmp_path / "logs") as stack:
        events = [{"conversation_id": "ui-demo", "event_id": str(i), "speaker": s, "content": c,
                   "occurred_at": f"2024-03-0{i + 1}T10:00:00Z"} for i, (s, c) in enumerate(TURNS)]
        r = httpx.post(f"{stack.base_url}/v1/events", json={"events": events},
                       headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200
        driver = _driver()
        try:
            driver.get(f"{stack.base_url}/ui/")
            assert "memory explorer" in driver.title
            driver.find_element(By.ID, "api-key").send_keys(key)
            driver.find_element(By.CSS_SELECTOR, "#key-form button").click()
            item = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '#conversations li[data-id="ui-demo"]'))[0]
            assert item.find_element(By.CSS_SELECTOR, ".count").text == "4"
            item.click()
            rows = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#timeline .event"))
            assert len(rows) == 4 and "Denver" in rows[0].text
            driver.find_element(By.ID, "query").send_keys("Where did Ana move?")
            driver.find_element(By.CSS_SELECTOR, "#query-form button").click()
            items = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#results .item"))
            assert "Denver" in items[0].text
            assert "lexical #1" in items[0].find_element(By.CSS_SELECTOR, ".signals").text
            assert driver.find_elements(By.CSS_SELECTOR, "#timeline .event.hit")  # evidence highlighted
            out = ROOT / "var" / "test-output"
            out.mkdir(parents=True, exist_ok=True)
            shot = out / "ui-explorer.png"
            driver.save_screenshot(str(shot))
            assert shot.stat().st_size > 10_000
        finally:
            driver.quit()
