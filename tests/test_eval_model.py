"""`mmcritic eval` with the tiny local model: end to end, interrupted and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mmcritic.cli import main
from mmcritic.eval.backends import ModelBackend
from mmcritic.eval.runner import EvalOptions, run_eval, samples_path
from mmcritic.inference.engines import Engine, open_engine
from mmcritic.inference.media import media_list
from mmcritic_dev.scaling import ScalingOptions, run_scaling
from tests.media_factory import write_png
from tests.test_eval_fixtures import all_task_data


@pytest.fixture(scope="session")
def eval_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return all_task_data(tmp_path_factory)


def _doc_ids(path: Path) -> list[int]:
    return [json.loads(line)["doc_id"] for line in path.read_text().splitlines()]


def _cli(model: Path, out: Path, data: dict[str, Path], tasks: list[str], *extra: str) -> int:
    flags = [f"--task-data={task}={data[task]}" for task in tasks]
    return main(
        [
            "--quiet",
            "eval",
            f"--model={model}",
            f"--tasks={','.join(tasks)}",
            f"--output={out}",
            "--max-new-tokens=4",
            "--batch-size=2",
            "--device=cpu",
            *flags,
            *extra,
        ]
    )


def test_tiny_model_runs_two_tasks_and_resumes_without_redoing_or_losing_samples(
    tiny_model_dir, eval_data, tmp_path, capsys
) -> None:
    tasks, out = ["chartqa", "vl_rewardbench"], tmp_path / "run"

    assert _cli(tiny_model_dir, out, eval_data, tasks, "--limit=2") == 0
    before = {task: samples_path(out, task).read_text().splitlines() for task in tasks}
    capsys.readouterr()
    assert _cli(tiny_model_dir, out, eval_data, tasks, "--limit=3", "--resume") == 0

    printed = json.loads(capsys.readouterr().out)
    for task in tasks:
        lines = samples_path(out, task).read_text().splitlines()
        assert lines[:2] == before[task]
        assert _doc_ids(samples_path(out, task)) == [0, 1, 2]
        assert printed["tasks"][task]["n_samples"] == 3
    results = json.loads((out / "results.json").read_text())
    assert set(results["tasks"]["vl_rewardbench"]["metrics"]) >= {"accuracy", "macro_accuracy"}


class RecordingEngine(Engine):
    """Passes generation through and keeps the requests: what reached the model, and how."""

    name = "hf"

    def __init__(self, engine: Engine):
        self.engine, self.requests, self.samplings = engine, [], []

    def try_generate(self, requests: Sequence[Any], sampling: Any) -> list[Any]:
        self.requests += requests
        self.samplings.append(sampling)
        return self.engine.try_generate(requests, sampling)


def _recorded(options: EvalOptions) -> tuple[ModelBackend, RecordingEngine]:
    """A model backend whose generation (prompts, self-critique, judging) is recorded."""
    engine = RecordingEngine(open_engine(options.engine_options))
    return ModelBackend(engine, options.generation), engine


def _shown(engine: RecordingEngine) -> list[list[str]]:
    return [[media.kind for media in media_list(request.media)] for request in engine.requests]


def test_every_image_and_video_of_an_item_reaches_the_model(
    tiny_model_dir, eval_data, tmp_path
) -> None:
    options = EvalOptions(
        model=str(tiny_model_dir),
        tasks=("blink", "mmvu"),
        output=tmp_path / "run",
        task_data={task: str(eval_data[task]) for task in ("blink", "mmvu")},
        limit=2,
        max_new_tokens=4,
        device="cpu",
        show_progress=False,
    )
    backend, policy = _recorded(options)

    results = run_eval(options, backend)

    assert _shown(policy) == [["image"], ["image"] * 3, ["video"], ["video"]]
    assert [results["tasks"][task]["n_samples"] for task in ("blink", "mmvu")] == [2, 2]


def _tiny_run(model: Path, data: dict[str, Path], tmp_path: Path, tasks: tuple[str, ...]):
    """Options for a run of the tiny model on the fixture copies of `tasks`, on the CPU."""
    return EvalOptions(
        model=str(model),
        tasks=tasks,
        output=tmp_path / "run",
        task_data={task: str(data[task]) for task in tasks},
        device="cpu",
        show_progress=False,
    )


def test_the_lmms_eval_protocol_reaches_the_model_as_lmms_eval_sends_it(
    tiny_model_dir, eval_data, tmp_path
) -> None:
    options = _tiny_run(tiny_model_dir, eval_data, tmp_path, ("mmmu_val", "vl_rewardbench"))
    options = replace(options, limit=3, protocol="lmms-eval")
    backend, engine = _recorded(options)

    results = run_eval(options, backend)

    layouts = [
        [part["type"] for part in request.message()[0]["content"]] for request in engine.requests
    ]
    assert layouts[2] == ["text", "image", "text", "image", "text"]  # Compare <1> and <2>.
    assert layouts[3] == ["image", "text"]  # the judge prompt after the image
    assert engine.requests[3].text.startswith(" You are a highly capable multimodal AI")
    mmmu, judge = engine.samplings
    assert (mmmu.max_new_tokens, mmmu.temperature) == (128, 0.0)
    assert (judge.max_new_tokens, judge.temperature, judge.top_p) == (1024, 1.0, 1.0)
    pixels = [image.width * image.height for image in engine.requests[0].loaded("image")]
    assert all(200_704 <= count <= 1_605_632 for count in pixels)
    assert results["tasks"]["vl_rewardbench"]["protocol"]["name"] == "lmms-eval"


def test_the_official_protocol_sends_the_text_first_where_the_release_does(
    tiny_model_dir, eval_data, tmp_path
) -> None:
    options = _tiny_run(tiny_model_dir, eval_data, tmp_path, ("blink", "vl_rewardbench"))
    options = replace(options, limit=1, protocol="official", max_new_tokens=4)
    backend, engine = _recorded(options)

    results = run_eval(options, backend)

    layouts = [
        [part["type"] for part in request.message()[0]["content"]] for request in engine.requests
    ]
    assert layouts == [["text", "image"], ["text", "image"]]
    judge = engine.samplings[1]
    assert (judge.temperature, judge.top_p) == (0.2, 0.2)
    assert results["tasks"]["vl_rewardbench"]["protocol"]["overrides"] == {"max_new_tokens": 4}


def test_best_of_n_picks_one_of_the_sampled_answers(tiny_model_dir, eval_data, tmp_path) -> None:
    options = EvalOptions(
        model=str(tiny_model_dir),
        tasks=("ai2d",),
        output=tmp_path / "run",
        task_data={"ai2d": str(eval_data["ai2d"])},
        limit=1,
        max_new_tokens=4,
        bon_n=3,
        bon_strategy="round_robin",
        device="cpu",
        show_progress=False,
    )

    run_eval(options)

    record = json.loads(samples_path(options.output, "ai2d").read_text())
    picked = record["self_critique"]
    assert len(picked["candidates"]) == 3
    assert record["response"] == picked["candidates"][picked["chosen"]]
    assert picked["comparisons"] == 3


@pytest.mark.slow
def test_a_killed_run_resumes_where_it_stopped(tiny_model_dir, eval_data, tmp_path) -> None:
    out, total = tmp_path / "run", 4
    command = [
        sys.executable,
        "-m",
        "mmcritic.cli",
        "--quiet",
        "eval",
        f"--model={tiny_model_dir}",
        "--tasks=chartqa",
        f"--task-data=chartqa={eval_data['chartqa']}",
        f"--output={out}",
        # long enough per sample that the kill lands between the first and the last sample
        "--max-new-tokens=400",
        "--batch-size=1",
        "--device=cpu",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = samples_path(out, "chartqa")
    while process.poll() is None and not (log.exists() and log.read_text().count("\n") >= 1):
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    finished = [line for line in log.read_text().splitlines() if line.endswith("}")]
    assert 1 <= len(finished) < total

    subprocess.run([*command, "--resume"], check=True, capture_output=True)

    assert log.read_text().splitlines()[: len(finished)] == finished
    assert _doc_ids(log) == list(range(total))


def test_self_critique_scaling_writes_curves_samples_and_a_plot(
    tiny_model_dir, eval_data, tmp_path
) -> None:
    options = ScalingOptions(
        model=str(tiny_model_dir),
        task="ai2d",
        output=tmp_path / "scaling",
        ns=(1, 2),
        limit=1,
        max_new_tokens=4,
        task_data=str(eval_data["ai2d"]),
        device="cpu",
        show_progress=False,
    )

    result = run_scaling(options)

    assert set(result["curves"]) == {"knockout", "round_robin", "pointwise", "majority", "oracle"}
    assert all(set(curve) == {"1", "2"} for curve in result["curves"].values())
    record = json.loads((options.output / "scaling_samples.jsonl").read_text())
    assert len(record["candidates"]) == 2
    assert (options.output / "scaling.png").read_bytes().startswith(b"\x89PNG")


def test_a_video_given_as_a_frame_folder_is_judged_as_a_video(tiny_model_dir, tmp_path) -> None:
    for index in range(1, 7):
        write_png(tmp_path / "video" / "0001" / f"{index:04d}.png", color=(40 * index, 90, 160))
    row = {
        "id": "q1",
        "image": None,
        "video": "video/0001",
        "prompt": "What happens?",
        "chosen": "A ball rolls.",
        "rejected": "Nothing.",
    }
    data = tmp_path / "mm_reward_bench.json"
    data.write_text(json.dumps([row]))
    options = EvalOptions(
        model=str(tiny_model_dir),
        tasks=("mm_rlhf_rewardbench",),
        output=tmp_path / "run",
        task_data={"mm_rlhf_rewardbench": str(data)},
        max_new_tokens=4,
        device="cpu",
        show_progress=False,
    )
    backend, critic = _recorded(options)

    result = run_eval(options, backend)["tasks"]["mm_rlhf_rewardbench"]

    assert result["n_samples"] == 1 and set(result["metrics"]) >= {"accuracy", "acc_plus"}
    (video,) = media_list(critic.requests[0].media)
    assert (video.kind, len(video.source), video.max_frames) == ("video", 6, 32)
    line = json.loads(samples_path(options.output, "mm_rlhf_rewardbench").read_text())
    assert line["meta"]["category"] == "video" and "response" in line
