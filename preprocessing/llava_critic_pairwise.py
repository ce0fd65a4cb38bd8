"""LLaVA-Critic-113k, pairwise subset: two responses, the judge's verdict in `conversations`.

Schema (dataset card of lmms-lab/llava-critic-113k, config `pairwise`): `id`, `source`,
`image`, `conversations` (a human turn holding the question and both responses, a gpt turn
holding the judgement). Images are relative paths inside the release.

    python preprocessing/llava_critic_pairwise.py --output data/llava_critic_pairwise \
        --tokenizer Qwen/Qwen2.5-VL-7B-Instruct
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="llava-critic-113k-pairwise",
    hub_id="lmms-lab/llava-critic-113k",
    config="pairwise",
    format="llava-critic-pairwise",
    schema="id, source, image, conversations[human, gpt]",
)

if __name__ == "__main__":
    run_script(DATASET)
