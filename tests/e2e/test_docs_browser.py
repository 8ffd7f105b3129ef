"""/docs and /redoc in headless Chromium with the internet cut off: the pages load their scripts from
the service itself (assets of a pip package, no CDN) and show the API's operations."""
from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.support import browser
from tests.support.live import serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def offline_browser():
    browser.require_browser()
    # No internet for this browser: no host name resolves but the service's, as on an offline machine.
    drv = browser.driver(extra_args=("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",))
    # Record what the page's own Content-Security-Policy stopped before it left the browser.
    drv.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__blocked = [];
        document.addEventListener('securitypolicyviolation', e => window.__blocked.push(e.blockedURI));
    """})
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture(scope="module")
def api() -> str:
    with serve() as base:
        yield base


def origin(url: str) -> str:
    return f"{urlparse(url).scheme}://{urlparse(url).netloc}"


def assert_nothing_from_elsewhere(drv, api: str) -> None:  # noqa: ANN001
    """Every script, stylesheet and font came from the service; anything else the page's code asked
    of another host was stopped by the page's own policy (so it never needed the network)."""
    entries = drv.execute_script(
        "return performance.getEntriesByType('resource').map(e => [e.name, e.initiatorType])")
    outside = [(u, kind) for u, kind in entries if not u.startswith("data:") and origin(u) != api]
    assert not [u for u, kind in outside if kind in ("script", "link", "css")], outside
    blocked = set(drv.execute_script("return window.__blocked"))
    assert {u for u, _ in outside} <= blocked, (outside, blocked)
    served = {u for u, kind in entries if kind in ("script", "link") and origin(u) == api}
    assert any(u.endswith(".js") for u in served), entries


def test_swagger_ui_shows_the_operations_offline(offline_browser, api):
    drv = offline_browser
    drv.get(f"{api}/docs")
    ops = browser.wait_for(lambda: drv.find_elements("css selector", ".opblock-summary"), timeout=60)
    shown = {" ".join(o.text.split()[:2]) for o in ops}
    assert {"POST /v1/events", "POST /v1/query", "GET /v1/events/{id}"} <= shown, shown
    assert drv.find_element("css selector", ".info .title").text.startswith("Palimpsest")
    assert_nothing_from_elsewhere(drv, api)
    # an operation opens and shows the one error shape among its answers
    post = next(o for o in ops if o.text.startswith("POST\n/v1/events") or " ".join(o.text.split()[:2]) == "POST /v1/events")
    post.click()
    # the block opens before its answers are drawn: wait for its Responses section, then read it
    body = browser.wait_for(lambda: t if "Responses" in (t := drv.find_element("css selector", ".opblock.is-open").text)
                            else None, timeout=30)
    assert "4XX" in body and "ErrorOut" in drv.page_source


def test_redoc_shows_the_operations_offline(offline_browser, api):
    drv = offline_browser
    drv.get(f"{api}/redoc")
    menu = browser.wait_for(lambda: drv.find_elements("css selector", "[role=menuitem], li[data-item-id]"),
                            timeout=60)
    text = browser.wait_for(lambda: drv.find_element("tag name", "body").text if "/v1/events" in drv.find_element(
        "tag name", "body").text else "", timeout=60)
    assert menu and "Write a batch of events" in text and "/v1/query" in text
    assert_nothing_from_elsewhere(drv, api)
