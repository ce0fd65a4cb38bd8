"""The demo served on localhost with the tiny model and called through `gradio_client`, as an
API user would: every endpoint, and every bad input a visitor can send, ends in a message in the
outputs, never in an exception. The tiny model has random weights, so its critiques are never
readable: that is the "model returns nothing parseable" case."""

from __future__ import annotations

from concurrent.futures import wait
from pathlib import Path

import httpx
import pytest
from PIL import Image

pytest.importorskip("gradio")
from gradio_client import Client, handle_file

from mmcritic.demo import create_demo, launch
from mmcritic_dev.demo_screenshots import (
    SHOTS,
    ChromiumMissing,
    find_chromium,
    free_port,
    screenshot_demo,
)

# Gradio's queue uses pandas options that pandas 3 deprecates; nothing the demo can change.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")

MAX_NEW_TOKENS = 6  # enough to stream a few steps; the tiny model writes nothing readable anyway


@pytest.fixture(scope="module")
def demo_url(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    demo = create_demo(
        str(tiny_model_dir),
        device="cpu",
        max_new_tokens=MAX_NEW_TOKENS,
        examples_dir=tmp_path_factory.mktemp("demo_examples"),
    )
    url = launch(demo, port=free_port(), prevent_thread_lock=True)
    yield url
    demo.close()


@pytest.fixture(scope="module")
def client(demo_url: str) -> Client:
    return Client(demo_url, verbose=False)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("uploads") / "red.png"
    Image.new("RGB", (112, 112), (220, 30, 30)).save(path)
    return str(path)


def _warning(status: str) -> str:
    assert status.startswith("**Warning:**"), status
    return status


def test_compare_streams_the_rationale_and_reports_an_unreadable_verdict(client, image):
    job = client.submit(
        handle_file(image), "What colour?", "Red.", "Blue.", False, api_name="/compare"
    )
    rationale, verdict, agreement, status = job.result()
    assert len(job.outputs()) > 2  # partial rationales came before the result
    assert rationale
    assert verdict["label"] == "No verdict"
    assert "order given only" in agreement
    assert "no verdict the parser can read" in _warning(status)


def test_compare_in_both_orders_shows_each_order(client, image):
    rationale, _, agreement, _ = client.predict(
        handle_file(image), "What colour?", "Red.", "Blue.", True, api_name="/compare"
    )
    assert "[A shown first]" in rationale and "[B shown first]" in rationale
    assert "| B shown first |" in agreement


def test_score_reports_an_unreadable_score_as_a_message(client, image):
    score, rationale, status = client.predict(
        handle_file(image), "What colour?", "Red.", api_name="/score"
    )
    assert score is None and rationale
    assert "no score the parser can read" in _warning(status)


def test_best_of_n_shows_candidates_bracket_and_winner(client, image):
    candidates, bracket, winner, status = client.predict(
        handle_file(image), "What colour?", 3, 1.0, 0, api_name="/best_of_n"
    )
    assert len(candidates["data"]) == 3
    assert [row[0] for row in bracket["data"]] == [1, 1, 2]  # two rounds, one bye
    assert winner.startswith("Candidate ")
    assert "no readable verdict in any match" in _warning(status)


@pytest.mark.parametrize(
    ("api_name", "inputs", "message"),
    [
        ("/compare", ["", "Red.", "Blue.", False], "question is empty"),
        ("/compare", ["What colour?", "Red.", "  ", False], "answer B is empty"),
        ("/score", ["What colour?", ""], "answer is empty"),
        ("/best_of_n", ["", 3, 1.0, 0], "question is empty"),
        ("/best_of_n", ["What colour?", 30, 1.0, 0], "from 2 to 8"),
        ("/best_of_n", ["What colour?", 3, 0.0, 0], "temperature must be above 0"),
    ],
)
def test_empty_or_out_of_range_fields_get_a_message(client, image, api_name, inputs, message):
    outputs = client.predict(handle_file(image), *inputs, api_name=api_name)
    assert message in _warning(outputs[-1])


def test_missing_image_gets_a_message(client):
    outputs = client.predict(None, "What colour?", "Red.", api_name="/score")
    assert "Upload an image" in _warning(outputs[-1])


def test_non_image_upload_gets_a_message(client, tmp_path: Path):
    upload = tmp_path / "notes.png"
    upload.write_text("this is text with an image's name")
    outputs = client.predict(handle_file(str(upload)), "Q?", "A.", "B.", False, api_name="/compare")
    assert "not an image" in _warning(outputs[-1])


def test_oversized_image_gets_a_message(client, tmp_path: Path):
    upload = tmp_path / "huge.png"
    Image.new("1", (6000, 4000)).save(upload)  # 24 megapixels in a few kilobytes
    outputs = client.predict(handle_file(str(upload)), "Q?", "A.", api_name="/score")
    assert "6000 x 4000 pixels" in _warning(outputs[-1])


def test_server_files_cannot_be_read_or_passed_as_uploads(demo_url, tmp_path: Path):
    secret = tmp_path / "secret.png"
    secret.write_text("do not serve")
    for path in (secret, Path(__file__)):
        response = httpx.get(f"{demo_url}gradio_api/file={path}")
        assert response.status_code == 403 and "do not serve" not in response.text
    payload = {"path": str(secret), "meta": {"_type": "gradio.FileData"}}
    started = httpx.post(f"{demo_url}gradio_api/call/score", json={"data": [payload, "Q?", "A."]})
    events = httpx.get(f"{demo_url}gradio_api/call/score/{started.json()['event_id']}", timeout=60)
    assert "event: error" in events.text and "do not serve" not in events.text


def test_concurrent_requests_queue_up_and_all_finish(client, image):
    jobs = [
        client.submit(handle_file(image), "What colour?", f"Answer {i}.", api_name="/score")
        for i in range(3)
    ]
    wait(jobs, timeout=120)
    assert all("parser" in job.result()[-1] for job in jobs)


def test_every_tab_in_a_real_browser_shows_its_result(tiny_model_dir: Path, tmp_path: Path):
    try:
        find_chromium()
    except ChromiumMissing as missing:
        pytest.skip(f"no browser to drive: {missing}")
    captures = screenshot_demo(str(tiny_model_dir), tmp_path, max_new_tokens=MAX_NEW_TOKENS)
    assert [capture.path.name for capture in captures] == [shot.file for shot in SHOTS]
    statuses = [capture.status for capture in captures]
    assert all(status.startswith("Warning:") for status in statuses), statuses
    assert "no verdict the parser can read" in statuses[0]
    assert "no score the parser can read" in statuses[1]
    assert "no readable verdict in any match" in statuses[2]
    for capture in captures:
        width, height = Image.open(capture.path).size
        assert width == 1280 and height > 800
