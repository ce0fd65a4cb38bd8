"""Pairs in VL-RewardBench's layout: a query, two responses in a list, their human ranking.

Schema (the benchmark's rows, as `mmcritic eval` reads them for `vl_rewardbench`): `id`,
`query`, `response` (two strings), `human_ranking` (lower is better), `image`, plus `models`,
`judge`, `rationale`, `query_source`. VL-RewardBench itself is an evaluation set: train on it
only to reproduce a setting that does, and never evaluate on what you trained on. Point
`--input` at any pair set kept in this layout.

    python preprocessing/vl_rewardbench_pairs.py --input pairs.parquet --output data/pairs
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="vl-rewardbench-pairs",
    hub_id="MMInstruction/VL-RewardBench",
    split="test",
    format="ranked-pair",
    schema="id, query, response[2], human_ranking[2], image, models, judge, rationale, "
    "query_source",
)

if __name__ == "__main__":
    run_script(DATASET)
