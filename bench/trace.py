"""`python -m bench.trace "<question>" --conversation conv-47`: one query traced through every stage, on
the benchmark's embedded service (var/bench), printed as JSON. docs/pipeline.md's worked example is
made with it."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import httpx

from bench.harness import DEFAULT_API_KEY, REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("question")
    ap.add_argument("--conversation", required=True)
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--token-budget", type=int, default=300)
    ap.add_argument("--pipeline", default="{}", help="JSON object of stage overrides")
    ap.add_argument("--var-dir", type=Path, default=REPO_ROOT / "var" / "bench")
    a = ap.parse_args(argv)
    from app.embedded import ServiceStack, stop_postgres, stop_redis

    stack = ServiceStack(var_dir=a.var_dir, api_key=DEFAULT_API_KEY, beat=False, log_dir=a.var_dir / "logs")
    stack.start()
    try:
        with httpx.Client(base_url=stack.base_url, timeout=120,
                          headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"}) as c:
            out = c.post("/v1/query", json={"query": a.question, "conversation_id": a.conversation,
                                            "top_k": a.top_k, "token_budget": a.token_budget,
                                            "pipeline": json.loads(a.pipeline)}).json()
    finally:
        stack.stop()
        stop_redis(a.var_dir)
        stop_postgres(a.var_dir)
    json.dump(out, sys.stdout, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
