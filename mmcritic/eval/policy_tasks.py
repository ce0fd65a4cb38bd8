"""Policy benchmarks: dataset ids, column mapping, prompt and scorer for each.

Facts (ids, splits, columns, prompts, scoring rules) follow lmms-eval's task definitions
(github.com/EvolvingLMMs-Lab/lmms-eval, lmms_eval/tasks/<task>/) and each benchmark's official
scorer where lmms-eval cites one. Prompts end with an answer-format instruction; the runner
appends the think/boxed instruction unless it is switched off, and scorers read the final answer,
so a boxed answer and a direct one are scored alike. Instructions that say "directly" upstream
drop that word here, since the think instruction asks for reasoning first.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from mmcritic.eval import metrics
from mmcritic.eval.answers import (
    answer_span,
    extract_numbers,
    parse_number,
    plain_words,
    same_words,
)
from mmcritic.eval.choices import choice_letter, opens_with_letter, option_letters, read_choice
from mmcritic.eval.scorers import (
    anls,
    closest_option,
    letter_score,
    math_equal,
    numeric_match,
    open_match,
    relaxed_match,
    substring_match,
)
from mmcritic.eval.statements import (
    NEGATION,
    STOP_WORDS,
    content_words,
    offers_alternatives,
    settled_part,
)
from mmcritic.eval.tasks import DatasetRef, PolicyTask, Problem, Row, Scored
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no

MC_INSTRUCTION = "Answer with the option's letter from the given choices."
SHORT_INSTRUCTION = "Answer the question using a single word or phrase."
MATH_INSTRUCTION = "Answer with a number or a mathematical expression."
_IMAGE_TOKEN = re.compile(r"<image (\d+)>")
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.+?)\s*$", re.MULTILINE)


def lettered(options: list[str], separator: str = ". ") -> str:
    """Options as `A. first` lines, the layout lmms-eval uses for MMMU, AI2D and MathVision."""
    letters = option_letters(len(options))
    return "\n".join(
        f"{letter}{separator}{option}" for letter, option in zip(letters, options, strict=True)
    )


def _as_list(value: Any) -> list[Any]:
    """A list column that some copies store as its Python or JSON text (MMMU's `options`)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = json.loads(text)
        return list(parsed)
    return list(value) if value is not None else []


def _mc_score(answer: str, problem: Problem) -> Scored:
    options = problem.meta.get("options", [])
    letters = option_letters(len(options)) if options else problem.meta["letters"]
    parsed, score = letter_score(answer, str(problem.target), letters, options)
    return Scored(parsed, score)


# MMMU (validation): MMMU's official parser, micro accuracy, per subject.


def _mmmu_problem(row: Row) -> Problem:
    """The images the question or its options refer to (`<image N>`) are shown in ascending N
    before the text, and the markers stay in the text: lmms-eval's `mmmu_doc_to_visual` and its
    Qwen2.5-VL model, which lists images first unless told to interleave. With images 1..k
    referred to, `<image N>` is the N-th image shown. A question without markers shows every
    image its row has."""
    question, options = row["question"], [str(o) for o in _as_list(row.get("options"))]
    multiple_choice = row["question_type"] == "multiple-choice"
    if multiple_choice:
        text = f"{question}\n{lettered(options)}\n\n{MC_INSTRUCTION}"
    else:
        text = f"{question}\n\n{SHORT_INSTRUCTION}"
    referenced = sorted({int(n) for n in _IMAGE_TOKEN.findall(f"{question} {options}")})
    images = [row.get(f"image_{n}") for n in referenced or range(1, 8)]
    subject = re.sub(r"^[^_]+_(.+)_\d+$", r"\1", str(row["id"]))
    return Problem(
        text,
        row["answer"],
        images=[image for image in images if image is not None],
        meta={"subject": subject, "question_type": row["question_type"], "options": options},
    )


def _mmmu_score(answer: str, problem: Problem) -> Scored:
    if problem.meta["question_type"] == "multiple-choice":
        return _mc_score(answer, problem)
    return Scored(answer, float(open_match(answer, problem.target)))


MMMU_VAL = PolicyTask(
    name="mmmu_val",
    dataset=DatasetRef(("lmms-lab/MMMU", "lmms-lab-encoder/MMMU"), "validation"),
    fields={
        "id": "id",
        "question": "question",
        "options": "options",
        "answer": "answer",
        "question_type": "question_type",
        **{f"image_{n}": f"image_{n}" for n in range(1, 8)},
    },
    problem=_mmmu_problem,
    score=_mmmu_score,
    aggregate=metrics.accuracy_by("subject"),
    scoring="rule-based: MMMU's official option-letter and open-answer matching",
)


# MathVista (testmini): the dataset's own `query` prompt; rule-based extraction.


def _mathvista_problem(row: Row) -> Problem:
    meta = {
        "question_type": row["question_type"],
        "answer_type": row["answer_type"],
        "precision": row.get("precision"),
        "options": [str(choice) for choice in _as_list(row.get("choices"))],
    }
    return Problem(
        row["query"], row["answer"], images=[row["image"]], meta=meta, question=row["question"]
    )


def _mathvista_score(answer: str, problem: Problem) -> Scored:
    meta, target = problem.meta, str(problem.target)
    if meta["question_type"] == "multi_choice":
        parsed = _mathvista_choice(answer, meta["options"])
        return Scored(parsed, float(parsed.strip() == target.strip()))
    if meta["answer_type"] == "integer":  # exactly: 2.4 is no answer to "how many inches"
        return Scored(answer, float(numeric_match(answer, target, question=problem.question)))
    if meta["answer_type"] == "float":
        precision = int(meta["precision"] or 0)
        return Scored(answer, float(numeric_match(answer, target, precision, problem.question)))
    if meta["answer_type"] == "list":
        wanted = extract_numbers(target)
        return Scored(
            answer, float(bool(wanted) and extract_numbers(answer_span(answer)) == wanted)
        )
    return Scored(answer, float(_squash(answer) == _squash(target)))


def _mathvista_choice(answer: str, options: list[str]) -> str:
    """MathVista's normalisation: a letter picks its option; else, for a short answer (what its
    extractor returns) that names nothing, the nearest option text. A longer answer that names
    no option, or one that offers two, picks none."""
    if not options:
        return answer
    letters = option_letters(len(options))
    choice = read_choice(answer, letters, options)
    if choice.letter is not None:
        return options[ord(choice.letter) - ord("A")]
    if not choice.open or opens_with_letter(answer, letters):
        return answer  # "B or C" hedges; "B. 10" with 10 option C: the letter and text disagree
    return closest_option(answer, options) if len(answer.split()) <= 5 else answer


def _squash(text: str) -> str:
    return "".join(text.lower().split()).rstrip(".")


MATHVISTA_TESTMINI = PolicyTask(
    name="mathvista_testmini",
    dataset=DatasetRef(("AI4Math/MathVista",), "testmini"),
    fields={
        "query": "query",
        "question": "question",
        "unit": "unit",
        "answer": "answer",
        "choices": "choices",
        "question_type": "question_type",
        "answer_type": "answer_type",
        "precision": "precision",
        "image": ("decoded_image", "image"),
    },
    problem=_mathvista_problem,
    score=_mathvista_score,
    aggregate=metrics.accuracy_by("question_type"),
    scoring=(
        "rule-based answer extraction (boxed, 'answer is', nearest option) in place of "
        "MathVista's GPT answer extractor; then MathVista's own normalisation and exact match"
    ),
    judged_upstream=True,
)


# MathVision (testmini): boxed answer, math-verify equivalence, letter or option value.


def _mathvision_problem(row: Row) -> Problem:
    options = [str(option) for option in _as_list(row.get("options"))]
    text = row["question"]
    if options:
        text = f"{text}\nChoices:\n{lettered(options)}\n{MC_INSTRUCTION}"
    meta = {"subject": row.get("subject", ""), "options": options}
    return Problem(
        text, str(row["answer"]), images=[row["image"]], meta=meta, question=row["question"]
    )


def _mathvision_score(answer: str, problem: Problem) -> Scored:
    options, target = problem.meta["options"], str(problem.target)
    if options:
        letters = option_letters(len(options))
        letter = choice_letter(answer, letters, options)
        value = options[ord(target) - ord("A")] if len(target) == 1 and target.isupper() else ""
        if opens_with_letter(answer, letters):  # "C. 7" with 7 option D names no option
            return Scored(letter or answer, float(letter == target))
        right = letter == target or (bool(value) and math_equal(answer, value, problem.question))
        return Scored(letter or answer, float(right))
    return Scored(answer, float(math_equal(answer, target, problem.question)))


MATHVISION_TESTMINI = PolicyTask(
    name="mathvision_testmini",
    dataset=DatasetRef(("MathLLMs/MathVision",), "testmini"),
    fields={
        "question": "question",
        "options": "options",
        "answer": "answer",
        "subject": "subject",
        "image": ("decoded_image", "image"),
    },
    problem=_mathvision_problem,
    score=_mathvision_score,
    aggregate=metrics.accuracy_by("subject"),
    scoring="rule-based: boxed extraction and math-verify equivalence (as the paper reports it)",
)


# MathVerse (testmini): letter for multi-choice, math-verify for free-form.

_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# a number with at most a short unit: "4 Ω", "25%", "3.5 cm", "3/8", "3 × 10^8 m/s", "5730
# years", "$3000", "50°C"
_QUANTITY_TARGET = re.compile(
    r"[$€£]?-?\d+(?:\.\d+)?(?:\s*/\s*\d+|\s*[×x*]\s*10\^[-+]?\d+)?"
    r"\s*(?:%|[^\W\d_]{1,7}(?:/[^\W\d_]{1,3})?|Ω|°[CF]?)?"
)
_ASIDE_IN_TARGET = re.compile(r"(.+?)\s+\(([^()]{3,})\)")
_INLINE_OPTION = re.compile(r"\b([A-F])\s*[:.]\s*(.*?)(?=,\s*[A-F]\s*[:.]|\n|$)", re.DOTALL)
_VERSE_OPTION = re.compile(r"^\s*([A-E])\s*[:.)]\s*(.+?)\s*$", re.MULTILINE)


def _mathverse_problem(row: Row) -> Problem:
    multiple_choice = row["question_type"] == "multi-choice"
    instruction = MC_INSTRUCTION if multiple_choice else MATH_INSTRUCTION
    image = row.get("image")
    listed = row.get("question_for_eval") or row["question"]
    options = dict(_VERSE_OPTION.findall(str(listed)))
    meta = {
        "question_type": row["question_type"],
        "problem_version": row.get("problem_version", ""),
        "letters": option_letters(5),
        # the option texts the question lists ("A:40°"), so an answer giving a value is read
        "options": [options[letter] for letter in sorted(options)] if options else [],
    }
    return Problem(
        f"{row['question']}\n{instruction}",
        str(row["answer"]),
        images=[image] if image not in (None, "") else [],
        meta=meta,
        question=str(listed),
    )


def _mathverse_score(answer: str, problem: Problem) -> Scored:
    if problem.meta["question_type"] == "multi-choice":
        return _mc_score(answer, problem)
    return Scored(answer, float(math_equal(answer, str(problem.target), problem.question)))


MATHVERSE_TESTMINI = PolicyTask(
    name="mathverse_testmini",
    dataset=DatasetRef(
        ("AI4Math/MathVerse", "CaraJ/MathVerse-lmmseval"), "testmini", configs=("testmini",)
    ),
    fields={
        "question": "question",
        "answer": "answer",
        "question_type": "question_type",
        "problem_version": "problem_version",
        "question_for_eval": "question_for_eval",
        "query_wo": "query_wo",
        "image": "image",
    },
    problem=_mathverse_problem,
    score=_mathverse_score,
    aggregate=metrics.accuracy_by("problem_version"),
    scoring=(
        "rule-based (option letter; math-verify equivalence for free-form) in place of "
        "MathVerse's GPT-4 extraction and judging"
    ),
    judged_upstream=True,
)


# MMStar (val): option letter; macro average over the six core capabilities.


def _single_image_mc(row: Row, text: str, target: str, **meta: Any) -> Problem:
    return Problem(text, target, images=[row["image"]], meta={"letters": option_letters(4), **meta})


def _inline_options(question: str) -> list[str]:
    """MMStar's options, written into its question as `Options: A: cat, B: dog, ...`, so an
    answer that gives an option's text is read too; [] when the question lists none."""
    _, found, listed = question.partition("Options:")
    options = dict(_INLINE_OPTION.findall(listed)) if found else {}
    letters = option_letters(len(options))
    return [options[letter].strip() for letter in letters] if set(options) == set(letters) else []


MMSTAR = PolicyTask(
    name="mmstar",
    dataset=DatasetRef(("Lin-Chen/MMStar",), "val"),
    fields={
        "question": "question",
        "answer": "answer",
        "category": "category",
        "l2_category": "l2_category",
        "image": "image",
    },
    problem=lambda row: _single_image_mc(
        row,
        f"{row['question'].strip()}\n{MC_INSTRUCTION}",
        str(row["answer"]),
        category=row["category"],
        l2_category=row.get("l2_category", ""),
        options=_inline_options(row["question"]),
    ),
    score=_mc_score,
    aggregate=metrics.accuracy_by("category", macro_name="average"),
    scoring="rule-based: option letter; `average` is the macro mean over the 6 categories",
)


# AI2D (test): options listed A., B., ...; the answer column holds the option index.


def _ai2d_problem(row: Row) -> Problem:
    options = [str(option) for option in _as_list(row["options"])]
    text = f"{row['question']}\n{lettered(options)}\n{MC_INSTRUCTION}"
    target = option_letters(len(options))[int(row["answer"])]
    return Problem(text, target, images=[row["image"]], meta={"options": options})


AI2D = PolicyTask(
    name="ai2d",
    dataset=DatasetRef(("lmms-lab/ai2d", "lmms-lab-encoder/ai2d"), "test"),
    fields={"question": "question", "options": "options", "answer": "answer", "image": "image"},
    problem=_ai2d_problem,
    score=_mc_score,
    aggregate=metrics.accuracy,
    scoring="rule-based: option letter, exact match",
)


# ChartQA (test): relaxed accuracy, 5% on numbers.

CHARTQA = PolicyTask(
    name="chartqa",
    dataset=DatasetRef(("lmms-lab/ChartQA", "lmms-lab-encoder/ChartQA"), "test"),
    fields={"question": "question", "answer": "answer", "type": "type", "image": "image"},
    problem=lambda row: Problem(
        f"{row['question']}\n{SHORT_INSTRUCTION}",
        str(row["answer"]),
        images=[row["image"]],
        meta={"type": row.get("type", "")},
        question=row["question"],
    ),
    score=lambda answer, problem: Scored(
        answer, float(relaxed_match(answer, problem.target, question=problem.question))
    ),
    aggregate=metrics.accuracy_by("type", metric="relaxed_accuracy"),
    scoring="rule-based: relaxed accuracy (5% on numbers, exact match otherwise)",
)


# DocVQA (validation): ANLS over the reference answers.


def _docvqa_score(answer: str, problem: Problem) -> Scored:
    """ANLS of the answer the response states; for a bare phrase, with or without the
    question's words it opens with ("Page 14" is "14" for "What is the page number?", "Room
    201" stays whole for golds written "Room 210"), whichever scores higher."""
    spans = [text_answer(answer, problem.question, keep) for keep in (False, True)]
    scores = [anls(span, problem.target) for span in spans]
    best = max(range(len(spans)), key=scores.__getitem__)
    return Scored(spans[best], scores[best])


DOCVQA_VAL = PolicyTask(
    name="docvqa_val",
    dataset=DatasetRef(("lmms-lab/DocVQA", "lmms-lab-encoder/DocVQA"), "validation", ("DocVQA",)),
    fields={"question": "question", "answers": "answers", "image": "image"},
    problem=lambda row: Problem(
        f"{row['question']}\n{SHORT_INSTRUCTION}",
        [str(answer) for answer in _as_list(row["answers"])],
        images=[row["image"]],
        question=row["question"],
    ),
    score=_docvqa_score,
    aggregate=lambda records: {"anls": metrics.mean(r["score"] for r in records)},
    scoring="rule-based: ANLS with threshold 0.5",
)


# OCRBench (test): reference contained in the answer; score out of 1,000.


def _ocrbench_problem(row: Row) -> Problem:
    answers = row["answer"]
    targets = [str(a) for a in _as_list(answers)] if not isinstance(answers, str) else [answers]
    meta = {"question_type": row["question_type"], "dataset": row.get("dataset", "")}
    return Problem(row["question"].strip(), targets, images=[row["image"]], meta=meta)


def _ocrbench_score(answer: str, problem: Problem) -> Scored:
    formula = problem.meta["dataset"] == "HME100k"
    return Scored(answer, float(substring_match(answer, problem.target, ignore_spaces=formula)))


OCRBENCH = PolicyTask(
    name="ocrbench",
    dataset=DatasetRef(("echo840/OCRBench",), "test"),
    fields={
        "question": "question",
        "answer": "answer",
        "question_type": "question_type",
        "dataset": "dataset",
        "image": "image",
    },
    problem=_ocrbench_problem,
    score=_ocrbench_score,
    aggregate=metrics.ocrbench,
    scoring="rule-based: reference contained in the answer (OCRBench's own rule)",
)


# HallusionBench (image split): yes/no; aAcc, qAcc, fAcc.


def _hallusion_problem(row: Row) -> Problem:
    image = row.get("image")
    has_figure = str(row.get("visual_input", "1")) != "0" and image is not None
    meta = {role: row[role] for role in ("category", "subcategory", "set_id", "figure_id")} | {
        "question_id": row["question_id"],
        "visual_input": str(row.get("visual_input", "1")),
    }
    target = "yes" if str(row["gt_answer"]) == "1" else "no"
    images = [image] if has_figure else []
    return Problem(row["question"], target, images=images, meta=meta, question=row["question"])


def _hallusion_score(answer: str, problem: Problem) -> Scored:
    parsed = yes_no(answer, problem.question)
    no_figure = problem.meta["visual_input"] == "0"  # asked without its figure
    right = parsed == problem.target or (parsed == "unclear" and no_figure)
    return Scored(parsed, float(right))


HALLUSIONBENCH = PolicyTask(
    name="hallusionbench",
    dataset=DatasetRef(("lmms-lab/HallusionBench", "lmms-lab-encoder/HallusionBench"), "image"),
    fields={
        "question": "question",
        "gt_answer": "gt_answer",
        "category": "category",
        "subcategory": "subcategory",
        "set_id": "set_id",
        "figure_id": "figure_id",
        "question_id": "question_id",
        "visual_input": "visual_input",
        "image": "image",
    },
    problem=_hallusion_problem,
    score=_hallusion_score,
    aggregate=metrics.hallusionbench,
    scoring=(
        "rule-based yes/no reading in place of HallusionBench's GPT-4 judge; an answer that "
        "says it cannot tell counts as 'unclear' (right only for questions asked without their "
        "figure); one that says nothing readable is wrong"
    ),
    judged_upstream=True,
)


# RealWorldQA (test): options are written in the question; some answers are not letters.

_RWQA_DIRECT = "Please answer directly with only the letter of the correct option and nothing else."


def _realworldqa_problem(row: Row) -> Problem:
    question = row["question"].strip()
    if _RWQA_DIRECT in question:
        question = question.replace(_RWQA_DIRECT, MC_INSTRUCTION)
    options = dict(_OPTION_LINE.findall(row["question"]))
    meta = {"letters": sorted(options), "options": [options[k] for k in sorted(options)]}
    asked = row["question"].strip().split("\n", 1)[0]
    return Problem(
        question, str(row["answer"]).strip(), images=[row["image"]], meta=meta, question=asked
    )


def _realworldqa_score(answer: str, problem: Problem) -> Scored:
    target = str(problem.target)
    if target.upper() in problem.meta["letters"]:
        return _mc_score(answer, problem)
    if plain_words(target) in ("yes", "no"):
        return Scored(answer, float(yes_no(answer) == plain_words(target)))
    if parse_number(target) is not None and _PLAIN_NUMBER.fullmatch(target.strip()):
        return Scored(answer, float(numeric_match(answer, target, question=problem.question)))
    stated = text_answer(answer, problem.question)
    said = [stated, answer, _without_question_words(stated, problem.question)]
    if not NEGATION.search(answer):  # "It is on the right side of the road." says "right"
        said.append(_without_question_words(answer, problem.question))
        said.append(_head_word(stated))  # "A school bus." is a bus
    return Scored(answer, float(any(same_words(text, target) for text in said)))


def _without_question_words(text: str, question: str) -> str:
    """An answer less the words it repeats from the question, in any inflection ("right side
    of the road" for "Which side of the road ...?" says "right"; "The arrow points to the
    left." for "Which direction does the arrow point?" says "left")."""
    asked = {word.removesuffix("s") for word in content_words(question) | STOP_WORDS}
    kept = [word for word in plain_words(text).split() if word.removesuffix("s") not in asked]
    return " ".join(kept)


def _head_word(text: str) -> str:
    """The last word of a short noun phrase ("school bus" is a "bus"); empty for longer text."""
    words = [word for word in plain_words(text).split() if word not in STOP_WORDS]
    return words[-1] if 1 < len(words) <= 3 else ""


REALWORLDQA = PolicyTask(
    name="realworldqa",
    dataset=DatasetRef(("lmms-lab/RealWorldQA", "lmms-lab-encoder/RealWorldQA"), "test"),
    fields={"question": "question", "answer": "answer", "image": "image"},
    problem=_realworldqa_problem,
    score=_realworldqa_score,
    aggregate=metrics.accuracy,
    scoring="rule-based: option letter, or exact match (number words as digits)",
)


# BLINK (val): multi-image multiple choice, one config per sub-task.

BLINK_SUBTASKS = (
    "Art_Style", "Counting", "Forensic_Detection", "Functional_Correspondence", "IQ_Test",
    "Jigsaw", "Multi-view_Reasoning", "Object_Localization", "Relative_Depth",
    "Relative_Reflectance", "Semantic_Correspondence", "Spatial_Relation",
    "Visual_Correspondence", "Visual_Similarity",
)  # fmt: skip


def _blink_problem(row: Row) -> Problem:
    options = [str(choice) for choice in _as_list(row["choices"])]
    images = [row.get(f"image_{n}") for n in range(1, 5)]
    meta = {
        "options": options,
        "sub_task": row.get("sub_task", ""),
        "aliases": _option_aliases(str(row["prompt"]), options),
    }
    return Problem(
        f"{row['prompt']}\n{MC_INSTRUCTION}",
        str(row["answer"]).strip("()"),
        images=[image for image in images if image is not None],
        meta=meta,
    )


def _option_aliases(prompt: str, options: list[str]) -> dict[str, str]:
    """Words the prompt gives an option as another name: "moving clockwise (left) or
    counter-clockwise (right)" makes "clockwise" option left (BLINK's multi-view prompt)."""
    aliases = {}
    for letter, option in zip(option_letters(len(options)), options, strict=True):
        pattern = rf"(?<![\w-])([\w-]+)\s+\(\s*{re.escape(option)}\s*\)"
        for alias in re.findall(pattern, prompt, re.IGNORECASE):
            if alias.lower() not in {o.lower() for o in options}:
                aliases[alias.lower()] = letter
    return aliases


def _blink_score(answer: str, problem: Problem) -> Scored:
    """The option letter; an answer that names no option but the prompt's other name for one
    ("The camera is moving clockwise" where the prompt says "clockwise (left)") picks it."""
    scored = _mc_score(answer, problem)
    if scored.parsed is not None:
        return scored
    said = answer.lower()
    named = {
        letter
        for alias, letter in problem.meta.get("aliases", {}).items()
        if re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", said)
    }
    if len(named) != 1:
        return scored
    letter = named.pop()
    return Scored(letter, float(letter == str(problem.target).strip().upper()))


BLINK = PolicyTask(
    name="blink",
    dataset=DatasetRef(("BLINK-Benchmark/BLINK",), "val", configs=BLINK_SUBTASKS),
    fields={
        "prompt": "prompt",
        "choices": "choices",
        "answer": "answer",
        "sub_task": "sub_task",
        **{f"image_{n}": f"image_{n}" for n in range(1, 5)},
    },
    problem=_blink_problem,
    score=_blink_score,
    aggregate=metrics.accuracy_by("sub_task"),
    scoring="rule-based: option letter",
)


# MMVU (validation): video, multiple choice (A-E) or open-ended; 32 frames as in the paper.


def _mmvu_problem(row: Row) -> Problem:
    choices = row.get("choices") or {}
    if isinstance(choices, str):
        choices = json.loads(choices)
    options = {key: str(value) for key, value in sorted(choices.items()) if value}
    multiple_choice = row["question_type"] == "multiple-choice"
    if multiple_choice:
        listed = "\n".join(f"{key}: {value}" for key, value in options.items())
        text = f"{row['question']}\n{listed}\n{MC_INSTRUCTION}"
    else:
        text = f"{row['question']}\n{SHORT_INSTRUCTION}"
    meta = {
        "question_type": row["question_type"],
        "letters": list(options),
        "options": list(options.values()),
        "choices": dict(choices),
    }
    return Problem(
        text, str(row["answer"]), videos=[row["video"]], meta=meta, question=row["question"]
    )


def _mmvu_score(answer: str, problem: Problem) -> Scored:
    if problem.meta["question_type"] == "multiple-choice":
        letters, options = problem.meta["letters"], problem.meta["options"]
        parsed, score = letter_score(answer, str(problem.target), letters, options)
        return Scored(parsed, score)
    return Scored(answer, float(_mmvu_open(answer, str(problem.target), problem.question)))


def _mmvu_open(answer: str, target: str, question: str = "") -> bool:
    """MMVU's rule-based open-answer check (yale-nlp/MMVU; lmms-eval's
    `evaluate_with_rule_based`): equal, either contained in the other, first numbers within
    0.01, or every word of a 2-5 word target in the answer. Read as a careful grader does:
    a number is the one the answer states (`numeric_match`, to 0.01: "Step 3: ... The algorithm
    makes 4 comparisons." is 4, "a four-stroke engine" 4), containment is of whole words ("AND
    gate" is not "NAND gate"), and an answer that offers alternatives ("It could be a
    chloroplast or a mitochondrion") commits to none."""
    if _QUANTITY_TARGET.fullmatch(target.strip()):  # "4", "4 Ω", "25%": the number stated
        return numeric_match(answer, target, precision=2, question=question)
    named = _ASIDE_IN_TARGET.match(target.strip())  # "Third molar (wisdom tooth)": either name
    if named:
        return any(_mmvu_open(answer, name, question) for name in named.groups())
    settled = settled_part(answer)  # "At first glance ... cable-stayed, but ... suspension"
    predicted, expected = plain_words(settled if settled.strip() else answer), plain_words(target)
    if not predicted or offers_alternatives(answer):
        return False
    plural = rf"(?<!\w){re.escape(expected)}(?:e?s)?(?!\w)"  # "chloroplasts" for "Chloroplast"
    spelled_out = plain_words(settled_part(answer, keep_asides=True))  # "KCL (Kirchhoff's ...)"
    if any(re.search(plural, text) for text in (predicted, spelled_out)):
        return True
    if f" {predicted} " in f" {expected} ":
        return True
    words = {word for word in expected.split() if len(word) > 2}
    return 2 <= len(expected.split()) <= 5 and bool(words) and words <= set(predicted.split())


MMVU = PolicyTask(
    name="mmvu",
    dataset=DatasetRef(
        ("yale-nlp/MMVU", "lmms-lab/MMVU", "lmms-lab-encoder/MMVU"),
        "validation",
        local_hint="videos are read from --media-root mmvu=DIR (the dataset's videos/ folder)",
    ),
    fields={
        "question": "question",
        "choices": "choices",
        "answer": "answer",
        "question_type": "question_type",
        "video": ("video_path", "video"),
    },
    problem=_mmvu_problem,
    score=_mmvu_score,
    aggregate=metrics.accuracy_by("question_type"),
    scoring=(
        "rule-based (option letter; MMVU's rule-based open-answer match); lmms-eval also asks "
        "a GPT judge about open-ended answers the rules reject"
    ),
    judged_upstream=True,
    max_frames=32,
)


# Video-MME (test): four options; the video file is <videoID>.mp4 under the media root.


_OPTION_PREFIX = re.compile(r"^\s*\(?[A-Z]\)?[.:)]\s*")  # Video-MME's "A. He buys a newspaper."


def _videomme_problem(row: Row) -> Problem:
    option_lines = [str(option) for option in _as_list(row["options"])]
    options = "\n".join(option_lines)
    text = (
        "Select the best answer to the following multiple-choice question based on the video.\n"
        f"{row['question']}\n{options}\n{MC_INSTRUCTION}"
    )
    meta = {
        "duration": row.get("duration", ""),
        "options": [_OPTION_PREFIX.sub("", line, count=1) for line in option_lines],
        "option_lines": option_lines,
    }
    return Problem(text, str(row["answer"]), videos=[f"{row['videoID']}.mp4"], meta=meta)


VIDEOMME = PolicyTask(
    name="videomme",
    dataset=DatasetRef(
        ("lmms-lab/Video-MME", "lmms-lab-encoder/Video-MME"),
        "test",
        local_hint="videos are read as <videoID>.mp4 from --media-root videomme=DIR",
    ),
    fields={
        "question": "question",
        "options": "options",
        "answer": "answer",
        "videoID": "videoID",
        "duration": "duration",
    },
    problem=_videomme_problem,
    score=_mc_score,
    aggregate=metrics.accuracy_by("duration"),
    scoring="rule-based: option letter",
    max_frames=32,
)

POLICY_TASKS = (
    MMMU_VAL,
    MATHVISTA_TESTMINI,
    MATHVISION_TESTMINI,
    MATHVERSE_TESTMINI,
    MMSTAR,
    AI2D,
    CHARTQA,
    DOCVQA_VAL,
    OCRBENCH,
    HALLUSIONBENCH,
    REALWORLDQA,
    BLINK,
    MMVU,
    VIDEOMME,
)
