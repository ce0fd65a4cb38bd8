"""The Gradio page: three tabs laid over `DemoApp`, their examples, and safe launch settings.

Serving rests on Gradio's defaults, kept on purpose: no `allowed_paths`, so the server hands
out only files it created (uploads, example images it copied into its upload folder), and no
error texts (`show_error=False`), which can name server paths. Events run with
`preprocess=False`: the handlers get the raw JSON of each input and check it themselves, so a
wrong type, a number out of range or a file that is not an image gets a message rather than
Gradio's bare error. That also means Gradio does not check every image path: a file object sent
without Gradio's `meta` marker reaches the handler unchecked, so `DemoApp` opens only files
inside Gradio's upload folder (`uploaded_file`). The queue runs one model call at a time (the
three endpoints share one concurrency group) and refuses requests beyond `MAX_QUEUE` instead of
piling them up.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

try:
    import gradio as gr
    from gradio.utils import get_upload_folder
    from starlette.middleware import Middleware
except ImportError as err:
    raise ImportError(
        "the demo needs Gradio; install it with `pip install 'mmcritic[demo]'`"
    ) from err

from mmcritic.demo.examples import Example, best_of_n_rows, compare_rows, score_rows, write_examples
from mmcritic.demo.handlers import MAX_TEMPERATURE, DemoApp
from mmcritic.demo.inputs import (
    MAX_ANSWER_CHARS,
    MAX_CANDIDATES,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_QUESTION_CHARS,
    MIN_CANDIDATES,
)
from mmcritic.demo.limits import DELETE_CACHE, BodyLimit
from mmcritic.demo.model import DemoModel
from mmcritic.inference.engines import EngineOptions, open_engine

logger = logging.getLogger(__name__)

MODEL_GROUP = "model"
MAX_QUEUE = 16
TITLE = "mmcritic: image critique"
# How the screenshot driver finds a tab's image input and status line.
IMAGE_CLASS = "mmcritic-image"
STATUS_CLASS = "mmcritic-status"


def create_demo(
    model_path: str,
    device: str = "auto",
    max_new_tokens: int = 512,
    examples_dir: Path | None = None,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    engine: EngineOptions | None = None,
) -> gr.Blocks:
    """Loads the model (or reaches the servers `engine` names), draws the example images (into
    a new temporary folder unless `examples_dir` is given) and builds the page. Images above
    `max_image_pixels` are refused before decoding."""
    model = (
        DemoModel.load(model_path, device, max_new_tokens)
        if engine is None or engine.engine == "hf"
        else DemoModel.served(open_engine(engine), max_new_tokens)
    )
    app = DemoApp(
        model,
        upload_folder(),
        notify=gr.Warning,
        max_pixels=max_image_pixels,
    )
    return build_demo(app, write_examples(examples_dir), Path(model_path).name or model_path)


def upload_folder() -> Path:
    """Where Gradio stores uploads and its copies of the examples: `GRADIO_TEMP_DIR`, else
    `gradio` in the system temp folder. Gradio's own check on file inputs uses this folder."""
    return Path(get_upload_folder())


def build_demo(app: DemoApp, examples: list[Example], model_name: str) -> gr.Blocks:
    """The page, with the queue set up; `launch` or a caller's own `launch()` serves it."""
    with gr.Blocks(title=TITLE, delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(
            f"# {TITLE}\n"
            f"Model: `{model_name}`. One model is both the critic (Compare, Score) and the "
            "policy whose answers it judges (Self-critique). The examples are synthetic images "
            "whose right answer is known."
        )
        with gr.Tabs():
            with gr.Tab("Compare", id="compare"):
                _compare_tab(app, examples)
            with gr.Tab("Score", id="score"):
                _score_tab(app, examples)
            with gr.Tab("Self-critique", id="best_of_n"):
                _best_of_n_tab(app, examples)
    return demo.queue(default_concurrency_limit=1, max_size=MAX_QUEUE)


def _image() -> gr.Image:
    return gr.Image(
        label="Image",
        type="filepath",
        sources=["upload", "clipboard"],
        height=260,
        elem_classes=IMAGE_CLASS,
    )


def _question() -> gr.Textbox:
    return gr.Textbox(label="Question", max_length=MAX_QUESTION_CHARS)


def _answer(label: str) -> gr.Textbox:
    return gr.Textbox(label=label, lines=2, max_length=MAX_ANSWER_CHARS)


def _status() -> gr.Markdown:
    return gr.Markdown(container=True, padding=True, elem_classes=STATUS_CLASS)


def _compare_tab(app: DemoApp, examples: list[Example]) -> None:
    with gr.Row():
        with gr.Column():
            inputs: list[Any] = [_image(), _question(), _answer("Answer A"), _answer("Answer B")]
            inputs.append(
                gr.Checkbox(
                    label="Judge both orders",
                    info="Judge again with B shown first: a fair critic gives the same verdict.",
                )
            )
            button = gr.Button("Compare", variant="primary")
        with gr.Column():
            verdict = gr.Label(label="Verdict")
            agreement = gr.Markdown()
            rationale = gr.Textbox(label="Rationale", lines=12, max_lines=24)
            status = _status()
    gr.Examples(compare_rows(examples), inputs=inputs)
    button.click(
        app.compare,
        inputs,
        [rationale, verdict, agreement, status],
        api_name="compare",
        concurrency_id=MODEL_GROUP,
        preprocess=False,
    )


def _score_tab(app: DemoApp, examples: list[Example]) -> None:
    scale = app.model.critic.scale
    with gr.Row():
        with gr.Column():
            inputs = [_image(), _question(), _answer("Answer")]
            button = gr.Button("Score", variant="primary")
        with gr.Column():
            score = gr.Number(label=f"Score (1 to {scale})", interactive=False)
            rationale = gr.Textbox(label="Rationale", lines=12, max_lines=24)
            status = _status()
    gr.Examples(score_rows(examples), inputs=inputs)
    button.click(
        app.score,
        inputs,
        [score, rationale, status],
        api_name="score",
        concurrency_id=MODEL_GROUP,
        preprocess=False,
    )


def _best_of_n_tab(app: DemoApp, examples: list[Example]) -> None:
    with gr.Row():
        with gr.Column():
            image, question = _image(), _question()
            n = gr.Slider(MIN_CANDIDATES, MAX_CANDIDATES, value=4, step=1, label="Candidates (N)")
            with gr.Accordion("Sampling", open=False):
                temperature = gr.Slider(
                    0.1, MAX_TEMPERATURE, value=1.0, step=0.1, label="Temperature"
                )
                seed = gr.Number(0, label="Seed", precision=0, minimum=0)
            button = gr.Button("Sample and pick the best", variant="primary")
        with gr.Column():
            winner = gr.Textbox(label="Winner", lines=4, max_lines=12)
            status = _status()
    candidates = gr.Dataframe(
        headers=["#", "final answer", "answer"],
        label="Candidates",
        column_widths=["6%", "18%", "76%"],
        wrap=True,
        interactive=False,
    )
    bracket = gr.Dataframe(
        headers=["round", "A", "B", "verdict", "winner", "decided by"],
        label="Knockout bracket",
        interactive=False,
    )
    gr.Examples(best_of_n_rows(examples), inputs=[image, question, n])
    button.click(
        app.best_of_n,
        [image, question, n, temperature, seed],
        [candidates, bracket, winner, status],
        api_name="best_of_n",
        concurrency_id=MODEL_GROUP,
        preprocess=False,
    )


def launch(
    demo: gr.Blocks,
    port: int | None = None,
    host: str = "127.0.0.1",
    share: bool = False,
    prevent_thread_lock: bool = False,
) -> str:
    """Serves the page and returns its local URL. Listens on localhost unless `host` says
    otherwise; `share` asks Gradio for a public link. Unless `prevent_thread_lock`, serves until
    Ctrl-C and then stops the server; the URLs are logged first, since the command prints its
    JSON only at the end."""
    _, url, share_url = demo.launch(
        server_name=host,
        server_port=port,
        share=share,
        prevent_thread_lock=True,
        max_file_size=MAX_IMAGE_BYTES,
        show_error=False,  # Gradio's error texts can name server paths; they stay in the log
        ssr_mode=False,  # served by Python alone; server-side rendering would start Node.js
        quiet=True,
        app_kwargs={"middleware": [Middleware(BodyLimit)]},
    )
    logger.info("demo running at %s%s", url, f" and {share_url}" if share_url else "")
    if not prevent_thread_lock:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            logger.info("stopping the demo")
        finally:
            demo.close(verbose=False)
    return url
