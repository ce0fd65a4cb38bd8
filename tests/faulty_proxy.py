"""A proxy in front of a real server that spoils its next few chat completions the ways broken
servers and load balancers do: truncated JSON, no choices, a 10 MB answer, an HTTP 500."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

import httpx

Fault = Literal["malformed", "empty", "huge", "error500"]
HUGE_ANSWER_BYTES = 10 * 1024 * 1024


class FaultyProxy:
    """Forwards to `upstream` (a base URL ending in /v1); `spoil(fault, times)` spoils the
    next `times` chat completions. `spoiled` counts those sent."""

    def __init__(self, upstream: str):
        self.upstream = upstream.removesuffix("/v1")
        self.fault: Fault | None = None
        self.remaining = 0
        self.spoiled = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def spoil(self, fault: Fault, times: int) -> None:
        with self.lock:
            self.fault, self.remaining = fault, times

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _take_fault(self) -> Fault | None:
        with self.lock:
            if self.remaining == 0:
                return None
            self.remaining -= 1
            self.spoiled += 1
            return self.fault

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_GET(self) -> None:
                reply = httpx.get(proxy.upstream + self.path, timeout=30)
                self._send(reply.status_code, reply.content)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fault = proxy._take_fault() if self.path.endswith("/chat/completions") else None
                if fault == "error500":
                    self._send(500, b'{"error": "internal"}')
                    return
                reply = httpx.post(
                    proxy.upstream + self.path,
                    content=body,
                    headers={"Content-Type": "application/json"},
                    timeout=120,
                )
                self._send(reply.status_code, _spoiled(reply.content, fault))

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _spoiled(payload: bytes, fault: Fault | None) -> bytes:
    if fault == "malformed":
        return payload[: len(payload) // 2]
    if fault is None:
        return payload
    reply = json.loads(payload)
    if fault == "empty":
        reply["choices"] = []
    else:
        reply["choices"][0]["message"]["content"] = "a" * HUGE_ANSWER_BYTES
    return json.dumps(reply).encode()
