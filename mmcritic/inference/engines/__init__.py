"""Generation engines: requests in, completions out, in this process or from servers.

`base` defines requests, sampling and the engine interface; `hf`, `vllm` and `served` are the
engines; `options` chooses one (`EngineOptions`, `open_engine`, the `--engine` flags);
`messages` turns requests into OpenAI chat messages for servers.
"""

from mmcritic.inference.engines.base import (
    Engine,
    EngineError,
    EngineName,
    Request,
    RequestFailed,
    Sampling,
)
from mmcritic.inference.engines.options import (
    EngineOptions,
    engine_for,
    load_model_for_inference,
    open_engine,
)

__all__ = [
    "Engine",
    "EngineError",
    "EngineName",
    "EngineOptions",
    "Request",
    "RequestFailed",
    "Sampling",
    "engine_for",
    "load_model_for_inference",
    "open_engine",
]
