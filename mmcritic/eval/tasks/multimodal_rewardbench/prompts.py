"""Multimodal RewardBench's judge prompt, which lmms-eval and the release share; greedy under
both, the release sending the text before the image."""

from __future__ import annotations

from mmcritic.eval.protocols import lmms_eval, official
from mmcritic.eval.protocols.prompt import Decoding

JUDGE = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two "
    "AI assistants to the user question displayed below. You should choose the assistant that "
    "follows the user's instructions and answers the user's question better. Your evaluation "
    "should consider factors such as the helpfulness, relevance, accuracy, depth, creativity, "
    "and level of detail of their responses. Begin your evaluation by comparing the two "
    "responses and provide a short explanation. Avoid any position biases and ensure that the "
    "order in which the responses were presented does not influence your decision. Do not allow "
    "the length of the responses to influence your evaluation. Do not favor certain names of the "
    "assistants. Be as objective as possible. After providing your explanation, output your "
    'final verdict by strictly following this format: "[[A]]" if assistant A is better, "[[B]]" '
    "if assistant B is better.\n\n[User Question]\n{question}\n\n[The Start of Assistant A's "
    "Answer]\n{answer_1}\n[The End of Assistant A's Answer]\n\n[The Start of Assistant B's "
    "Answer]\n{answer_2}\n[The End of Assistant B's Answer]"
)

PROMPTS = {
    "lmms-eval": lmms_eval.from_task_file(
        lmms_eval.judge(JUDGE), Decoding(1024), "multimodal_rewardbench/utils.py"
    ),
    "official": official.released(
        official.text_first(JUDGE),
        Decoding(1024),
        "facebookresearch/multimodal_rewardbench scripts/1_run_model_as_judge_gpt4o.py [b4b92cd]",
    ),
}
