"""VL-RewardBench's judge prompt, which lmms-eval and the release share; lmms-eval shows the
image first and samples (temperature 1.0, do_sample true), the release sends the text first."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding

JUDGE = (
    " You are a highly capable multimodal AI assistant tasked with evaluating answers to visual "
    "questions. Please analyze the following image and question, then determine which of the two "
    "provided answers is better.\n\nQuestion: {question}\n\nAnswer 1: {answer_1}\n\nAnswer 2: "
    "{answer_2}\n\nPlease evaluate both answers based on the following criteria:\n1. Accuracy: "
    "How well does the answer align with the visual information in the image?\n2. Completeness: "
    "Does the answer fully address all aspects of the question?\n3. Clarity: Is the answer easy "
    "to understand and well-articulated?\n4. Relevance: Does the answer directly relate to the "
    "question and the image?\n\nAfter your evaluation, please:\n1. Explain your reasoning for "
    "each criterion.\n2. Provide an overall judgment on which answer is better (Answer 1 or "
    "Answer 2). For example: Overall Judgment: Answer X is better.\n\nYour response should be "
    "structured and detailed, demonstrating your understanding of both the visual and textual "
    "elements of the task."
)

PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval.judge(JUDGE), Decoding(1024, temperature=1.0), "vl_rewardbench/utils.py"
    ),
    "official": official.released(
        official.text_first(JUDGE),
        Decoding(2048, temperature=0.2, top_p=0.2),
        "vl-rewardbench/VL_RewardBench prompt.py, inference_hf.py [9b10abd]",
    ),
}
