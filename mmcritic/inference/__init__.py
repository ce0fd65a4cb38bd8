"""Using a trained model: batched generation, critique and self-critique.

`Critic` judges two responses (or scores one) for a question about images or videos, `Policy`
answers questions, and `best_of_n` picks one of several answers by letting the critic judge them.
Each takes one `Media` or a sequence of them (`Media.image`, `Media.video`, `Media.frames`).
The eval runner and the demo are thin shells over these names.
"""

from mmcritic.inference.critic import Comparison, Critic, Score
from mmcritic.inference.engines import load_model_for_inference
from mmcritic.inference.media import Media
from mmcritic.inference.policy import Answer, Policy
from mmcritic.inference.self_critique import BestOfN, best_of_n

__all__ = [
    "Answer",
    "BestOfN",
    "Comparison",
    "Critic",
    "Media",
    "Policy",
    "Score",
    "best_of_n",
    "load_model_for_inference",
]
