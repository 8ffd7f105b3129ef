"""A quiet install: building the package's metadata (what `pip install` / `make install` does first)
prints no warning, no deprecation (`project.license` is an SPDX expression, not a TOML table)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_building_the_package_metadata_warns_of_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    r = subprocess.run(
        [sys.executable, "-W", "default", "-c",
         "import sys; from setuptools.build_meta import prepare_metadata_for_build_wheel as p; print(p(sys.argv[1]))",
         str(tmp_path)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    noise = [line for line in (r.stdout + r.stderr).splitlines() if "warn" in line.lower() or "deprecat" in line.lower()]
    assert noise == [], noise
    metadata = (tmp_path / r.stdout.split()[-1] / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Dist: fastapi-offline" in metadata  # /docs and /redoc assets (no CDN)
