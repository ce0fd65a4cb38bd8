"""Choosing an engine: one set of options, one command-line spelling, one constructor.

`hf` runs transformers' `generate` in this process, `vllm` an in-process `vllm.LLM` (GPU), and
`openai` sends requests to OpenAI-compatible servers (`mmcritic.inference.engines.served`).
Every generating command takes `--engine` and, for `openai`, one `--base-url` per server.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from typing import Any

from mmcritic.inference.engines.base import ENGINE_NAMES, Engine, EngineName
from mmcritic.inference.engines.served import SERVER_KINDS, ServerKind, ServerOptions
from mmcritic.models.families import family_if_known, family_of
from mmcritic.models.loading import (
    check_model,
    load_model,
    load_processor,
    local_tokenizer,
    resolve_device,
    resolve_dtype,
    vision_token_ids,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineOptions:
    """Which engine and where its model is. `model` is a checkpoint folder or hub id (`hf`,
    `vllm`) or the served model name (`openai`; None takes the server's only model). For
    `openai`, `tokenizer` (default: `model`, when it loads here) supplies the vision placeholder
    ids to keep out of answers."""

    engine: EngineName = "hf"
    model: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    base_urls: tuple[str, ...] = ()
    api_key: str | None = None
    concurrency: int = 8
    timeout_s: float = 600.0
    retries: int = 3
    server_kind: ServerKind = "auto"
    tokenizer: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINE_NAMES:
            raise ValueError(f"unknown engine {self.engine!r}; one of {ENGINE_NAMES}")
        if self.engine == "openai" and not self.base_urls:
            raise ValueError("--engine openai needs --base-url (one per server)")
        if self.engine != "openai" and self.base_urls:
            raise ValueError(f"--base-url is for --engine openai, not {self.engine}")
        if self.engine != "openai" and not self.model:
            raise ValueError(f"--engine {self.engine} needs --model (a folder or hub id)")

    def describe(self) -> dict[str, Any]:
        """The choice as results files record it (server URLs come from the engine)."""
        return {"engine": self.engine, "model": self.model}


def open_engine(options: EngineOptions) -> Engine:
    """The engine `options` name, with its model loaded or its servers reached."""
    if options.engine == "openai":
        from mmcritic.inference.engines.served import ServedEngine

        engine = ServedEngine(server_options(options))
        engine.family = family_if_known(str(options.tokenizer or options.model))
        return engine
    model, processor = load_model_for_inference(
        str(options.model), options.device, options.dtype, options.engine
    )
    return engine_for(model, processor, options.batch_size)


def engine_for(model: Any, processor: Any, batch_size: int = 8) -> Engine:
    """The engine over what `load_model_for_inference` returned."""
    if type(model).__module__.startswith("vllm"):
        from mmcritic.inference.engines.vllm import VLLMEngine

        return VLLMEngine(model, processor, family_of(model.model_config.hf_config))
    from mmcritic.inference.engines.hf import HFEngine

    return HFEngine(model, processor, batch_size)


def load_model_for_inference(
    path: str, device: str = "auto", dtype: str = "auto", engine: EngineName = "hf"
) -> tuple[Any, Any]:
    """(model, processor) in eval mode on the chosen device, or a `vllm.LLM` for `vllm`."""
    if engine == "vllm":
        from mmcritic.inference.engines.vllm import load_vllm

        check_model(path)
        return load_vllm(path, dtype), load_processor(path)
    if engine != "hf":
        raise ValueError(f"{engine!r} loads no model here; in-process engines: hf, vllm")
    check_model(path)
    resolved_device = resolve_device(device)
    model = load_model(path, resolve_dtype(dtype, resolved_device)).to(resolved_device).eval()
    logger.info("loaded %s on %s", path, resolved_device)
    return model, load_processor(path)


def server_options(options: EngineOptions) -> ServerOptions:
    return ServerOptions(
        base_urls=options.base_urls,
        model=options.model,
        api_key=options.api_key,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        retries=options.retries,
        kind=options.server_kind,
        **_token_settings(options.tokenizer or options.model),
    )


def _token_settings(tokenizer_path: str | None) -> dict[str, Any]:
    """The vision placeholder ids and special tokens of the served model's tokenizer (a
    folder or cached hub id); none, with a warning saying what that costs, when it cannot be
    loaded here."""
    tokenizer = local_tokenizer(str(tokenizer_path))
    if tokenizer is None:
        logger.warning(
            "no tokenizer for %r here: vision placeholders are not suppressed during generation "
            "(servers still drop special tokens from most texts); pass --tokenizer",
            tokenizer_path,
        )
        return {}
    return {
        "suppress_token_ids": tuple(vision_token_ids(tokenizer)),
        "special_tokens": tuple(tokenizer.all_special_tokens),
    }


def add_engine_arguments(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    """`--engine`, `--base-url` and the server settings (`prefix` names a second engine, e.g.
    `judge-` for `--judge-engine`)."""
    flag = f"--{prefix}"
    parser.add_argument(
        f"{flag}engine",
        choices=ENGINE_NAMES,
        default="hf",
        help="hf: transformers in this process; vllm: vLLM in this process (GPU); openai: "
        "OpenAI-compatible servers (vllm serve, SGLang, transformers serve) at --base-url",
    )
    parser.add_argument(
        f"{flag}base-url",
        action="append",
        default=[],
        metavar="URL",
        help="an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1); repeat for several",
    )
    parser.add_argument(f"{flag}concurrency", type=int, default=8, help="requests per server")
    parser.add_argument(f"{flag}timeout", type=float, default=600.0, help="seconds a request")
    parser.add_argument(f"{flag}retries", type=int, default=3, help="retries a request")
    parser.add_argument(
        f"{flag}server-kind",
        choices=SERVER_KINDS,
        default="auto",
        help="the servers' sampling dialect; auto asks them",
    )
    parser.add_argument(
        f"{flag}tokenizer", help="openai: tokenizer folder for the vision placeholder ids"
    )


def engine_options(
    args: argparse.Namespace, model: str | None, batch_size: int = 8, prefix: str = ""
) -> EngineOptions:
    """`EngineOptions` from the flags `add_engine_arguments` added."""
    name = prefix.replace("-", "_")

    def flag(key: str) -> Any:
        return getattr(args, f"{name}{key}")

    return EngineOptions(
        engine=flag("engine"),
        model=model,
        device=getattr(args, "device", "auto"),
        dtype=getattr(args, "dtype", "auto"),
        batch_size=batch_size,
        base_urls=tuple(flag("base_url")),
        concurrency=flag("concurrency"),
        timeout_s=flag("timeout"),
        retries=flag("retries"),
        server_kind=flag("server_kind"),
        tokenizer=flag("tokenizer"),
    )


class FromPretrained:
    """Constructors for the classes built from `(model, processor, **options)` or an engine."""

    @classmethod
    def from_pretrained(
        cls, path: str, device: str = "auto", dtype: str = "auto", **kwargs: Any
    ) -> Any:
        """Loads the model in this process (`load_model_for_inference`); other arguments go
        to the class."""
        model, processor = load_model_for_inference(path, device, dtype)
        return cls(model, processor, **kwargs)

    @classmethod
    def on(cls, engine: Engine, **kwargs: Any) -> Any:
        """The class over an engine already open (a server, a shared in-process model)."""
        return cls(None, None, engine=engine, **kwargs)
