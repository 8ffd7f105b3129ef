"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests of the LLM paths.

`respond(body) -> (status, content)` decides each reply from the request, so one server can play
the intent classifier and the answer model at once; every request is recorded.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Responder = Callable[[dict], tuple[int, str]]


class LLMServer:
    def __init__(self, respond: Responder):
        self.respond = respond
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                status, content = outer.respond(body)
                payload = (json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
                           if status == 200 else json.dumps({"error": content}))
                data = payload.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # keep test output quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "LLMServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
