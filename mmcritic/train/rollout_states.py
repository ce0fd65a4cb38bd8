"""The policy's last hidden states over its rollouts, read from a log-prob pass as it runs.

TRL's log-prob pass runs the model's text decoder and projects its last hidden states through
the LM head in a fused kernel, so the states never leave the forward. A forward hook on the
decoder reads them as each chunk passes and keeps, per rollout row, only what the POISE probe
takes (`mmcritic.train.poise.rollout_features`): the state at the prompt's last token and the
states at the positions predicting each completion token, pooled at once, so no chunk's
(rows, length, width) states outlive its forward.

Two layouts reach the decoder. TRL's pass runs rows in consecutive chunks, prompt then
completion (positions -C-1 .. -2 predict the C completion tokens); the shared-prefix pass runs
grouped sequences (`mmcritic.train.shared_prefix`), whose rows it gathers itself and announces
before each forward (`expect_grouped`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

# (rows of the batch, their states at the positions predicting each completion token)
Located = tuple[list[int], torch.Tensor]


class RolloutStates:
    """Collects, per row of a rollout batch, the prompt's state and the mean state over the
    positions that predict the completion's tokens. Use as a context around the pass."""

    def __init__(self, decoder: torch.nn.Module, completion_mask: torch.Tensor):
        self.decoder = decoder
        self.mask = completion_mask
        rows, width = completion_mask.size(0), decoder.config.hidden_size
        self.prompt = torch.zeros(rows, width, device=completion_mask.device)
        self.trajectory = torch.zeros(rows, width, device=completion_mask.device)
        self.seen = torch.zeros(rows, dtype=torch.bool, device=completion_mask.device)
        self._locate: Callable[[torch.Tensor], Located] | None = None
        self._next_row = 0
        self._handle: Any = None

    def __enter__(self) -> RolloutStates:
        self._handle = self.decoder.register_forward_hook(self._read)
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.remove()

    def expect_consecutive(self, completion_length: int) -> None:
        """The coming forwards run rows in order, each sequence prompt then completion."""

        def locate(hidden: torch.Tensor) -> Located:
            rows = list(range(self._next_row, self._next_row + hidden.size(0)))
            self._next_row += hidden.size(0)
            return rows, hidden[:, -completion_length - 1 : -1]

        self._locate = locate

    def expect_grouped(self, locate: Callable[[torch.Tensor], Located]) -> None:
        """The coming forward runs grouped sequences; `locate` gathers each row's states."""
        self._locate = locate

    def _read(self, module: Any, args: Any, output: Any) -> None:
        if self._locate is None:
            raise RuntimeError("the decoder ran with no layout announced for its rows")
        hidden = output[0] if isinstance(output, tuple) else output.last_hidden_state
        rows, states = self._locate(hidden.detach())
        index = torch.tensor(rows, device=self.mask.device)
        states = states.float().to(self.mask.device)
        mask = self.mask[index].to(states.dtype)
        self.prompt[index] = states[:, 0]
        self.trajectory[index] = (states * mask[..., None]).sum(1) / mask.sum(1).clamp(min=1)[
            :, None
        ]
        self.seen[index] = True

    def pooled(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(rows, width) prompt states and mean trajectory states; every row must have run."""
        if not bool(self.seen.all()):
            missing = (~self.seen).nonzero().flatten().tolist()[:5]
            raise RuntimeError(f"rows {missing} never reached the decoder")
        return self.prompt, self.trajectory
