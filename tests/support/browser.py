"""Headless Chromium for the browser tests (Debian's chromium + chromium-driver, driven by Selenium).
CI installs both (`.ci/run`); where they are missing, `require_browser()` skips the test with a reason."""
from __future__ import annotations

import shutil
import time

import pytest


def require_browser() -> None:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian's chromium and chromium-driver (CI installs them: see .ci/run)")


def driver(width: int = 1400, height: int = 900, extra_args: tuple[str, ...] = ()):  # noqa: ANN201
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--window-size={width},{height}", *extra_args):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def wait_for(predicate, timeout: float = 30.0):  # noqa: ANN001, ANN201
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not met in time")
