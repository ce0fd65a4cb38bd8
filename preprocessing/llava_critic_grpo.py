"""LLaVA-Critic-GRPO-dataset: the ~40k pairwise critic prompts LLaVA-Critic-R1 trains on.

Schema (as the release's EasyR1 training scripts read it: `data.train_files=
lmms-lab/LLaVA-Critic-GRPO-dataset@train`, `data.prompt_key=question` and EasyR1's default
`answer`/`images` keys): `question` (the whole critic prompt with both responses and an
`<image>` marker), `answer` (the index of the better response) and `images`. The rows are
already verifiable; the converter appends the think/boxed instruction unless the question
already ends with it.

    python preprocessing/llava_critic_grpo.py --output data/llava_critic_grpo
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="llava-critic-grpo",
    hub_id="lmms-lab/LLaVA-Critic-GRPO-dataset",
    format="verifiable",
    columns={"question": "question", "answer": "answer", "image": "images"},
    schema="question (critic prompt with <image>), answer, images",
)

if __name__ == "__main__":
    run_script(DATASET)
