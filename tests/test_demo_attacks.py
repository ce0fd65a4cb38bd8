"""Attacks on the demo over real HTTP, as an untrusted caller of its API would make them.

The demo runs in this process on a free port of 127.0.0.1 with the tiny model, its uploads in a
folder of this test's own (`GRADIO_TEMP_DIR`), so a test can also place in it what no upload
could (a FIFO, a symlink). Calls are raw POSTs to `/gradio_api/call/<endpoint>`, as a script
would send them, and every call is bounded in time. The model notes the question of each call
that reaches it, so a test can tell that a refused call never ran the model.
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
import uuid
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

pytest.importorskip("gradio")
from gradio_client import Client, handle_file

from mmcritic.demo.examples import write_examples
from mmcritic.demo.handlers import DemoApp
from mmcritic.demo.inputs import UPLOAD_MARKER
from mmcritic.demo.model import DemoModel
from mmcritic.demo.ui import build_demo, launch, upload_folder
from mmcritic_dev.demo_screenshots import free_port

# Gradio's queue uses pandas options that pandas 3 deprecates; nothing the demo can change.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")

MAX_NEW_TOKENS = 4
CALL_SECONDS = 20.0  # the longest any one call may take; a tiny-model call takes well under 1 s
NOT_UPLOADED = "not uploaded to this demo"
NOT_A_FILE = "folder or a special file"
SERVER_PATH = re.compile(r"/(?:tmp|home|root|work|usr|etc|var)/[^\"'\s\\<>]+")


class RecordingModel(DemoModel):
    """The real tiny model, noting the question of every call that reaches it."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.questions: list[str] = []

    def compare(self, image, question, answer_a, answer_b, both_orders):
        self.questions.append(question)
        return super().compare(image, question, answer_a, answer_b, both_orders)

    def score(self, image, question, answer):
        self.questions.append(question)
        return super().score(image, question, answer)

    def answers(self, image, question, n, temperature, seed):
        self.questions.append(question)
        return super().answers(image, question, n, temperature, seed)


@dataclass(frozen=True)
class Server:
    url: str
    uploads: Path
    examples: Path
    model: RecordingModel


@dataclass(frozen=True)
class Outcome:
    """The last event of a call's stream (`complete` or `error`), its data and the raw stream."""

    event: str
    data: Any
    text: str

    @property
    def status(self) -> str:
        assert self.event == "complete", self.text
        return self.data[-1]


@pytest.fixture(scope="module")
def server(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    uploads = tmp_path_factory.mktemp("gradio_uploads")
    examples = tmp_path_factory.mktemp("demo_examples")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRADIO_TEMP_DIR", str(uploads))  # read by Gradio at every upload and check
        model = RecordingModel.load(str(tiny_model_dir), "cpu", MAX_NEW_TOKENS)
        demo = build_demo(DemoApp(model, upload_folder()), write_examples(examples), "tiny")
        url = launch(demo, port=free_port(), prevent_thread_lock=True)
        try:
            yield Server(url, uploads, examples, model)
        finally:
            demo.close()


@pytest.fixture
def red_png(tmp_path: Path) -> Path:
    path = tmp_path / "red.png"
    Image.new("RGB", (96, 96), (220, 30, 30)).save(path)
    return path


def call(server: Server, endpoint: str, *data: Any) -> Outcome:
    """One raw API call: POST the inputs, then read the event stream to its end."""
    deadline = time.monotonic() + CALL_SECONDS
    posted = httpx.post(
        f"{server.url}gradio_api/call/{endpoint}", json={"data": list(data)}, timeout=CALL_SECONDS
    )
    posted.raise_for_status()
    stream_url = f"{server.url}gradio_api/call/{endpoint}/{posted.json()['event_id']}"
    event, payload, lines = "", None, []
    with httpx.stream("GET", stream_url, timeout=CALL_SECONDS) as stream:
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, f"/{endpoint} took over {CALL_SECONDS} s"
            lines.append(line)
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                payload = json.loads(line.removeprefix("data: "))
    return Outcome(event, payload, "\n".join(lines))


def upload(server: Server, path: Path) -> dict[str, Any]:
    """Uploads a file as the page does and returns the file object that names it."""
    with path.open("rb") as file:
        response = httpx.post(
            f"{server.url}gradio_api/upload", files={"files": (path.name, file)}, timeout=10
        )
    response.raise_for_status()
    return {"path": response.json()[0], "orig_name": path.name, "meta": UPLOAD_MARKER}


def question() -> str:
    """A question no other call asks, to look for in the model's record."""
    return f"What colour? ({uuid.uuid4().hex[:8]})"


def write_png_header(path: Path, width: int, height: int) -> Path:
    """A PNG that declares `width` x `height` one-bit pixels but holds no pixel data: what a
    decoder would allocate, in under 100 bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b""))
    path.write_bytes(png + chunk(b"IEND", b""))
    return path


def assert_refused(server: Server, outcome: Outcome, asked: str, message: str) -> None:
    assert message in outcome.status, outcome.status
    assert outcome.data[0] in ("", None)  # no rationale or score: nothing was judged
    assert asked not in server.model.questions
    assert not SERVER_PATH.search(outcome.text), outcome.text


@pytest.mark.parametrize("target", ["secret", "/etc/passwd"])
def test_a_server_path_sent_without_meta_is_refused_before_the_model_runs(
    server: Server, tmp_path: Path, target: str
):
    path = write_png_header(tmp_path / "secret.png", 8, 8) if target == "secret" else target
    asked = question()
    outcome = call(server, "compare", {"path": str(path)}, asked, "Red.", "Blue.", False)
    assert_refused(server, outcome, asked, NOT_UPLOADED)
    assert str(path) not in outcome.text


def test_a_server_path_sent_with_meta_is_refused_by_gradio_without_a_message(
    server: Server, red_png: Path
):
    asked = question()
    payload = {"path": str(red_png), "meta": UPLOAD_MARKER}
    outcome = call(server, "score", payload, asked, "Red.")
    assert (outcome.event, outcome.data) == ("error", {"error": None})
    assert asked not in server.model.questions


def test_a_fifo_is_refused_and_the_worker_stays_free(server: Server, tmp_path: Path, red_png):
    outside, inside = tmp_path / "pipe.png", server.uploads / f"pipe-{uuid.uuid4().hex}.png"
    os.mkfifo(outside)
    os.mkfifo(inside)  # inside the upload folder: only the regular-file check stands in the way
    for payload, message in (
        ({"path": str(outside)}, NOT_UPLOADED),
        ({"path": str(inside), "meta": UPLOAD_MARKER}, NOT_A_FILE),
        ({"path": str(inside)}, NOT_A_FILE),
    ):
        asked = question()
        assert_refused(server, call(server, "score", payload, asked, "Red."), asked, message)
    started = time.monotonic()
    outcome = call(server, "score", upload(server, red_png), "What colour?", "Red.")
    assert "no score the parser can read" in outcome.status
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("inside", "meta", "message"),
    [(True, True, NOT_A_FILE), (True, False, NOT_A_FILE), (False, False, NOT_UPLOADED)],
)
def test_a_directory_is_refused(server: Server, tmp_path: Path, inside, meta, message):
    folder = server.uploads if inside else tmp_path
    payload = {"path": str(folder)} | ({"meta": UPLOAD_MARKER} if meta else {})
    asked = question()
    assert_refused(server, call(server, "score", payload, asked, "Red."), asked, message)


def test_a_symlink_out_of_the_upload_folder_is_refused(server: Server, red_png: Path):
    link = server.uploads / f"link-{uuid.uuid4().hex}.png"
    link.symlink_to(red_png)
    asked = question()
    assert_refused(
        server, call(server, "score", {"path": str(link)}, asked, "Red."), asked, NOT_UPLOADED
    )
    asked = question()
    marked = call(server, "score", {"path": str(link), "meta": UPLOAD_MARKER}, asked, "Red.")
    assert (marked.event, marked.data) == ("error", {"error": None})  # Gradio resolves it too
    assert asked not in server.model.questions


def test_an_image_pillow_would_not_open_is_reported_as_too_large(server, tmp_path: Path):
    huge = write_png_header(tmp_path / "huge.png", 20_000, 20_000)  # 400 megapixels in 60 bytes
    asked = question()
    outcome = call(server, "score", upload(server, huge), asked, "Red.")
    assert_refused(server, outcome, asked, "too large (over 179 megapixels, limit 16.8)")


def test_an_image_over_the_demo_limit_is_reported_with_its_size(server, tmp_path: Path):
    big = write_png_header(tmp_path / "big.png", 5_000, 5_000)
    asked = question()
    outcome = call(server, "score", upload(server, big), asked, "Red.")
    assert_refused(server, outcome, asked, "too large (25.0 megapixels, limit 16.8)")


def test_a_non_image_upload_is_refused(server: Server, tmp_path: Path):
    notes = tmp_path / "notes.png"
    notes.write_text("plain text under an image's name")
    asked = question()
    outcome = call(server, "score", upload(server, notes), asked, "Red.")
    assert_refused(server, outcome, asked, "not an image the demo can read")


@pytest.mark.parametrize(
    ("endpoint", "inputs", "message"),
    [
        ("compare", [5, "Red.", "Blue.", False], "The question must be text, got a number."),
        ("compare", [["Q?"], "Red.", "Blue.", False], "The question must be text, got a list."),
        ("compare", [None, "Red.", "Blue.", False], "The question is empty"),
        ("compare", ["Q?", "Red.", {"a": 1}, False], "answer B must be text, got an object."),
        ("compare", ["Q?", "Red.", "Blue.", "yes"], "must be true or false, got text."),
        ("score", ["Q?", 3.5], "The answer must be text, got a number."),
        ("best_of_n", ["Q?", "3", 1.0, 0], "from 2 to 8, got text."),
        (
            "best_of_n",
            ["Q?", 3, None, 0],
            "temperature must be above 0 and at most 2, got nothing.",
        ),
        ("best_of_n", ["Q?", 3, 1.0, [0]], "seed must be a whole number"),
    ],
)
def test_wrong_types_get_a_message_not_an_exception(server, red_png, endpoint, inputs, message):
    outcome = call(server, endpoint, upload(server, red_png), *inputs)
    status = outcome.status
    assert message in status and "Error" not in status and "Traceback" not in outcome.text


@pytest.mark.parametrize("image", [5, "/etc/passwd", ["/etc/passwd"]])
def test_an_image_that_is_not_a_file_object_is_refused_by_gradio_without_a_message(
    server: Server, image: Any
):
    asked = question()
    outcome = call(server, "score", image, asked, "Red.")
    assert (outcome.event, outcome.data) == ("error", {"error": None})
    assert asked not in server.model.questions


def test_a_burst_of_concurrent_calls_all_finish(server: Server, tmp_path: Path, red_png: Path):
    uploaded = upload(server, red_png)
    os.mkfifo(tmp_path / "pipe.png")
    attacks = [{"path": str(tmp_path / "pipe.png")}, {"path": "/etc/passwd"}]
    payloads = [uploaded, *attacks] * 3 + [uploaded]
    started = time.monotonic()
    with ThreadPoolExecutor(len(payloads)) as pool:
        outcomes = list(pool.map(lambda p: call(server, "score", p, question(), "Red."), payloads))
    assert time.monotonic() - started < CALL_SECONDS
    for payload, outcome in zip(payloads, outcomes, strict=True):
        expected = "no score the parser can read" if payload is uploaded else NOT_UPLOADED
        assert expected in outcome.status


def test_gradio_client_uploads_and_the_page_examples_still_run(server: Server, red_png: Path):
    client = Client(server.url, verbose=False)
    asked = question()
    _, rationale, status = client.predict(handle_file(red_png), asked, "Red.", api_name="/score")
    assert rationale and "no score the parser can read" in status
    assert asked in server.model.questions
    config = httpx.get(f"{server.url}config", timeout=10).json()
    example = next(
        sample[0]
        for component in config["components"]
        for sample in component["props"].get("samples") or []
        if isinstance(sample[0], dict)
    )
    outcome = call(server, "score", example, "What colour?", "Red.")
    assert "no score the parser can read" in outcome.status
    assert not SERVER_PATH.search(outcome.text)


def test_pages_and_api_description_name_no_server_path_outside_the_upload_folder(
    server: Server, tiny_model_dir: Path
):
    uploads = os.path.realpath(server.uploads)
    for route in ("", "config", "gradio_api/info", "gradio_api/openapi.json"):
        text = httpx.get(f"{server.url}{route}", timeout=10).text
        for private in (str(tiny_model_dir), str(server.examples), os.getcwd()):
            assert private not in text, (route, private)
        paths = SERVER_PATH.findall(text)  # Gradio names example images by their upload path
        assert all(os.path.realpath(path).startswith(uploads) for path in paths), paths
