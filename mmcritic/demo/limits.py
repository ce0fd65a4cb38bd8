"""Bounds on what one request can make the demo hold: the body of any request, and how long an
upload stays on disk.

Gradio reads a whole request body into memory before its own checks run, so a 200 MB JSON body
to `/gradio_api/call/compare` cost 200 MB of resident memory per request. `BodyLimit` answers
413 to a body past `MAX_BODY_BYTES` before it is read (from its Content-Length) or as soon as
the bytes received pass it (a chunked body). Uploads are Gradio's files: the demo's `Blocks`
deletes those older than `UPLOAD_MAX_AGE_S` every `UPLOAD_SWEEP_S` seconds (`delete_cache`).
"""

from __future__ import annotations

from typing import Any

from mmcritic.demo.inputs import MAX_IMAGE_BYTES

# the largest request the page sends is an image upload of MAX_IMAGE_BYTES and its form fields
MAX_BODY_BYTES = MAX_IMAGE_BYTES + 1024 * 1024
UPLOAD_SWEEP_S = 60
UPLOAD_MAX_AGE_S = 600
DELETE_CACHE = (UPLOAD_SWEEP_S, UPLOAD_MAX_AGE_S)


class _TooLarge(BaseException):
    """Raised from `receive` past the limit; a BaseException, so request parsing that catches
    every Exception (and would answer 400) lets it through to `BodyLimit`."""


class BodyLimit:
    """ASGI middleware: HTTP bodies above `max_bytes` get 413 and are not read further."""

    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.max_bytes:
            await _refuse(send, self.max_bytes)
            return
        received = 0
        started = False

        async def counted_receive() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracked_send(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _TooLarge:
            if not started:
                await _refuse(send, self.max_bytes)


async def _refuse(send: Any, max_bytes: int) -> None:
    body = f'{{"error": "request body over {max_bytes:,} bytes"}}'.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})
