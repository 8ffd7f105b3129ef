"""The memory explorer page in headless Chromium (Debian's chromium + chromium-driver, via Selenium):
load it, connect with a key, open a conversation, ask a question, check what is shown, screenshot it.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import httpx
import pytest

from tests.support import own_queue
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


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,900"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def wait_for(predicate, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def test_explorer_shows_timeline_and_evidence(tmp_path, database_url, redis_url):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian's chromium and chromium-driver (CI installs them: see .ci/run)")
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
