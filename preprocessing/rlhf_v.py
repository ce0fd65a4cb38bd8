"""RLHF-V: human segment-level corrections of model answers, as chosen and rejected pairs.

Schema (dataset card of openbmb/RLHF-V-Dataset, "Data fields"): `ds_name`, `image` (a struct
of path and bytes), `text` (a JSON string holding `question`, `chosen` and `rejected`),
`origin_dataset`, `origin_split`, `idx`, `image_path`. The chosen response is the corrected,
better one (`chosen-rejected-json`).

    python preprocessing/rlhf_v.py --output data/rlhf_v
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="rlhf-v",
    hub_id="openbmb/RLHF-V-Dataset",
    format="chosen-rejected-json",
    columns={"id": "idx", "image": "image", "text": "text"},
    schema="ds_name, image{bytes,path}, text (JSON: question, chosen, rejected), "
    "origin_dataset, origin_split, idx, image_path",
)

if __name__ == "__main__":
    run_script(DATASET)
