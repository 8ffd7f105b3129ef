"""The API on a real socket inside the test process: uvicorn in a thread, for tests that must go
through HTTP as a client does (headers, bodies that are not JSON, the browser) without the cost of
a worker process. The app is the one the integration ring configured (its database and Redis)."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def serve(app=None) -> Iterator[str]:  # noqa: ANN001
    """Run `app` (default: app.api.main:app) on a free local port; yield its base URL."""
    import uvicorn

    from app.embedded import free_port, wait_http

    if app is None:
        from app.api.main import app
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True, name=f"uvicorn-{port}")
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/healthz", timeout=60)
        yield base
    finally:
        server.should_exit = True
        thread.join(30)
