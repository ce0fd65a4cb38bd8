"""The served engine: any OpenAI-compatible chat-completions server, one or several.

`vllm serve`, SGLang, lmdeploy and `transformers serve` all take `/v1/chat/completions` with
image and video parts. Requests are spread over every server given, at most `concurrency` in
flight on each, to the one with the fewest in flight; a connection error, a timeout, a 408, 429
or 5xx answer, or a reply that is not a chat completion is retried with backoff (on another
server when there is one), and a request that still fails is returned as `RequestFailed`, never
as an empty answer. A server that cannot be reached at start is an error naming it.

Sampling maps to the API fields: `max_tokens`, `temperature`, `top_p`, `n`, `seed`, `stop`,
and the vision placeholders get a logit bias of -100 (the hf engine suppresses them). What the
API leaves to the server is set to what the hf engine does, in each server's own dialect:
vLLM and SGLang take `top_k: -1` (no top-k cut; Qwen's generation config sets 1);
`transformers serve` takes a `generation_config` (it samples only when told to) and no `stop`
(its stop-string check fails on a multimodal processor), so its texts are cut here. A server that
returns fewer than `n` choices (transformers serve ignores `n`) is asked again for the rest,
one seed further each time.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from mmcritic.inference.engines.base import (
    Completions,
    Engine,
    Request,
    RequestFailed,
    Sampling,
    cut_at_stop,
)
from mmcritic.inference.engines.messages import chat_messages
from mmcritic.text import without_lone_surrogates

logger = logging.getLogger(__name__)

ServerKind = Literal["auto", "vllm", "sglang", "transformers", "openai"]
SERVER_KINDS: tuple[ServerKind, ...] = ("auto", "vllm", "sglang", "transformers", "openai")
RETRIED_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# An answer of max_tokens tokens takes a few bytes a token in JSON; this many a token is room for
# any real one, and a reply past it is a server fault, not an answer to score.
BYTES_PER_TOKEN = 64
REPLY_OVERHEAD_BYTES = 64 * 1024
API_KEY_VARIABLES = ("MMCRITIC_API_KEY", "OPENAI_API_KEY")


class ServerUnavailable(ConnectionError):
    """A server given at start cannot be reached or does not serve the model."""


@dataclass(frozen=True)
class ServerOptions:
    """Where the servers are and how to talk to them. `model` is the served model name (the
    server's only one when None); `api_key` defaults to $MMCRITIC_API_KEY or $OPENAI_API_KEY;
    `kind` picks the sampling dialect ("auto" asks the server). `suppress_token_ids` are kept
    out of answers while generating, `special_tokens` out of the texts returned (the hf engine
    decodes without them; some servers' response parsers keep them)."""

    base_urls: tuple[str, ...]
    model: str | None = None
    api_key: str | None = None
    concurrency: int = 8
    timeout_s: float = 600.0
    retries: int = 3
    backoff_s: float = 1.0
    kind: ServerKind = "auto"
    suppress_token_ids: tuple[int, ...] = ()
    special_tokens: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.base_urls:
            raise ValueError("the openai engine needs at least one --base-url")
        if self.concurrency < 1 or self.retries < 0 or self.timeout_s <= 0:
            raise ValueError(
                "servers need concurrency >= 1, retries >= 0 and timeout_s > 0, got "
                f"{self.concurrency}, {self.retries}, {self.timeout_s}"
            )
        if self.kind not in SERVER_KINDS:
            raise ValueError(f"unknown server kind {self.kind!r}; one of {SERVER_KINDS}")


def api_url(base_url: str) -> str:
    """The URL requests go to: `base_url` ending in /v1 (given with or without it)."""
    base = base_url.rstrip("/")
    return base if base.endswith("/v1") else f"{base}/v1"


def shown_url(url: str) -> str:
    """`url` without credentials or query, safe to log and record."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class Server:
    """One server: its client, its free slots and what it has done."""

    url: str
    client: httpx.Client
    slots: threading.Semaphore
    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0
    down_until: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def shown(self) -> str:
        return shown_url(self.url)

    def count(self, what: Literal["requests", "retries", "failures"]) -> None:
        with self.lock:
            setattr(self, what, getattr(self, what) + 1)

    def counts(self) -> dict[str, Any]:
        return {
            "url": self.shown,
            "requests": self.requests,
            "retries": self.retries,
            "failures": self.failures,
        }


class _Retry(Exception):
    """An attempt that may succeed on a retry."""


class _Fail(Exception):
    """An attempt that no retry would change."""


class ServedEngine(Engine):
    """Chat completions from OpenAI-compatible servers (`ServerOptions`)."""

    name = "openai"

    def __init__(self, options: ServerOptions):
        self.options = options
        headers = {"Authorization": f"Bearer {_api_key(options)}"}
        limits = httpx.Limits(max_connections=options.concurrency)
        self.servers = [
            Server(
                api_url(url),
                httpx.Client(headers=headers, timeout=options.timeout_s, limits=limits),
                threading.Semaphore(options.concurrency),
            )
            for url in options.base_urls
        ]
        self.model, self.kind = self._connect()
        self.reported_model: str | None = None
        self.pool = ThreadPoolExecutor(options.concurrency * len(self.servers), "served")
        self.samples = 0
        self.busy_s = 0.0

    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Completions]:
        started = time.perf_counter()
        outcomes = list(self.pool.map(lambda r: self._complete(r, sampling), requests))
        self.busy_s += time.perf_counter() - started
        self.samples += len(requests)
        return outcomes

    def describe(self) -> dict[str, Any]:
        counts = [server.counts() for server in self.servers]
        return {
            "engine": self.name,
            "server_kind": self.kind,
            "model": self.model,
            "reported_model": self.reported_model,
            "servers": counts,
            "requests": sum(c["requests"] for c in counts),
            "retries": sum(c["retries"] for c in counts),
            "failures": sum(c["failures"] for c in counts),
            "requests_per_s": self.samples / self.busy_s if self.busy_s else None,
        }

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for server in self.servers:
            server.client.close()

    def _connect(self) -> tuple[str, ServerKind]:
        """The model name and dialect, after checking that every server answers."""
        listings = [_listing(server) for server in self.servers]
        served = listings[0]
        model = self.options.model or _only_model(served, self.servers[0].shown)
        for server, listing in zip(self.servers, listings, strict=True):
            if listing and model not in listing:
                raise ServerUnavailable(
                    f"{server.shown} does not serve {model!r}; it serves {sorted(listing)}"
                )
        kind = self.options.kind
        if kind == "auto":
            kind = _detect_kind(self.servers[0], served)
        logger.info("serving %s from %d %s server(s)", model, len(self.servers), kind)
        return model, kind

    def _complete(self, request: Request, sampling: Sampling) -> Completions:
        try:
            messages = chat_messages(request, self.patch_size)
        except Exception as err:  # a media file that cannot be read fails this request only
            return RequestFailed(f"media could not be encoded: {err}")
        texts: list[str] = []
        while len(texts) < sampling.n:
            more = replace(
                sampling,
                n=sampling.n - len(texts),
                seed=None if sampling.seed is None else sampling.seed + len(texts),
            )
            outcome = self._with_retries(self._body(messages, more), more)
            if isinstance(outcome, RequestFailed):
                return outcome
            texts += outcome
        return texts[: sampling.n]

    def _with_retries(self, body: dict[str, Any], sampling: Sampling) -> Completions:
        attempts, attempt = self.options.retries + 1, 0
        while True:
            attempt += 1
            server = self._pick()
            with self._slot(server):
                try:
                    return self._attempt(server, body, sampling)
                except _Fail as err:
                    failure, retry = str(err), False
                except _Retry as err:
                    failure, retry = str(err), attempt < attempts
            if not retry:
                server.count("failures")
                return RequestFailed(failure, server.shown, attempt)
            server.count("retries")
            delay = self.options.backoff_s * 2 ** (attempt - 1) * random.uniform(0.5, 1)
            server.down_until = time.monotonic() + delay
            logger.warning("%s: %s; retrying in %.1f s", server.shown, failure, delay)
            time.sleep(delay)

    def _attempt(self, server: Server, body: dict[str, Any], sampling: Sampling) -> list[str]:
        server.count("requests")
        limit = BYTES_PER_TOKEN * sampling.max_new_tokens * sampling.n + REPLY_OVERHEAD_BYTES
        try:
            with server.client.stream(
                "POST", f"{server.url}/chat/completions", json=body
            ) as response:
                payload = _read_capped(response, limit)
        except httpx.TransportError as err:
            raise _Retry(f"{type(err).__name__}: {err}") from err
        if response.status_code in RETRIED_STATUS:
            raise _Retry(f"HTTP {response.status_code}: {_excerpt(payload)}")
        if response.status_code != 200:
            raise _Fail(f"HTTP {response.status_code}: {_excerpt(payload)}")
        texts, model = _read_choices(payload)
        self.reported_model = self.reported_model or model
        special = self.options.special_tokens
        return [cut_at_stop(_without(text, special), sampling.stop) for text in texts]

    def _body(self, messages: list[dict[str, Any]], sampling: Sampling) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "n": sampling.n,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        suppressed = self.options.suppress_token_ids
        if self.kind == "transformers":
            body["generation_config"] = json.dumps(_generation_config(sampling, suppressed))
            return body
        if sampling.stop:
            body["stop"] = list(sampling.stop)
        if suppressed:
            body["logit_bias"] = {str(token): -100.0 for token in suppressed}
        if self.kind in ("vllm", "sglang"):
            body["top_k"] = -1
        return body

    def _pick(self) -> Server:
        now = time.monotonic()
        live = [server for server in self.servers if server.down_until <= now]
        if not live:
            return min(self.servers, key=lambda server: server.down_until)
        return min(live, key=lambda server: server.in_flight)

    @contextmanager
    def _slot(self, server: Server) -> Iterator[None]:
        with server.lock:
            server.in_flight += 1
        server.slots.acquire()
        try:
            yield
        finally:
            server.slots.release()
            with server.lock:
                server.in_flight -= 1


def _api_key(options: ServerOptions) -> str:
    if options.api_key:
        return options.api_key
    found = (os.environ.get(name) for name in API_KEY_VARIABLES)
    return next((key for key in found if key), "EMPTY")


def _listing(server: Server) -> dict[str, str]:
    """The served model names and their owners; empty when the server lists none. A server
    that cannot be reached is a `ServerUnavailable` naming it."""
    try:
        response = _probe(server, f"{server.url}/models")
    except httpx.TransportError as err:
        raise ServerUnavailable(f"cannot reach the server at {server.shown}: {err}") from err
    if response.status_code in (401, 403):
        raise ServerUnavailable(
            f"{server.shown} refused the API key (HTTP {response.status_code}); set "
            f"{' or '.join(API_KEY_VARIABLES)}"
        )
    try:
        entries = response.json()["data"] if response.status_code == 200 else []
        return {str(entry["id"]): str(entry.get("owned_by", "")) for entry in entries}
    except (ValueError, KeyError, TypeError):
        return {}


def _probe(server: Server, url: str) -> httpx.Response:
    """A GET on a connection of its own: a server that answered an error may reset the
    connections it kept open."""
    return httpx.get(url, headers=server.client.headers, timeout=10)


def _only_model(listing: dict[str, str], shown: str) -> str:
    if len(listing) == 1:
        return next(iter(listing))
    served = f"it lists {sorted(listing)}" if listing else "it lists none"
    raise ServerUnavailable(f"name the served model for {shown} with --model ({served})")


def _detect_kind(server: Server, listing: dict[str, str]) -> ServerKind:
    owners = set(listing.values())
    for kind in ("vllm", "sglang"):
        if kind in owners:
            return kind
    root = server.url.removesuffix("/v1")
    try:
        paths = _probe(server, f"{root}/openapi.json").json().get("paths", {})
    except (httpx.HTTPError, ValueError, AttributeError):
        paths = {}
    return "transformers" if "/v1/systemone" in paths else "openai"


def _generation_config(sampling: Sampling, suppressed: Sequence[int]) -> dict[str, Any]:
    """What `transformers serve` needs to decode as the hf engine does: unset fields fall
    back to the checkpoint's generation config, so sampling and top-k are set outright."""
    sampled = sampling.temperature > 0
    config: dict[str, Any] = {
        "do_sample": sampled,
        "max_new_tokens": sampling.max_new_tokens,
        "top_k": 0,
        "suppress_tokens": list(suppressed) or None,
    }
    if sampled:
        config |= {"temperature": sampling.temperature, "top_p": sampling.top_p}
    return config


def _read_capped(response: httpx.Response, limit: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise _Fail(
                f"reply larger than {limit:,} bytes, more than an answer of at most the asked "
                "tokens can hold"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _read_choices(payload: bytes) -> tuple[list[str], str | None]:
    """The texts of a chat completion and the model it names; anything else is retried."""
    try:
        reply = json.loads(payload)
        choices = sorted(reply["choices"], key=lambda choice: choice.get("index", 0))
        texts = [choice["message"]["content"] for choice in choices]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise _Retry(f"not a chat completion ({type(err).__name__}): {_excerpt(payload)}") from err
    if not texts or not all(isinstance(text, str) for text in texts):
        raise _Retry(f"a chat completion without answer texts: {_excerpt(payload)}")
    model = reply.get("model")
    # a reply may escape a lone surrogate, which no file or stream could then hold
    texts = [without_lone_surrogates(text) for text in texts]
    return texts, model if isinstance(model, str) else None


def _without(text: str, tokens: Sequence[str]) -> str:
    for token in tokens:
        text = text.replace(token, "")
    return text


def _excerpt(payload: bytes) -> str:
    text = payload[:200].decode("utf-8", errors="replace")
    return text + ("..." if len(payload) > 200 else "")
