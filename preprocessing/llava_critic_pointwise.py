"""LLaVA-Critic-113k, pointwise subset: one response and the score the judge gave it.

Schema (dataset card of lmms-lab/llava-critic-113k, config `pointwise`): `id`, `source`,
`image`, `conversations` (a human turn holding the question and the response, a gpt turn
ending in a score on the scale the prompt names).

    python preprocessing/llava_critic_pointwise.py --output data/llava_critic_pointwise
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="llava-critic-113k-pointwise",
    hub_id="lmms-lab/llava-critic-113k",
    config="pointwise",
    format="llava-critic-pointwise",
    schema="id, source, image, conversations[human, gpt]",
)

if __name__ == "__main__":
    run_script(DATASET)
