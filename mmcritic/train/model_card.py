"""The model card a run writes beside its models (`README.md` in the run folder and `final/`).

TRL's card names the base model only when it is a hub id, so a model trained from a local folder
reads "a fine-tuned version of [None]", with a usage example that loads "None". mmcritic's card
names the base model as the recipe gave it, the stage and steps, and the commands that use it.
"""

from __future__ import annotations

from pathlib import Path


class ModelCardMixin:
    """Mixed into a TRL trainer (before it in the bases): `create_model_card`, which TRL calls
    at every checkpoint, writes mmcritic's card."""

    def create_model_card(
        self,
        model_name: str | None = None,
        dataset_name: str | None = None,
        tags: str | list[str] | None = None,
    ) -> None:
        if not self.is_world_process_zero():
            return
        output_dir = Path(self.args.output_dir)
        (output_dir / "README.md").write_text(
            model_card(
                base_model=str(getattr(self.model.config, "_name_or_path", "") or "unknown"),
                stage=self._name,
                steps=self.state.global_step,
                run_dir=output_dir,
            )
        )


def model_card(base_model: str, stage: str, steps: int, run_dir: Path) -> str:
    """The card's text: what the model is, how it was made and how to use it."""
    local = Path(base_model).exists()
    front = "" if local else f"base_model: {base_model}\n"
    final = run_dir / "final"
    return f"""---
library_name: transformers
{front}tags:
- mmcritic
- {stage.lower()}
- multimodal-critic
---

# {run_dir.name}

A {stage} fine-tune of `{base_model}`, trained with mmcritic for {steps} steps. The resolved
recipe is `{run_dir / "recipe.yaml"}`; held-out accuracy before and after is in
`{run_dir / "heldout.json"}`; every logged metric is in TensorBoard
(`tensorboard --logdir {run_dir / "tensorboard"}`).

## Use

```bash
mmcritic critique --model {final} --image IMAGE --question QUESTION \\
  --response-a FIRST --response-b SECOND
mmcritic demo --model {final}
```
"""


def copy_card(run_dir: Path, final: Path) -> None:
    """The run's card beside its final model too, where a user uploading `final/` finds it."""
    card = run_dir / "README.md"
    if card.is_file():
        (final / "README.md").write_text(card.read_text())
