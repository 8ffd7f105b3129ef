"""`palimpsest query` as a user runs it in an 80-column terminal: every line fits, every word of the
evidence is there (wrapped, not cut to a sliver), and each item says which signals found it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.support import auth
from tests.support.live import serve

ROOT = Path(__file__).resolve().parents[2]
LONG = ("After the move I finally signed up for cello lessons at the community music school on Pine "
        "Street, every Tuesday evening with a teacher called Marguerite who played in the symphony.")


def run_cli(*args: str, columns: int, key: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LINES",)}
    env.update(COLUMNS=str(columns), PALIMPSEST_API_KEY=key)
    return subprocess.run([str(Path(sys.executable).with_name("palimpsest")), *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_query_reads_at_80_columns(tenant):
    _, key = tenant
    events = [{"conversation_id": "cli80", "event_id": str(i), "speaker": who, "content": text,
               "occurred_at": f"2024-03-0{i + 1}T10:00:00Z"}
              for i, (who, text) in enumerate([("Ana", LONG), ("Ben", "My dog Rex loves the snow."),
                                                ("Ana", "The cello teacher said I should practise scales daily.")])]
    with serve() as base:
        assert httpx.post(f"{base}/v1/events", json={"events": events}, headers=auth(key)).status_code == 200
        r = run_cli("query", "cello lessons on Tuesday", "--url", base, "-c", "cli80", "--context",
                    columns=80, key=key)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, r.stdout
        # the whole sentence is there, wrapped onto indented lines, words intact
        joined = " ".join(line.strip() for line in lines)
        assert LONG in joined, r.stdout
        first = next(i for i, line in enumerate(lines) if line.lstrip().startswith("1. "))
        assert "Ana" in lines[first] and "2024-03-01 10:00" in lines[first]
        assert "lexical #" in r.stdout  # which signal found it, with its rank
        assert r.stderr == "", r.stderr  # no warnings on a CLI call

        # an error reads as words too
        bad = run_cli("query", "   ", "--url", base, columns=80, key=key)
        assert bad.returncode == 1 and "error 422: query: must not be blank" in bad.stderr, bad.stderr
