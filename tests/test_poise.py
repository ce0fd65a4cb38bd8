"""POISE: the baseline a probe predicts from the policy's internal states, each rollout's from
the other rollouts of its prompt."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from mmcritic.data.synth import synthesize
from mmcritic.train.config import PoiseSettings, RecipeError, load_recipe
from mmcritic.train.poise import (
    TRAJECTORY_STATS,
    PoiseBaseline,
    cross_rollout_baselines,
    entropy_stats,
)
from mmcritic.train.run import train
from tests.test_shared_prefix import (
    GENERATIONS,
    _grouped_passes,
    _image_batch,
    trainer_for,
    video_batch,
)
from tests.test_train import tiny_recipe

WIDTH = 4  # the bandit's "hidden states"


# -- the estimator -------------------------------------------------------------------------
def _bandit_features(actions: torch.Tensor, arms: int) -> torch.Tensor:
    """One prompt (the same prompt state everywhere) and the arm pulled as the trajectory's
    state: features that tell the probe each rollout's own action."""
    rows = len(actions)
    prompt = torch.ones(rows, WIDTH)
    trajectory = torch.nn.functional.one_hot(actions, WIDTH).float() * 3.0
    assert arms <= WIDTH
    return torch.cat([prompt, trajectory, torch.zeros(rows, TRAJECTORY_STATS)], dim=1)


def _bandit_gradients(
    baseline: PoiseBaseline, n: int, groups: int, seed: int
) -> dict[str, torch.Tensor]:
    """Per-group policy-gradient estimates (sum over the group's rollouts of advantage x
    d log pi(a) / d logits, over n) under three baselines: POISE's cross-rollout one, GRPO's
    group mean, and the probe's prediction from each rollout's own features."""
    generator = torch.Generator().manual_seed(seed)
    actions = torch.multinomial(PI.expand(groups * n, -1), 1, generator=generator).squeeze(1)
    rewards = torch.bernoulli(SUCCESS[actions], generator=generator)
    features = _bandit_features(actions, len(PI))
    with torch.no_grad():
        own = baseline.probe(features)
    poise, _ = baseline.advantages(features, rewards, n, "none")
    grouped = rewards.view(-1, n)
    group = (grouped - grouped.mean(dim=1, keepdim=True)).reshape(-1)
    score = torch.nn.functional.one_hot(actions, len(PI)).float() - PI  # d log pi / d logits
    estimates = {}
    for name, advantage in {"poise": poise, "group": group, "own": rewards - own}.items():
        estimates[name] = (advantage[:, None] * score).view(groups, n, -1).sum(1) / n
    return estimates


PI = torch.tensor([0.5, 0.3, 0.2])
SUCCESS = torch.tensor([0.9, 0.2, 0.5])


def _probe_of_width(width: int, settings: PoiseSettings, seed: int = 0) -> PoiseBaseline:
    return PoiseBaseline(width, settings, seed)


@pytest.mark.parametrize("n", [2, 4])
def test_the_cross_rollout_gradient_is_unbiased_where_the_own_rollout_s_is_not(n):
    """On a 3-armed bandit with the exact gradient known, the mean POISE gradient over many
    groups is the true gradient; GRPO's group mean (which holds the rollout's own reward) is
    (n - 1) / n of it; a baseline read from the rollout's own features cancels it."""
    baseline = PoiseBaseline(WIDTH, PoiseSettings(updates=50), seed=0)
    generator = torch.Generator().manual_seed(1)
    for _ in range(8):
        actions = torch.randint(0, len(PI), (512,), generator=generator)
        baseline.learn(_bandit_features(actions, len(PI)), torch.bernoulli(SUCCESS[actions]))
    baseline.settings = replace(baseline.settings, updates=1)
    true_value = (PI * SUCCESS).sum()
    true_gradient = PI * (SUCCESS - true_value)
    estimates = _bandit_gradients(baseline, n, groups=20000, seed=2)
    for name, expected in {
        "poise": true_gradient,
        "group": true_gradient * (n - 1) / n,
    }.items():
        mean = estimates[name].mean(0)
        error = estimates[name].std(0) / len(estimates[name]) ** 0.5
        assert torch.all((mean - expected).abs() < 4 * error + 1e-4), (name, mean, expected)
    own = estimates["own"].mean(0)
    own_error = estimates["own"].std(0) / len(estimates["own"]) ** 0.5
    assert (own - true_gradient).abs().max() > 10 * own_error.max(), "the control is unbiased"


def test_a_rollout_s_baseline_never_reads_its_own_features():
    values = torch.tensor([1.0, 2.0, 3.0, 10.0, 20.0, 30.0])
    baselines = cross_rollout_baselines(values, 3)
    assert baselines.tolist() == [2.5, 2.0, 1.5, 25.0, 20.0, 15.0]
    pairs = cross_rollout_baselines(torch.tensor([0.2, 0.8]), 2)
    assert pairs.tolist() == pytest.approx([0.8, 0.2])
    with pytest.raises(ValueError, match="at least two rollouts"):
        cross_rollout_baselines(values, 1)


def test_the_probe_learns_a_prompt_s_value_online():
    """Rewards drawn with a probability set by a direction in the prompt's state: after 300
    rollout batches the probe's predictions track that probability, which an untrained probe
    does not."""
    width, settings = 16, PoiseSettings(hidden_size=64, learning_rate=3e-3)
    generator = torch.Generator().manual_seed(0)
    direction = torch.randn(width, generator=generator)

    def batch(rows: int = 64):
        prompt = torch.randn(rows // 2, width, generator=generator).repeat_interleave(2, 0)
        # unit scale, as a decoder's last (normalised) states are
        prompt = prompt / prompt.norm(dim=1, keepdim=True) * width**0.5
        value = torch.sigmoid(prompt @ direction)
        trajectory = torch.randn(rows, width, generator=generator)
        stats = torch.rand(rows, TRAJECTORY_STATS, generator=generator)
        features = torch.cat([prompt, trajectory, stats], dim=1)
        return features, value, torch.bernoulli(value, generator=generator)

    baseline = PoiseBaseline(width, settings, seed=0)
    held_features, held_value, _ = batch(512)

    def fit() -> tuple[float, float]:
        with torch.no_grad():
            predicted = baseline.probe(held_features)
        mse = torch.nn.functional.mse_loss(predicted, held_value).item()
        return mse, torch.corrcoef(torch.stack([predicted, held_value]))[0, 1].item()

    untrained_mse, untrained_r = fit()
    for _ in range(300):
        features, _, rewards = batch()
        baseline.advantages(features, rewards, 2, "batch")
    mse, r = fit()
    assert r > 0.9 and mse < 0.04, (mse, r)
    assert untrained_mse > 3 * mse and untrained_r < 0.5


def test_unscorable_rollouts_get_no_advantage_and_are_not_learnt():
    baseline = _probe_of_width(WIDTH, PoiseSettings())
    features = _bandit_features(torch.tensor([0, 1, 2, 0]), 3)
    rewards = torch.tensor([1.0, float("nan"), 0.0, 1.0])
    advantages, logged = baseline.advantages(features, rewards, 2, "batch")
    assert advantages[1] == 0 and advantages[0] != 0
    assert len(baseline.buffer[0][1]) == 3
    assert set(logged) >= {"poise/value_mse", "poise/value_correlation"}


def test_identical_rewards_in_a_group_still_teach_under_poise():
    """Both rollouts right (or both wrong): GRPO's advantage is 0, POISE's is the reward
    against what the probe expected."""
    baseline = _probe_of_width(WIDTH, PoiseSettings())
    features = _bandit_features(torch.tensor([0, 0, 1, 1]), 3)
    rewards = torch.tensor([1.0, 1.0, 0.0, 0.0])
    advantages, logged = baseline.advantages(features, rewards, 2, "none")
    assert torch.all(advantages != 0)
    assert logged["poise/group_prompts_with_advantage"] == 0.0
    assert logged["poise/prompts_with_advantage"] == 1.0


def test_entropy_statistics_cover_the_completion_only():
    entropies = torch.tensor([[1.0, 3.0, 9.0], [2.0, 2.0, 2.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    stats = entropy_stats(entropies, mask, max_completion_length=6)
    expected = torch.tensor([[2.0, 1.0, 3.0, 2 / 6], [2.0, 0.0, 2.0, 3 / 6]])
    torch.testing.assert_close(stats, expected)


def test_the_probe_state_round_trips_exactly():
    settings = PoiseSettings(hidden_size=8)
    first = _probe_of_width(WIDTH, settings)
    features = _bandit_features(torch.tensor([0, 1, 2, 1]), 3)
    first.advantages(features, torch.tensor([1.0, 0.0, 1.0, 0.0]), 2, "none")
    second = _probe_of_width(WIDTH, settings, seed=5)
    second.load_state_dict(first.state_dict())
    more = torch.tensor([0.0, 1.0, 1.0, 1.0])
    a, _ = first.advantages(features, more, 2, "none")
    b, _ = second.advantages(features, more, 2, "none")
    assert torch.equal(a, b)
    for name, tensor in first.probe.state_dict().items():
        assert torch.equal(tensor, second.probe.state_dict()[name])


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ([], "needs grpo.scale_rewards: batch or none"),
        (
            ["grpo.scale_rewards=batch", "grpo.both_orders=true", "grpo.pair_baseline=true"],
            "poise and grpo.pair_baseline cannot be combined",
        ),
        (
            ["grpo.scale_rewards=none", "grpo.dynamic_sampling=true"],
            "poise and grpo.dynamic_sampling cannot be combined",
        ),
        (["grpo.scale_rewards=none", "grpo.poise.updates=0"], "grpo.poise.updates"),
    ],
)
def test_a_recipe_asking_for_poise_where_it_cannot_work_is_refused(tmp_path, overrides, problem):
    given = ["output_dir=out", "model.name_or_path=m", f"data.train={tmp_path}", "stage=grpo"]
    with pytest.raises(RecipeError, match=problem):
        load_recipe(None, [*given, "grpo.baseline=poise", "grpo.num_generations=2", *overrides])


# -- in the trainer ------------------------------------------------------------------------
def _states_reference(trainer, ids, mask, width, kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompt and mean trajectory states by the model's own `output_hidden_states`."""
    model = trainer.model
    with torch.no_grad():
        hidden = model(
            input_ids=ids, attention_mask=mask, output_hidden_states=True, **kwargs
        ).hidden_states[-1]
    states = hidden[:, -width - 1 : -1]
    completion = mask[:, -width:].float()
    trajectory = (states * completion[..., None]).sum(1) / completion.sum(1, keepdim=True)
    return states[:, 0], trajectory


def _rollout(ids, mask, width, groups, kwargs, media_rows=None) -> dict:
    rollout = {
        "prompt_ids": ids[:, :-width],
        "prompt_mask": mask[:, :-width],
        "completion_ids": ids[:, -width:],
        "completion_mask": mask[:, -width:],
        "prompt_group": groups,
        **kwargs,
    }
    if media_rows is not None:
        rollout["media_rows"] = media_rows
    return rollout


def _features_both_ways(trainer, rollout: dict) -> tuple[torch.Tensor, torch.Tensor]:
    passes = []
    for shared in (False, True):
        trainer.shared_prefix = shared
        before = _grouped_passes(trainer)
        passes.append(trainer._rollout_features(rollout))
        assert _grouped_passes(trainer) == before + shared, "the grouped pass did not run"
    return passes[0], passes[1]


POISE = ("grpo.baseline=poise", "grpo.scale_rewards=batch", "grpo.pair_baseline=false")


def test_the_probe_reads_the_decoder_s_last_states_in_both_pass_layouts(tiny_model_dir, tmp_path):
    """The features of a rollout batch with images, rows of one prompt apart: the standard
    and the grouped pass give the states the model's own `output_hidden_states` gives."""
    data = tmp_path / "color"
    synthesize("color", 6, data, seed=2, overwrite=True)
    trainer, budget = trainer_for(tiny_model_dir, data, tmp_path / "run", *POISE)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, data, 4, 7, shuffle=True)
    standard, grouped = _features_both_ways(trainer, _rollout(ids, mask, 7, groups, kwargs))
    torch.testing.assert_close(grouped, standard, atol=2e-5, rtol=1e-4)
    width = trainer.model.config.get_text_config().hidden_size
    prompt, trajectory = _states_reference(trainer, ids, mask, 7, kwargs)
    torch.testing.assert_close(standard[:, :width], prompt, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(standard[:, width : 2 * width], trajectory, atol=2e-5, rtol=1e-4)
    assert standard[:, -TRAJECTORY_STATS:].abs().sum() > 0


def test_the_probe_reads_video_rollouts_in_both_pass_layouts(tiny_model_dir, tmp_path):
    data = tmp_path / "motion"
    synthesize("motion", 2, data, seed=1, overwrite=True)
    trainer, budget = trainer_for(tiny_model_dir, data, tmp_path / "run", *POISE)
    ids, mask, repeat, rows = video_batch(trainer, budget, data, 5)
    rollout = _rollout(ids, mask, 5, torch.tensor(repeat), {}, media_rows=rows)
    standard, grouped = _features_both_ways(trainer, rollout)
    torch.testing.assert_close(grouped, standard, atol=2e-5, rtol=1e-4)
    assert not torch.equal(standard[0], standard[GENERATIONS]), "the two videos read alike"


def test_poise_trains_the_critic_and_logs_what_the_probe_got_right(
    warm_model, color_data, tmp_path
):
    """Two optimizer steps a rollout batch: TRL runs the policy over the batch for the old
    log-probs and the probe's features come from that pass (the pass of its own is covered by
    the resume test)."""
    out = tmp_path / "run"
    recipe = tiny_recipe(
        warm_model,
        color_data,
        out,
        *POISE,
        "max_steps=4",
        "grpo.steps_per_generation=2",
        "grpo.max_completion_length=12",
        "optim.per_device_train_batch_size=4",
        "optim.learning_rate=2e-4",
        "report_to=[]",
        f"data.eval={color_data}",
        "data.eval_every=2",
    )
    result = train(recipe)
    history = json.loads((out / "log_history.json").read_text())
    logged = [entry for entry in history if "poise/value_mse" in entry]
    # the held-out report at step 2 is logged beside that step's training log, not instead
    assert any("heldout/consistent_accuracy" in entry for entry in history)
    assert [entry["step"] for entry in history if "loss" in entry] == [1, 2, 3, 4]
    assert [entry["step"] for entry in logged] == [1, 3]  # a rollout batch every 2 steps
    for name in ("value_correlation", "advantage_variance", "group_advantage_variance"):
        assert all(f"poise/{name}" in entry for entry in logged)
    assert all(entry["poise/extra_pass"] == 0.0 for entry in logged), "an extra pass ran"
    tokens = [entry["tokens/generated"] for entry in history if "tokens/generated" in entry]
    assert tokens[0] > 0 and tokens == sorted(tokens) and len(set(tokens)) == 2
    lines = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert any(value != 0 for line in lines for value in line["advantage"])
    assert result["global_step"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2.5-vl-7b", "qwen3-vl-8b"])
def test_the_probe_reads_the_same_states_at_a_released_model_s_widths(tmp_path, name):
    """At the text width of the released model (one layer), in two chunks: both pass layouts
    give the states of the model's own `output_hidden_states`."""
    from mmcritic.models import build_tiny_model
    from mmcritic.models.published import released_widths

    data = tmp_path / "color"
    synthesize("color", 6, data, seed=2, overwrite=True)
    model = build_tiny_model(tmp_path / "wide", released_widths(name))
    trainer, budget = trainer_for(model, data, tmp_path / "run", *POISE, "grpo.beta=0.0")
    trainer.args.per_device_train_batch_size = GENERATIONS  # two chunks of one prompt each
    ids, mask, groups, kwargs = _image_batch(trainer, budget, data, 2, 5, shuffle=True)
    standard, grouped = _features_both_ways(trainer, _rollout(ids, mask, 5, groups, kwargs))
    torch.testing.assert_close(grouped, standard, atol=1e-5, rtol=1e-4)
    width = trainer.model.config.get_text_config().hidden_size
    assert width >= 3584
    prompt, trajectory = _states_reference(trainer, ids, mask, 5, kwargs)
    torch.testing.assert_close(standard[:, :width], prompt, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(standard[:, width : 2 * width], trajectory, atol=1e-5, rtol=1e-4)
