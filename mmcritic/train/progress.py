"""One short line per logged step, for the person watching a run.

transformers' progress bar writes every logged dict whole: 33 GRPO metrics, 1,100 characters
without a step number. Here the bar stays and each logging step writes one line instead:

    step 50/600 | reward 0.71 | accuracy 0.62 | kl 0.0031 | 1.42 s/step | ETA 13:01

Every metric still goes to TensorBoard and `log_history.json`; `--quiet` turns the bar and the
lines off.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from transformers.trainer_callback import ProgressCallback

# (logged key, shown name), the first present of each group shown: a critic's accuracy is its
# preference reward, a policy's its answer reward; SFT logs a loss and a token accuracy
SHOWN = (
    (("reward",), "reward"),
    (("rewards/preference/mean", "rewards/answer/mean", "mean_token_accuracy"), "accuracy"),
    (("kl",), "kl"),
    (("loss",), "loss"),
)


def progress_line(
    step: int, max_steps: int, logs: dict[str, Any], seconds_per_step: float | None
) -> str:
    """The line for a logged step: step, the metrics of `SHOWN` that were logged, the time a
    step takes and the time left."""
    parts = [f"step {step}/{max_steps}"]
    for keys, name in SHOWN:
        value = next((logs[key] for key in keys if isinstance(logs.get(key), int | float)), None)
        if value is not None and not (name == "loss" and "reward" in logs):  # GRPO's loss: noise
            parts.append(f"{name} {value:.4g}")
    if seconds_per_step is not None:
        left = max(max_steps - step, 0) * seconds_per_step
        parts += [f"{seconds_per_step:.3g} s/step", f"ETA {_clock(left)}"]
    return " | ".join(parts)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class CompactProgress(ProgressCallback):
    """transformers' training bar, writing `progress_line` where it wrote the whole dict."""

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[float, int] | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        super().on_train_begin(args, state, control, **kwargs)
        self._last = (time.perf_counter(), state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        bar = self.training_bar
        if not state.is_world_process_zero or bar is None or bar.disable or not logs:
            return
        if "train_runtime" in logs:  # the end of training
            bar.write(
                f"trained to step {state.global_step} in {_clock(logs['train_runtime'])}",
                file=sys.stderr,
            )
            return
        now, seconds_per_step = time.perf_counter(), None
        if self._last is not None and state.global_step > self._last[1]:
            seconds_per_step = (now - self._last[0]) / (state.global_step - self._last[1])
        self._last = (now, state.global_step)
        line = progress_line(state.global_step, state.max_steps, logs, seconds_per_step)
        bar.write(line, file=sys.stderr)  # stdout holds results alone


def use_compact_progress(trainer: Any) -> None:
    """Swaps the trainer's progress bar, if it shows one, for `CompactProgress`."""
    if any(type(cb) is ProgressCallback for cb in trainer.callback_handler.callbacks):
        trainer.remove_callback(ProgressCallback)
        trainer.add_callback(CompactProgress())
