"""`transformers serve` on this machine: the real OpenAI-compatible server the served-engine tests
and `benchmarks/engine_throughput.py` talk to, started on 127.0.0.1 with a local checkpoint."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from mmcritic_dev.demo_screenshots import free_port

STARTUP_S = 180.0


@dataclass
class LocalServer:
    """A running `transformers serve`: where it listens and how to stop it."""

    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def kill(self) -> None:
        """Stops the server at once, as a crash would."""
        self.process.kill()
        self.process.wait(timeout=30)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def start_server(
    model_dir: Path, log: Path, port: int | None = None, threads: int = 1
) -> LocalServer:
    """Starts `transformers serve model_dir` and waits until it answers /health; the server
    uses `threads` CPU threads so it leaves the rest to its client."""
    executable = Path(sys.executable).parent / "transformers"
    if not executable.exists():
        raise FileNotFoundError(
            f"{executable} not found: install the serve extra (pip install 'mmcritic[serve]')"
        )
    port = port or free_port()
    env = os.environ | {
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    }
    command = [str(executable), "serve", str(model_dir), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--device", "cpu", "--log-level", "warning"]
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    server = LocalServer(process, port, log)
    _wait_until_healthy(server)
    return server


@contextmanager
def serving(model_dir: Path, log: Path, threads: int = 1) -> Iterator[LocalServer]:
    """A server for the duration of the block."""
    server = start_server(model_dir, log, threads=threads)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.kill()


def _wait_until_healthy(server: LocalServer) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"transformers serve exited:\n{server.log_tail()}")
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    server.kill()
    raise TimeoutError(
        f"transformers serve did not start in {STARTUP_S:.0f} s:\n{server.log_tail()}"
    )
