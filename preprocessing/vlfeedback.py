"""VLFeedback: four responses per instruction, each rated by GPT-4V on three aspects.

Schema (dataset card of MMInstruction/VLFeedback, `dataset_info.features`): `id`, `prompt`,
`models` (the four model names), `completions` (a list of `{annotations: {Helpfulness,
Ethical Considerations, Visual Faithfulness: {Rating, Rationale}}, model, response}`) and
`img_path`, a path inside the release's `merged_images.zip`. Unzip it and pass its folder as
`--media-root`. The pair is the best-rated response against the worst-rated one by the mean of
the three ratings (`rated-completions`); a row whose responses all rate the same is rejected.

    python preprocessing/vlfeedback.py --output data/vlfeedback --media-root merged_images
"""

from mmcritic.cli import run_script
from mmcritic.data.public import PublicDataset

DATASET = PublicDataset(
    name="vlfeedback",
    hub_id="MMInstruction/VLFeedback",
    format="rated-completions",
    columns={"question": "prompt", "image": "img_path"},
    schema="id, prompt, models, completions[{annotations{Helpfulness, Ethical Considerations, "
    "Visual Faithfulness: {Rating, Rationale}}, model, response}], img_path",
)

if __name__ == "__main__":
    run_script(DATASET)
