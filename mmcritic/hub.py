"""Whether the model hub can be reached, asked once per process.

Offline, every hub lookup (a model id, a benchmark's dataset id) spends tens of seconds on
retries and warnings before it fails with a message about the internet. When the hub's host
cannot be reached, the hub libraries are put in their offline mode once, so a lookup reads the
local cache alone and a miss fails at once, in one line.
"""

from __future__ import annotations

import logging
import os
import socket
from functools import cache
from urllib.parse import urlparse

logger = logging.getLogger(__name__)

# long enough for a slow network's handshake, short enough that an offline start does not wait
PROBE_SECONDS = 3.0


@cache
def hub_reachable() -> bool:
    """Whether the hub (`HF_ENDPOINT`, default huggingface.co) accepts a connection; False
    without asking when `HF_HUB_OFFLINE` is set. When it is not reachable, offline mode is
    switched on for huggingface_hub and datasets."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        socket.create_connection((endpoint.hostname or "", port), timeout=PROBE_SECONDS).close()
    except OSError as err:
        logger.info(
            "the hub at %s cannot be reached (%s): using the local cache only",
            endpoint.hostname,
            err,
        )
        _go_offline()
        return False
    return True


def _go_offline() -> None:
    import huggingface_hub.constants

    os.environ["HF_HUB_OFFLINE"] = "1"
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    try:
        import datasets.config
    except ImportError:
        return
    datasets.config.HF_HUB_OFFLINE = True
