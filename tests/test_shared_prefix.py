"""The grouped (shared-prompt) log-prob pass gives the standard pass's log-probs, entropies and
gradients, on the tiny Qwen2.5-VL with images, videos, padding and shuffled rows, in chunks of
whole groups, under gradient checkpointing and LoRA, and at the 7B's widths; its decoder's memory
grows linearly with the grouped length."""

from __future__ import annotations

import math
import weakref
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from mmcritic.data.dataset import read_records
from mmcritic.data.media import MediaBudget
from mmcritic.data.synth import synthesize
from mmcritic.models import build_tiny_model
from mmcritic.models.families import family_of_model
from mmcritic.models.generation import encode_batch
from mmcritic.models.published import PUBLISHED, released_widths
from mmcritic.train.config import load_recipe
from mmcritic.train.examples import MediaLoader, to_dataset
from mmcritic.train.media_rollout import encode_prompts, token_types
from mmcritic.train.run import make_trainer
from mmcritic.train.shared_prefix import Groups, build_layout
from tests.conftest import FAMILY_NAMES

RECIPE = Path(__file__).parents[1] / "recipes" / "quickstart_cpu.yaml"
GENERATIONS = 3


def trainer_for(model: Path, data: Path, out: Path, *overrides: str):
    """The quickstart recipe's trainer on `data`, groups of GENERATIONS unless overridden;
    returns it and the run's media budget."""
    from transformers import AutoProcessor

    recipe = load_recipe(
        RECIPE,
        [
            f"output_dir={out}",
            f"model.name_or_path={model}",
            f"data.train={data}",
            "data.eval=null",
            "report_to=[]",
            f"grpo.num_generations={GENERATIONS}",
            "optim.per_device_train_batch_size=12",
            *overrides,
        ],
    )
    budget = family_of_model(model).media_budget(recipe.data.media_budget)
    processor = AutoProcessor.from_pretrained(model)
    dataset = to_dataset(read_records(data), budget)
    trainer = make_trainer(recipe, processor, dataset)
    return trainer, budget


def _completions(rows: int, width: int, vocab: int, generator: torch.Generator):
    """Random completion tokens (no special ones), right-padded to uneven lengths."""
    ids = torch.randint(3, vocab - 20, (rows, width), generator=generator)
    lengths = torch.randint(2, width + 1, (rows,), generator=generator)
    mask = (torch.arange(width)[None] < lengths[:, None]).long()
    return ids.masked_fill(mask == 0, 0), mask


def _grouped_passes(trainer) -> int:
    """How many grouped passes the trainer has run (each logs its token fraction once)."""
    return sum(
        len(trainer._metrics[mode]["shared_prefix/token_fraction"]) for mode in trainer._metrics
    )


def _both_passes(
    trainer, ids, mask, width, groups, kwargs, media_rows=None, weights=None, batch_size=None
):
    """(log-probs, entropies, gradients) of the standard and of the grouped pass, each under
    the loss sum(log-prob * weight) over completion tokens (random weights by default), both
    in chunks of `batch_size` rows (all rows by default)."""
    results = []
    if weights is None:
        weights = torch.randn(ids.size(0), width, generator=torch.Generator().manual_seed(7))
    for shared in (False, True):
        trainer.model.zero_grad()
        trainer.shared_prefix = shared
        trainer._prompt_groups = groups if shared else None
        trainer._media_rows = media_rows
        passes = _grouped_passes(trainer)
        logps, entropies, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model,
            ids,
            mask,
            width,
            batch_size or ids.size(0),
            compute_entropy=True,
            **dict(kwargs),
        )
        assert _grouped_passes(trainer) == passes + shared, "the grouped pass did not run"
        completion_mask = mask[:, -width:].to(logps.dtype)
        (logps * weights * completion_mask).sum().backward()
        grads = {
            name: p.grad.clone()
            for name, p in trainer.model.named_parameters()
            if p.grad is not None
        }
        results.append(
            (logps.detach() * completion_mask, entropies.detach() * completion_mask, grads)
        )
    trainer._media_rows = None
    return results


def _assert_same(standard, shared, trained: str = "visual"):
    """Same log-probs, entropies and gradients, and some gradient reached `trained` weights."""
    (logps_a, ent_a, grads_a), (logps_b, ent_b, grads_b) = standard, shared
    assert logps_a.abs().sum() > 0, "nothing was scored"
    torch.testing.assert_close(logps_b, logps_a, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(ent_b, ent_a, atol=2e-5, rtol=1e-4)
    assert set(grads_a) == set(grads_b)
    moved = [name for name, grad in grads_a.items() if grad.abs().sum() > 0]
    assert any(trained in name for name in moved), f"no {trained} weight got a gradient"
    for name in grads_a:
        torch.testing.assert_close(grads_b[name], grads_a[name], atol=1e-5, rtol=1e-3)


def _image_batch(trainer, budget: MediaBudget, data: Path, prompts: int, width: int, shuffle: bool):
    records = read_records(data)[:prompts]
    media = MediaLoader(budget).load_records(records)
    encoded = encode_batch(
        trainer.processing_class, [r.prompt for r in records], media["images"], None
    )
    repeat = torch.arange(prompts).repeat_interleave(GENERATIONS)
    prompt_ids, prompt_mask = encoded["input_ids"][repeat], encoded["attention_mask"][repeat]
    vocab = trainer.model.config.get_text_config().vocab_size
    completion, completion_mask = _completions(
        len(repeat), width, vocab, torch.Generator().manual_seed(3)
    )
    ids = torch.cat([prompt_ids, completion], dim=1)
    mask = torch.cat([prompt_mask, completion_mask], dim=1)
    grids = encoded["image_grid_thw"]
    per_image = torch.split(encoded["pixel_values"], grids.prod(-1).tolist())
    rows = repeat.tolist()
    if shuffle:  # rows of one prompt apart, as after TRL shuffles a generation batch
        order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(5))
        ids, mask, rows = ids[order], mask[order], [rows[i] for i in order.tolist()]
    kwargs = {
        "pixel_values": torch.cat([per_image[r] for r in rows]),
        "image_grid_thw": grids[rows],
        "num_images": [1] * len(rows),
        "mm_token_type_ids": token_types(
            ids, trainer._image_pad_token_id, trainer._video_pad_token_id
        ),
    }
    return ids, mask, torch.tensor(rows), kwargs


def video_batch(
    trainer, budget: MediaBudget, data: Path, width: int
) -> tuple[torch.Tensor, torch.Tensor, list[int], list]:
    """Each video record's prompt GENERATIONS times with random completions of up to `width`
    tokens: (ids, mask, each row's record, each row's media)."""
    records = read_records(data)
    media = MediaLoader(budget).load_records(records)
    encoded = encode_prompts(
        trainer.processing_class, [r.prompt for r in records], media["images"], media["videos"]
    )
    repeat = torch.arange(len(records)).repeat_interleave(GENERATIONS).tolist()
    longest = max(len(ids) for ids in encoded.prompt_ids)
    pad = trainer._tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (longest - len(x)) + x for x in encoded.prompt_ids])
    prompt_mask = torch.tensor(
        [[0] * (longest - len(x)) + [1] * len(x) for x in encoded.prompt_ids]
    )
    vocab = trainer.model.config.get_text_config().vocab_size
    completion, completion_mask = _completions(
        len(repeat), width, vocab, torch.Generator().manual_seed(4)
    )
    ids = torch.cat([prompt_ids[repeat], completion], 1)
    mask = torch.cat([prompt_mask[repeat], completion_mask], 1)
    return ids, mask, repeat, [encoded.rows[r] for r in repeat]


@pytest.fixture(scope="module")
def color_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("prefix_color")
    synthesize("color", 6, folder, seed=2, overwrite=True)
    return folder


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
def test_grouped_pass_equals_the_standard_pass_on_images(
    tiny_family, color_set, tmp_path, shuffle, family
):
    trainer, budget = trainer_for(tiny_family(family), color_set, tmp_path)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle)
    assert mask[:, : ids.size(1) - 7].min() == 0, "prompts of different lengths: left padding"
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs)
    _assert_same(standard, shared)


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("batch_size", [None, 6], ids=["one_chunk", "two_chunks"])
def test_grouped_pass_equals_the_standard_pass_on_videos(tiny_family, tmp_path, batch_size, family):
    """Videos ride with their rows: chunks of whole groups take their own rows' videos (on
    Qwen3-VL each frame pair its own run of video tokens behind a timestamp)."""
    data = tmp_path / "motion"
    synthesize("motion", 3, data, seed=1, overwrite=True)
    trainer, budget = trainer_for(tiny_family(family), data, tmp_path / "run")
    ids, mask, repeat, rows = video_batch(trainer, budget, data, 6)
    shuffle = torch.randperm(len(repeat), generator=torch.Generator().manual_seed(6)).tolist()
    standard, shared = _both_passes(
        trainer,
        ids[shuffle],
        mask[shuffle],
        6,
        torch.tensor(repeat)[shuffle],
        {},
        media_rows=[rows[i] for i in shuffle],
        batch_size=batch_size,
    )
    _assert_same(standard, shared)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_in_float64_the_grouped_gradients_are_the_standard_ones_up_to_rounding(
    tiny_family, color_set, tmp_path, family
):
    """GRPO-like weights (advantages that cancel within each group) in float64: the grouped
    pass's log-probs equal the standard pass's exactly and its gradients to 1e-6 relative,
    the rounding of TRL's log-prob head, which computes in float32 whatever the model's
    dtype. A wrong mask, position or gather would differ by orders of magnitude more."""
    trainer, budget = trainer_for(tiny_family(family), color_set, tmp_path)
    trainer.model.to(torch.float64)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    kwargs["pixel_values"] = kwargs["pixel_values"].to(torch.float64)
    advantages = torch.randn(ids.size(0), generator=torch.Generator().manual_seed(7))
    for group in groups.unique():
        advantages[groups == group] -= advantages[groups == group].mean()
    weights = advantages[:, None].to(torch.float64).expand(-1, 7)
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, weights=weights)
    assert torch.equal(shared[0], standard[0])
    flat = [
        torch.cat([grads[name].flatten() for name in sorted(grads)])
        for *_, grads in (standard, shared)
    ]
    assert (flat[1] - flat[0]).norm() <= 1e-6 * flat[0].norm()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2-vl-7b", "qwen2.5-vl-7b", "qwen3-vl-8b"])
def test_grouped_pass_equals_the_standard_pass_at_each_family_7b_widths(color_set, tmp_path, name):
    """A released model's text widths (Qwen2.5-VL-7B: hidden 3584, 28 heads over 4 KV heads of
    128, MLP 18944, M-RoPE sections 16/24/24; Qwen3-VL-8B: 32 heads over 8, interleaved sections
    24/20/20, DeepStack) in one layer, behind a one-block vision tower of its real width:
    log-probs and entropies within 1e-5, in two chunks, and the attention weights' gradients
    (the only ones asked for, to keep the test's memory and time down) within 1e-5 relative."""
    model = build_tiny_model(tmp_path / "wide", released_widths(name))
    trainer, budget = trainer_for(model, color_set, tmp_path / "run", "grpo.beta=0.0")
    rope = trainer.model.config.text_config.rope_parameters
    assert rope["mrope_section"] == list(PUBLISHED[name].mrope_section)
    for parameter_name, parameter in trainer.model.named_parameters():
        parameter.requires_grad_(".self_attn." in parameter_name)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 2, 5, shuffle=True)
    standard, shared = _both_passes(trainer, ids, mask, 5, groups, kwargs, batch_size=3)
    assert standard[0].abs().sum() > 0, "nothing was scored"
    torch.testing.assert_close(shared[0], standard[0], atol=1e-5, rtol=0)
    torch.testing.assert_close(shared[1], standard[1], atol=1e-5, rtol=0)
    assert sorted(standard[2]) == sorted(shared[2])
    assert len(standard[2]) >= 6  # q, k, v, o and their biases or q/k norms
    for parameter_name, grad in standard[2].items():
        assert grad.norm() > 0, parameter_name
        assert (shared[2][parameter_name] - grad).norm() <= 1e-5 * grad.norm(), parameter_name


def test_whole_groups_fill_each_chunk_in_order():
    groups = Groups([[0, 4], [1, 2, 5], [3], [6, 7, 8, 9]])
    assert [chunk.members for chunk in groups.chunks(3)] == [
        [[0, 4]],
        [[1, 2, 5]],
        [[3]],
        [[6, 7, 8, 9]],  # a group larger than the chunk runs alone
    ]
    assert [chunk.members for chunk in groups.chunks(4)] == [
        [[0, 4]],
        [[1, 2, 5], [3]],
        [[6, 7, 8, 9]],
    ]
    assert [chunk.members for chunk in groups.chunks(6)] == [
        [[0, 4], [1, 2, 5], [3]],
        [[6, 7, 8, 9]],
    ]


def test_chunks_are_halved_until_there_are_as_many_as_another_rank_runs():
    groups = Groups([[0, 1, 2, 3], [4, 5, 6, 7]])
    assert len(groups.chunks(8)) == 1
    assert [chunk.members for chunk in groups.chunks(8, count=2)] == [
        [[0, 1, 2, 3]],
        [[4, 5, 6, 7]],
    ]
    # a lone group splits into rows of the same prompt, in order
    assert [chunk.members for chunk in groups.chunks(8, count=3)] == [
        [[0, 1]],
        [[2, 3]],
        [[4, 5, 6, 7]],
    ]
    assert [chunk.members for chunk in groups.chunks(None, count=2)] == [
        [[0, 1, 2, 3]],
        [[4, 5, 6, 7]],
    ]
    assert sum(len(chunk.rows) for chunk in groups.chunks(8, count=8)) == 8
    with pytest.raises(ValueError, match="cannot be split"):
        groups.chunks(8, count=9)
    assert [chunk.members for chunk in groups.chunks(None)] == [groups.members]


@pytest.mark.parametrize(("batch_size", "chunks"), [(4, 4), (6, 2), (9, 2)])
def test_grouped_pass_in_chunks_equals_the_standard_pass(
    tiny_model_dir, color_set, tmp_path, batch_size, chunks
):
    """Shuffled rows of four prompts of different lengths, in chunks of whole groups: each
    chunk's forward holds its own rows' images, and the rows come back in their order."""
    trainer, budget = trainer_for(tiny_model_dir, color_set, tmp_path)
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    forwards = []
    trainer.model.register_forward_pre_hook(
        lambda module, args, inputs: forwards.append("shift_labels" in inputs), with_kwargs=True
    )
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, batch_size=batch_size)
    _assert_same(standard, shared)
    assert sum(forwards) == chunks
    assert len(forwards) - sum(forwards) == math.ceil(ids.size(0) / batch_size)  # TRL's chunks


@pytest.mark.parametrize("family", FAMILY_NAMES)
@pytest.mark.parametrize("reentrant", [False, True], ids=["non_reentrant", "reentrant"])
def test_gradient_checkpointing_recomputes_with_the_grouped_attention(
    tiny_family, color_set, tmp_path, reentrant, family
):
    """Checkpointed layers rerun their forward in backward, after the pass has returned: the
    rerun must attend as the grouped layout does, or the gradients are those of other sums
    (on Qwen3-VL the rerun adds the DeepStack features again too)."""
    trainer, budget = trainer_for(tiny_family(family), color_set, tmp_path)
    trainer.model.activation_checkpointing_enable({"use_reentrant": reentrant})
    trainer.model.train()
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, batch_size=6)
    _assert_same(standard, shared)
    assert trainer.model.config.get_text_config()._attn_implementation == "sdpa"


def test_a_model_loaded_with_eager_attention_keeps_it_around_the_grouped_pass(
    tiny_model_dir, color_set, tmp_path
):
    trainer, budget = trainer_for(
        tiny_model_dir, color_set, tmp_path, "model.attn_implementation=eager"
    )
    config = trainer.model.config
    assert config.get_text_config()._attn_implementation == "eager"
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, batch_size=6)
    _assert_same(standard, shared)
    assert config.get_text_config()._attn_implementation == "eager"
    assert config.vision_config._attn_implementation == "eager"


def test_grouped_pass_equals_the_standard_pass_through_a_lora_wrapper(
    tiny_model_dir, color_set, tmp_path
):
    """A PEFT-wrapped policy: the grouped attention finds the text config and layers through
    the wrapper (LoRA dropout off: its random masks would differ between the two passes)."""
    trainer, budget = trainer_for(
        tiny_model_dir,
        color_set,
        tmp_path,
        "model.lora.enabled=true",
        "model.lora.r=4",
        "model.lora.dropout=0.0",
        "model.lora.target_modules=[q_proj,v_proj]",
    )
    ids, mask, groups, kwargs = _image_batch(trainer, budget, color_set, 4, 7, shuffle=True)
    standard, shared = _both_passes(trainer, ids, mask, 7, groups, kwargs, batch_size=6)
    _assert_same(standard, shared, trained="lora_")


def test_prompts_must_be_left_padded_and_completions_right_padded():
    groups = Groups([[0, 1]])
    prompt_ids = torch.tensor([[5, 6, 7], [5, 6, 7]])
    completion_ids = torch.tensor([[8, 9], [8, 9]])
    positions = torch.arange(3).expand(3, 1, 3)
    types = torch.zeros(1, 3, dtype=torch.long)
    ones = torch.ones(2, 2, dtype=torch.long)
    left = torch.tensor([[0, 1, 1], [0, 1, 1]])
    layout = build_layout(prompt_ids, left, completion_ids, ones, positions, types, groups, 0)
    assert layout.attention.left_padding == (1,)
    right = torch.tensor([[1, 1, 0], [1, 1, 0]])
    with pytest.raises(ValueError, match="left-padded"):
        build_layout(prompt_ids, right, completion_ids, ones, positions, types, groups, 0)
    holes = torch.tensor([[0, 1], [1, 1]])
    with pytest.raises(ValueError, match="right-padded"):
        build_layout(prompt_ids, left, completion_ids, holes, positions, types, groups, 0)


class LiveTensorBytes(TorchDispatchMode):
    """Peak bytes held by the tensors that ops create while the mode is on.

    On a CPU torch keeps no allocator statistics (`max_memory_allocated` is CUDA's), a process's
    peak RSS mixes in the allocator's caching and everything else the process holds, and the
    profiler attributes memory to ops rather than over time. A dispatch mode sees every tensor an
    op returns, below autograd, so saved activations count as long as autograd keeps them; a
    finalizer on each tensor sees it freed. Views and in-place results add no storage. What it
    cannot see is scratch space inside a fused kernel, which sdpa's CPU kernel bounds by tiles."""

    def __init__(self) -> None:
        super().__init__()
        self.storages: dict[int, list[int]] = {}  # data pointer -> [bytes, tensors on it]
        self.live = self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        aliases = any(result.alias_info is not None for result in func._schema.returns)
        for tensor in tree_leaves(out):
            if isinstance(tensor, torch.Tensor):
                self._track(tensor, aliases)
        return out

    def _track(self, tensor: torch.Tensor, aliases: bool) -> None:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key not in self.storages:
            if aliases or storage.nbytes() == 0:
                return
            self.storages[key] = [storage.nbytes(), 0]
            self.live += storage.nbytes()
            self.peak = max(self.peak, self.live)
        self.storages[key][1] += 1
        weakref.finalize(tensor, self._release, key)

    def _release(self, key: int) -> None:
        entry = self.storages[key]
        entry[1] -= 1
        if entry[1] == 0:
            del self.storages[key]
            self.live -= entry[0]


def test_live_tensor_bytes_counts_what_autograd_keeps_and_sees_quadratic_growth():
    weight = torch.randn(100, 100, requires_grad=True)
    with LiveTensorBytes() as memory:
        inputs = torch.randn(100, 100)
        output = (inputs @ weight).tanh()  # matmul keeps its input, tanh its output
        del inputs
        assert memory.live == 2 * 100 * 100 * 4
        output.sum().backward()
        del output
        assert memory.live == 100 * 100 * 4  # the weight's gradient
    peaks = []
    for size in (100, 200, 400):
        with LiveTensorBytes() as memory:
            torch.ones(size, size).tril()
        peaks.append(memory.peak)
    assert (peaks[2] - peaks[1]) / (peaks[1] - peaks[0]) == 4


def _decoder_peak(trainer, prompt_length: int, width: int = 8) -> tuple[int, int]:
    """(grouped length, peak bytes) of the text decoder's forward (its attention and any mask
    transformers builds for it) in the grouped log-prob pass over two text prompts of
    `prompt_length` tokens (the second left-padded by ten), GENERATIONS completions each.
    TRL's log-prob head after the decoder holds a (tokens, 32768) tile, which would drown the
    attention's share in the whole pass."""
    generator = torch.Generator().manual_seed(prompt_length)
    vocab = trainer.model.config.get_text_config().vocab_size
    prompts = torch.randint(3, vocab - 20, (2, prompt_length), generator=generator)
    prompt_mask = torch.ones_like(prompts)
    prompts[1, :10], prompt_mask[1, :10] = trainer._tokenizer.pad_token_id, 0
    groups = torch.arange(2).repeat_interleave(GENERATIONS)
    completion, completion_mask = _completions(len(groups), width, vocab, generator)
    ids = torch.cat([prompts[groups], completion], dim=1)
    mask = torch.cat([prompt_mask[groups], completion_mask], dim=1)
    trainer.shared_prefix, trainer._prompt_groups = True, groups
    passes = _grouped_passes(trainer)
    memory = LiveTensorBytes()

    def start(*_) -> None:
        memory.__enter__()

    def stop(*_) -> None:
        memory.__exit__(None, None, None)

    decoder = trainer.model.model.language_model
    hooks = [decoder.register_forward_pre_hook(start), decoder.register_forward_hook(stop)]
    with torch.no_grad():
        trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, width, len(groups))
    for hook in hooks:
        hook.remove()
    assert _grouped_passes(trainer) == passes + 1, "the grouped pass did not run"
    return prompt_length - 1 + GENERATIONS * (width + 1), memory.peak


def test_grouped_pass_memory_grows_linearly_with_the_group_length(
    tiny_model_dir, color_set, tmp_path
):
    """Peak memory of the grouped pass's decoder at three group lengths, each step twice the
    last: linear growth doubles the increment from one length to the next, an (L, L) mask or
    score matrix about quadruples it."""
    trainer, _ = trainer_for(tiny_model_dir, color_set, tmp_path)
    (short, low), (middle, mid), (long, high) = (
        _decoder_peak(trainer, length) for length in (485, 970, 1940)
    )
    assert (middle - short) * 2 == long - middle
    ratio = (high - mid) / (mid - low)
    quadratic = (long**2 - middle**2) / (middle**2 - short**2)
    assert mid > low
    assert abs(ratio - 2) < 0.1, f"increments grow {ratio:.2f}x (quadratic: {quadratic:.2f}x)"
