"""RLAIF-V: preference pairs labelled by open models, chosen and rejected per question.

Schema (dataset card of openbmb/RLAIF-V-Dataset, "Data fields"): `ds_name`, `image` (a struct
of path and bytes), `question`, `chosen`, `rejected`, `origin_dataset`, `origin_split`, `idx`,
`image_path`. The chosen response is the better one.

    python preprocessing/rlaif_v.py --output data/rlaif_v
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="rlaif-v",
    hub_id="openbmb/RLAIF-V-Dataset",
    format="chosen-rejected",
    columns={"id": "idx", "image": "image"},
    schema="ds_name, image{bytes,path}, question, chosen, rejected, origin_dataset, "
    "origin_split, idx, image_path",
)

if __name__ == "__main__":
    run_script(DATASET)
