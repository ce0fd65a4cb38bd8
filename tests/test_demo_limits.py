"""The demo's memory and disk stay bounded under oversized requests: bodies over the limit are
refused before they are read, over real HTTP, and uploads leave with Gradio's cache sweep."""

from __future__ import annotations

import http.client
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from gradio.route_utils import delete_files_created_by_app
from PIL import Image

from mmcritic.demo.examples import write_examples
from mmcritic.demo.handlers import DemoApp
from mmcritic.demo.limits import DELETE_CACHE, MAX_BODY_BYTES
from mmcritic.demo.model import DemoModel
from mmcritic.demo.ui import build_demo, launch, upload_folder
from mmcritic_dev.demo_screenshots import free_port


@pytest.fixture(scope="module")
def demo(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    uploads = tmp_path_factory.mktemp("gradio_uploads")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRADIO_TEMP_DIR", str(uploads))
        model = DemoModel.load(str(tiny_model_dir), "cpu", 4)
        examples = write_examples(tmp_path_factory.mktemp("examples"))
        blocks = build_demo(DemoApp(model, upload_folder()), examples, "tiny")
        url = launch(blocks, port=free_port(), prevent_thread_lock=True)
        try:
            yield blocks, url, uploads
        finally:
            blocks.close()


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_oversized_bodies_are_refused_before_they_are_read_and_memory_stays_flat(demo):
    _, url, _ = demo
    body = b'{"data": ["' + b"x" * (40 * 1024 * 1024) + b'"]}'
    endpoint = f"{url}gradio_api/call/compare"
    httpx.post(endpoint, content=b'{"data": []}', timeout=30)  # a first call warms the server
    before = _rss_mib()
    for _ in range(5):
        refused = httpx.post(endpoint, content=body, timeout=60)
        assert refused.status_code == 413
    assert _rss_mib() - before < 100  # the bodies were 200 MB in all


def test_a_chunked_body_is_cut_off_at_the_limit(demo):
    _, url, _ = demo
    chunk = b"x" * (1024 * 1024)

    def chunks():
        for _ in range(MAX_BODY_BYTES // len(chunk) + 8):
            yield chunk

    refused = httpx.post(f"{url}gradio_api/call/compare", content=chunks(), timeout=60)
    assert refused.status_code == 413


def test_a_body_with_a_false_length_header_is_refused(demo):
    _, url, _ = demo
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.putrequest("POST", "/gradio_api/call/compare")
    connection.putheader("Content-Length", "not-a-number")
    connection.endheaders()
    assert connection.getresponse().status in (400, 413)


def test_uploads_are_swept_from_disk_and_examples_kept(demo, tmp_path):
    blocks, url, uploads = demo
    assert blocks.delete_cache == DELETE_CACHE
    picture = tmp_path / "red.png"
    Image.new("RGB", (64, 64), "red").save(picture)
    with picture.open("rb") as handle:
        [stored] = httpx.post(
            f"{url}gradio_api/upload", files={"files": (picture.name, handle)}, timeout=30
        ).json()
    assert Path(stored).is_file() and Path(stored).is_relative_to(uploads)
    kept = {path for path in uploads.rglob("*") if path.is_file()} - {Path(stored)}

    delete_files_created_by_app(blocks, age=0)  # the sweep `delete_cache` schedules

    assert not Path(stored).exists()
    assert all(path.exists() for path in kept)
