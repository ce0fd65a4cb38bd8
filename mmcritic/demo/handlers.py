"""What each tab does, without any Gradio: check the inputs, ask the model, and turn its results
into the values the page shows.

Every handler returns (or yields) a view whose fields are, in order, the tab's output
components, so the page is a thin layout over these functions and they can be tested without a
browser. Nothing a visitor sends or a model writes ends in an exception: bad inputs, unreadable
model output and model failures all become a message in the view's `status` field, also passed
to `notify` so the page can pop it up. The page runs events without Gradio's preprocessing, so
every argument is whatever JSON an API caller sent: each is type-checked here, the cheap fields
first, and the image is opened last, only if it is a file Gradio received as an upload.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from PIL import Image

from mmcritic.demo.inputs import (
    MAX_ANSWER_CHARS,
    MAX_CANDIDATES,
    MAX_IMAGE_PIXELS,
    MAX_QUESTION_CHARS,
    MIN_CANDIDATES,
    InputError,
    load_image,
    require_count,
    require_flag,
    require_positive,
    require_text,
    uploaded_file,
)
from mmcritic.demo.model import DemoModel
from mmcritic.inference import BestOfN, Comparison, Score

logger = logging.getLogger(__name__)

VERDICT_NAMES = {"1": "A is better", "2": "B is better", "tie": "Tie"}
NO_VERDICT = "No verdict"
# Why an answer could not be read, in the words of `parse_verdict`'s and `parse_score`'s reasons.
UNREADABLE = {
    "no_box": "it put no answer in \\boxed{} after its reasoning",
    "box_only_in_think": "its only \\boxed{} answer is inside the <think> block",
    "unclosed_think": "it never closed its <think> block",
    "conflicting_boxes": "its \\boxed{} answers contradict each other",
    "unrecognised": "its \\boxed{} answer is not one the parser knows",
    "out_of_range": "its score is outside the scale",
}
MAX_SEED = 2**31 - 1
MAX_TEMPERATURE = 2.0


class CompareView(NamedTuple):
    rationale: str = ""
    verdict: str | None = None
    agreement: str = ""
    status: str = ""


class ScoreView(NamedTuple):
    score: float | None = None
    rationale: str = ""
    status: str = ""


class BestOfNView(NamedTuple):
    candidates: list[list[Any]]
    bracket: list[list[Any]]
    winner: str = ""
    status: str = ""


def _no_candidates() -> BestOfNView:
    return BestOfNView([], [])


class DemoApp:
    """The three tabs' behaviour over one `DemoModel`.

    Images are opened only from `upload_dir`, the folder where Gradio keeps what it received
    (see `uploaded_file`), and only when at most `max_pixels` large. `notify` receives every
    problem message (the page passes `gr.Warning`, so it pops up as well as staying in the
    status line)."""

    def __init__(
        self,
        model: DemoModel,
        upload_dir: Path,
        notify: Callable[[str], Any] = logger.warning,
        max_pixels: int = MAX_IMAGE_PIXELS,
    ):
        self.model = model
        self.upload_dir = upload_dir
        self.notify = notify
        self.max_pixels = max_pixels

    def compare(
        self, image: Any, question: Any, answer_a: Any, answer_b: Any, both_orders: Any
    ) -> Iterator[CompareView]:
        """Streams the rationale(s) while the critic writes, then the verdict and agreement."""
        yield from self._guarded(
            self._compare, CompareView, image, question, answer_a, answer_b, both_orders
        )

    def score(self, image: Any, question: Any, answer: Any) -> Iterator[ScoreView]:
        """Streams the rationale, then the score on the critic's scale."""
        yield from self._guarded(self._score, ScoreView, image, question, answer)

    def best_of_n(
        self, image: Any, question: Any, n: Any, temperature: Any, seed: Any
    ) -> Iterator[BestOfNView]:
        """Samples `n` answers, shows them, then shows the knockout bracket and its winner."""
        yield from self._guarded(
            self._best_of_n, _no_candidates, image, question, n, temperature, seed
        )

    def _guarded(
        self, handler: Callable[..., Iterator[Any]], empty: Callable[[], Any], *args: Any
    ) -> Iterator[Any]:
        """Runs a handler; an `InputError` or a model failure becomes the view's status. A
        failure's own text stays in the server log: it can name server paths and says nothing
        a visitor can act on."""
        try:
            yield from handler(*args)
        except InputError as err:
            yield empty()._replace(status=self._problem(str(err)))
        except Exception as err:
            logger.exception("the model failed")
            message = (
                f"The model failed on this input ({type(err).__name__}). Try again with a "
                "smaller image or shorter text; the server log has the details."
            )
            yield empty()._replace(status=self._problem(message))

    def _problem(self, message: str) -> str:
        self.notify(message)
        return f"**Warning:** {message}"

    def _image(self, payload: Any) -> Image.Image:
        return load_image(uploaded_file(payload, self.upload_dir), self.max_pixels)

    def _compare(
        self, image: Any, question: Any, answer_a: Any, answer_b: Any, both_orders: Any
    ) -> Iterator[CompareView]:
        question = require_text(question, "question", MAX_QUESTION_CHARS)
        answer_a = require_text(answer_a, "answer A", MAX_ANSWER_CHARS)
        answer_b = require_text(answer_b, "answer B", MAX_ANSWER_CHARS)
        both = require_flag(both_orders, '"Judge both orders"')
        picture = self._image(image)
        started = time.perf_counter()
        for step in self.model.compare(picture, question, answer_a, answer_b, both):
            if isinstance(step, Comparison):
                yield self._compared(step, time.perf_counter() - started)
            else:
                yield CompareView(_orders_text(step), status="The critic is judging...")

    def _compared(self, comparison: Comparison, seconds: float) -> CompareView:
        texts = [comparison.rationale]
        if comparison.both_orders:
            texts.append(comparison.swapped_rationale or "")
        decision = comparison.decision
        status = f"Judged in {seconds:.1f} s."
        if decision is None:
            status = self._problem(
                f"The critic gave no verdict the parser can read: {_why(comparison.reason)}. "
                "Its output is shown as written."
            )
        return CompareView(
            _orders_text(texts), _verdict_name(comparison), _agreement(comparison), status
        )

    def _score(self, image: Any, question: Any, answer: Any) -> Iterator[ScoreView]:
        question = require_text(question, "question", MAX_QUESTION_CHARS)
        answer = require_text(answer, "answer", MAX_ANSWER_CHARS)
        picture = self._image(image)
        started = time.perf_counter()
        for step in self.model.score(picture, question, answer):
            if isinstance(step, Score):
                yield self._scored(step, time.perf_counter() - started)
            else:
                yield ScoreView(None, step[0], "The critic is scoring...")

    def _scored(self, score: Score, seconds: float) -> ScoreView:
        if score.score is None:
            message = (
                f"The critic gave no score the parser can read: {_why(score.reason)}. "
                "Its output is shown as written."
            )
            return ScoreView(None, score.rationale, self._problem(message))
        scale = self.model.critic.scale
        return ScoreView(
            score.score, score.rationale, f"Scored {score.score:g} of {scale} in {seconds:.1f} s."
        )

    def _best_of_n(
        self, image: Any, question: Any, n: Any, temperature: Any, seed: Any
    ) -> Iterator[BestOfNView]:
        question = require_text(question, "question", MAX_QUESTION_CHARS)
        count = require_count(n, "number of candidates", MIN_CANDIDATES, MAX_CANDIDATES)
        seed_value = require_count(seed, "seed", 0, MAX_SEED)
        heat = require_positive(temperature, "temperature", MAX_TEMPERATURE)
        picture = self._image(image)
        started = time.perf_counter()
        yield BestOfNView([], [], status=f"Sampling {count} answers...")
        answers = self.model.answers(picture, question, count, heat, seed_value)
        candidates = [answer.text for answer in answers]
        rows = [[i, answer.final_answer or "", answer.text] for i, answer in enumerate(answers)]
        yield BestOfNView(rows, [], status="The critic is judging the bracket...")
        result = self.model.best_of_n(picture, question, candidates, seed_value)
        yield self._chosen(rows, result, time.perf_counter() - started)

    def _chosen(self, rows: list[list[Any]], result: BestOfN, seconds: float) -> BestOfNView:
        bracket = _bracket_rows(result)
        winner = result.candidates[result.chosen]
        heading = f"Candidate {result.chosen} (final answer: {result.answer or 'none'})"
        status = f"{result.comparisons} critic calls in {seconds:.1f} s."
        matches = [match for bracket_round in result.rounds for match in bracket_round.matches]
        if matches and all(match.resolved_by == "unreadable" for match in matches):
            status = self._problem(
                "The critic gave no readable verdict in any match, so every match went to the "
                "lower-numbered candidate; the winner says nothing about quality."
            )
        return BestOfNView(rows, bracket, f"{heading}\n\n{winner}", status)


def _orders_text(texts: list[str]) -> str:
    """One rationale as it is; two under headings saying which order each judged."""
    if len(texts) == 1:
        return texts[0]
    given, swapped = texts
    return f"[A shown first]\n{given}\n\n[B shown first]\n{swapped}"


def _verdict_name(comparison: Comparison) -> str:
    decision = comparison.decision
    if decision is None:
        return NO_VERDICT
    if comparison.both_orders and comparison.agreement is False:
        return "Tie (the orders disagree)"
    return VERDICT_NAMES[decision]


def _agreement(comparison: Comparison) -> str:
    """Markdown saying what each order concluded and whether they agree."""
    if not comparison.both_orders:
        return (
            "Judged in the order given only. Tick **Judge both orders** to check that the "
            "verdict does not depend on which answer is shown first."
        )
    given = VERDICT_NAMES.get(comparison.verdict or "", NO_VERDICT)
    swapped = VERDICT_NAMES.get(comparison.swapped_verdict or "", NO_VERDICT)
    table = (
        f"| order | verdict |\n|---|---|\n"
        f"| A shown first | {given} |\n| B shown first | {swapped} |"
    )
    if comparison.agreement is None:
        summary = "**Agreement unknown**: at least one order gave no readable verdict."
    elif comparison.agreement:
        summary = "**The orders agree.**"
    else:
        summary = (
            "**The orders disagree**: the preference follows the position of the answers, not "
            "their content, so it counts as a tie."
        )
    return f"{table}\n\n{summary}"


def _bracket_rows(result: BestOfN) -> list[list[Any]]:
    """One row per match: round, the two candidates, the verdict, the winner and why."""
    rows = []
    for number, bracket_round in enumerate(result.rounds, start=1):
        for match in bracket_round.matches:
            verdict = VERDICT_NAMES.get(match.comparison.decision or "", NO_VERDICT)
            rows.append([number, match.a, match.b, verdict, match.winner, match.resolved_by])
        if bracket_round.bye is not None:
            rows.append([number, bracket_round.bye, "-", "-", bracket_round.bye, "bye"])
    return rows


def _why(reason: str) -> str:
    return UNREADABLE.get(reason, reason)
