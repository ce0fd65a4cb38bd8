"""MM-RLHF: human-ranked responses to image, video and safety instructions, as ranked pairs.

Schema (the release's `dpo_pairs.jsonl` in yifanzhang114/MM-RLHF, as its
`scripts/convert_to_swift.py` reads it): `prompt`, `chosen`, `rejected`, and either `image` or
`video`, a path relative to the release folder once its `image`/`video` zips are unpacked; pass
that folder as `--media-root`. Video rows become video records with the recipe's frame budget.

    python preprocessing/mm_rlhf.py --output data/mm_rlhf --media-root MM-RLHF
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="mm-rlhf",
    hub_id="yifanzhang114/MM-RLHF",
    data_files="dpo_pairs.jsonl",
    format="chosen-rejected",
    columns={"question": "prompt"},
    schema="prompt, chosen, rejected, image | video (paths inside the unpacked release)",
)

if __name__ == "__main__":
    run_script(DATASET)
