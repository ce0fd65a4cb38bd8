"""The openai engine against a real OpenAI-compatible server: `transformers serve` running the
tiny Qwen2.5-VL on 127.0.0.1, checked against the hf engine on the same checkpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from mmcritic.cli import main
from mmcritic.data.synth import synthesize
from mmcritic.demo.model import DemoModel
from mmcritic.eval.backends import ModelBackend
from mmcritic.eval.runner import EvalOptions, run_eval, samples_path
from mmcritic.inference import Comparison, Critic, Media
from mmcritic.inference.engines import (
    Engine,
    EngineError,
    EngineOptions,
    Request,
    RequestFailed,
    Sampling,
    open_engine,
)
from mmcritic.inference.engines.options import server_options
from mmcritic.inference.engines.served import ServedEngine, ServerUnavailable
from mmcritic.train.critic_reward import CriticJudgeReward, JudgeOptions
from mmcritic_dev.demo_screenshots import free_port
from mmcritic_dev.local_server import LocalServer, start_server
from tests.faulty_proxy import FaultyProxy
from tests.test_critic_reward import BUDGET, _batch, _critic_metrics, _policy_run
from tests.test_eval_fixtures import all_task_data

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
QUESTIONS = ("What colour is the square?", "Describe the picture.", "Which shape is larger?")


@pytest.fixture(scope="module")
def server(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    started = start_server(tiny_model_dir, tmp_path_factory.mktemp("server") / "serve.log")
    yield started
    started.kill()


@pytest.fixture(scope="module")
def hf(tiny_model_dir: Path) -> Engine:
    return open_engine(EngineOptions("hf", str(tiny_model_dir), "cpu", "float32", batch_size=4))


def _served(tiny_model_dir: Path, *urls: str, **options: Any) -> ServedEngine:
    """The served engine as `--engine openai` opens it, with short backoffs."""
    chosen = server_options(EngineOptions("openai", str(tiny_model_dir), base_urls=urls))
    return ServedEngine(replace(chosen, backoff_s=0.05, **{"retries": 1, **options}))


@pytest.fixture
def pictures() -> list[Media]:
    colours = [(200, 30, 30), (30, 200, 30), (30, 30, 200)]
    return [
        Media.image(Image.new("RGB", (90 + 30 * i, 60), colour)) for i, colour in enumerate(colours)
    ]


def _requests(pictures: Sequence[Media]) -> list[Request]:
    return [
        Request(QUESTIONS[0], pictures[0]),
        Request(QUESTIONS[1], [pictures[1], pictures[2]]),
        Request(QUESTIONS[2], None),
        Request("Compare", pictures, ("Compare", 0, "with", 1, "and", 2, ".")),
    ]


def test_greedy_answers_through_a_server_equal_the_hf_engines(
    server, hf, tiny_model_dir, pictures
) -> None:
    served = _served(tiny_model_dir, server.url)
    sampling = Sampling(max_new_tokens=24)

    here = hf.generate(_requests(pictures), sampling)
    there = served.generate(_requests(pictures), sampling)

    # transformers serve's Qwen response parser trims the answer's outer whitespace
    assert [[text.strip() for text in row] for row in here] == there
    assert len({row[0] for row in there}) == len(there), "different prompts, different answers"
    assert served.kind == "transformers"
    assert served.describe()["requests"] == 4


def test_stop_strings_end_the_answer_on_both_engines_and_are_left_out(
    server, hf, tiny_model_dir, pictures
) -> None:
    served = _served(tiny_model_dir, server.url)
    [[full]] = served.generate([Request(QUESTIONS[0], pictures[0])], Sampling(24))
    stop = full.strip()[3:5]

    sampling = Sampling(24, stop=(stop,))
    [[here]] = hf.generate([Request(QUESTIONS[0], pictures[0])], sampling)
    [[there]] = served.generate([Request(QUESTIONS[0], pictures[0])], sampling)

    assert stop not in there and len(there) < len(full)
    assert here.strip() == there.strip() == full.strip()[: full.strip().index(stop)].strip()


def test_n_samples_come_back_even_from_a_server_that_ignores_n(
    server, tiny_model_dir, pictures
) -> None:
    served = _served(tiny_model_dir, server.url)
    [texts] = served.generate(
        [Request(QUESTIONS[1], pictures[1])], Sampling(12, n=3, temperature=1.0)
    )

    assert len(texts) == 3 and len(set(texts)) == 3
    assert served.describe()["requests"] == 3


def test_two_servers_share_the_load(server, tiny_model_dir, pictures, tmp_path) -> None:
    second = start_server(tiny_model_dir, tmp_path / "second.log")
    try:
        served = _served(tiny_model_dir, server.url, second.url, concurrency=1)
        requests = [
            Request(f"{question} ({i})", pictures[i % 3])
            for i in range(4)
            for question in QUESTIONS
        ]
        texts = served.generate(requests, Sampling(8))
    finally:
        second.kill()

    counts = [entry["requests"] for entry in served.describe()["servers"]]
    assert len(texts) == 12 and sum(counts) == 12
    assert min(counts) >= 3, counts


def test_a_server_down_at_start_is_one_error_naming_it(tiny_model_dir) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ServerUnavailable, match=f"cannot reach the server at {url}"):
        _served(tiny_model_dir, url)


def test_credentials_never_reach_the_record(server, tiny_model_dir, pictures) -> None:
    with_secret = server.url.replace("127.0.0.1", "user:hunter2@127.0.0.1")
    served = _served(tiny_model_dir, with_secret)
    served.generate([Request(QUESTIONS[0], pictures[0])], Sampling(4))

    assert "hunter2" not in json.dumps(served.describe())
    assert served.describe()["servers"][0]["url"] == server.url


@pytest.mark.parametrize("fault", ["malformed", "empty", "error500"])
def test_a_spoiled_reply_is_retried(server, tiny_model_dir, pictures, fault) -> None:
    proxy = FaultyProxy(server.url)
    try:
        served = _served(tiny_model_dir, proxy.url, retries=1)
        proxy.spoil(fault, 1)
        [[text]] = served.generate([Request(QUESTIONS[0], pictures[0])], Sampling(8))
    finally:
        proxy.close()

    assert text and proxy.spoiled == 1
    assert (served.describe()["retries"], served.describe()["failures"]) == (1, 0)


@pytest.mark.parametrize(
    ("fault", "attempts"), [("malformed", 2), ("empty", 2), ("error500", 2), ("huge", 1)]
)
def test_a_reply_spoiled_every_time_fails_its_request_alone(
    server, tiny_model_dir, pictures, fault, attempts
) -> None:
    proxy = FaultyProxy(server.url)
    try:
        served = _served(tiny_model_dir, proxy.url, retries=1, concurrency=1)
        proxy.spoil(fault, attempts)
        first, second = served.try_generate(
            [Request(QUESTIONS[0], pictures[0]), Request(QUESTIONS[2], None)], Sampling(8)
        )
    finally:
        proxy.close()

    # a reply past what the asked tokens can hold is a server fault no retry mends
    reasons = {
        "malformed": "not a chat completion",
        "empty": "without answer texts",
        "error500": "HTTP 500",
        "huge": "reply larger than",
    }
    assert isinstance(first, RequestFailed) and first.attempts == attempts
    assert first.url == proxy.url and reasons[fault] in first.reason
    assert isinstance(second, list) and second[0]
    assert served.describe()["failures"] == 1
    with pytest.raises(EngineError, match="1 of 1 requests failed"):
        proxy.spoil(fault, attempts)
        served.generate([Request(QUESTIONS[0], pictures[0])], Sampling(8))


@pytest.fixture(scope="module")
def eval_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return all_task_data(tmp_path_factory)


def _eval_flags(model: Path, out: Path, data: dict[str, Path], tasks: list[str]) -> list[str]:
    flags = [f"--task-data={task}={data[task]}" for task in tasks]
    return [
        "--quiet",
        "eval",
        f"--model={model}",
        f"--tasks={','.join(tasks)}",
        f"--output={out}",
        "--max-new-tokens=6",
        "--batch-size=3",
        "--device=cpu",
        "--dtype=float32",
        *flags,
    ]


def _logged(out: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in samples_path(out, task).read_text().splitlines()]


def _responses(out: Path, task: str) -> dict[int, str]:
    lines = [json.loads(line) for line in samples_path(out, task).read_text().splitlines()]
    return {line["doc_id"]: line["response"].strip() for line in lines}


def test_eval_through_a_server_matches_eval_in_process_and_records_the_engine(
    server, tiny_model_dir, eval_data, tmp_path, capsys
) -> None:
    tasks = ["chartqa", "vl_rewardbench"]
    here, there = tmp_path / "hf", tmp_path / "served"
    assert main(_eval_flags(tiny_model_dir, here, eval_data, tasks)) == 0
    served_flags = ["--engine=openai", f"--base-url={server.url}", "--both-orders"]
    assert main([*_eval_flags(tiny_model_dir, there, eval_data, tasks), *served_flags[:2]]) == 0

    for task in tasks:
        assert _responses(here, task) == _responses(there, task)
    results = json.loads((there / "results.json").read_text())
    engine = results["engine"]
    assert engine["engine"] == "openai" and engine["servers"][0]["url"] == server.url
    assert engine["reported_model"].startswith(str(tiny_model_dir))
    assert engine["requests"] == sum(task["n_samples"] for task in results["tasks"].values())
    assert engine["failures"] == 0 and engine["requests_per_s"] > 0 and engine["samples_per_s"] > 0
    assert engine["samples_this_run"] == sum(t["n_samples"] for t in results["tasks"].values())
    assert results["tasks"]["chartqa"]["settings"]["engine"] == "openai"
    capsys.readouterr()


class KillsAfterFirstCall(Engine):
    """The served engine, with its server killed once the first batch is answered."""

    name = "openai"

    def __init__(self, engine: ServedEngine, server: LocalServer):
        self.engine, self.server, self.calls = engine, server, 0

    def try_generate(self, requests: Sequence[Request], sampling: Sampling) -> list[Any]:
        self.calls += 1
        if self.calls == 2:
            self.server.kill()
        return self.engine.try_generate(requests, sampling)

    def describe(self) -> dict[str, Any]:
        return self.engine.describe()


def test_a_server_killed_mid_run_leaves_counted_failures_that_resume_completes(
    tiny_model_dir, eval_data, tmp_path
) -> None:
    doomed = start_server(tiny_model_dir, tmp_path / "doomed.log")
    options = EvalOptions(
        model=str(tiny_model_dir),
        tasks=("chartqa",),
        output=tmp_path / "run",
        task_data={"chartqa": str(eval_data["chartqa"])},
        batch_size=2,
        max_new_tokens=4,
        show_progress=False,
    )
    engine = KillsAfterFirstCall(_served(tiny_model_dir, doomed.url, retries=1), doomed)
    results = run_eval(options, ModelBackend(engine, options.generation))

    task = results["tasks"]["chartqa"]
    rows = task["n_samples"] + task["n_failed"]
    assert task["n_samples"] == 2 and task["n_failed"] == rows - 2 > 0
    assert results["engine"]["failures"] == task["n_failed"]
    logged = [
        json.loads(line)
        for line in samples_path(options.output, "chartqa").read_text().splitlines()
    ]
    assert sorted(line["doc_id"] for line in logged) == list(range(rows))
    assert all("score" not in line for line in logged if "failed" in line)

    revived = start_server(tiny_model_dir, tmp_path / "revived.log")
    try:
        flags = _eval_flags(tiny_model_dir, options.output, eval_data, ["chartqa"])
        flags = [
            f for f in flags if not f.startswith(("--batch-size", "--max-new-tokens", "--dtype"))
        ]
        code = main(
            [
                *flags,
                "--batch-size=2",
                "--max-new-tokens=4",
                "--engine=openai",
                f"--base-url={revived.url}",
                "--resume",
            ]
        )
    finally:
        revived.kill()

    assert code == 0
    finished = json.loads((options.output / "results.json").read_text())["tasks"]["chartqa"]
    assert (finished["n_samples"], finished["n_failed"]) == (rows, 0)
    final = [
        json.loads(line)
        for line in samples_path(options.output, "chartqa").read_text().splitlines()
    ]
    assert sorted(line["doc_id"] for line in final) == list(range(rows))
    assert all("failed" not in line for line in final)


def test_eval_with_failures_exits_3_naming_resume(
    tiny_model_dir, eval_data, tmp_path, server, caplog
) -> None:
    proxy = FaultyProxy(server.url)
    try:
        proxy.spoil("error500", 1000)
        flags = _eval_flags(tiny_model_dir, tmp_path / "run", eval_data, ["chartqa"])
        code = main(
            [*flags, "--engine=openai", f"--base-url={proxy.url}", "--retries=0", "--limit=2"]
        )
    finally:
        proxy.close()

    assert code == 3
    assert "2 samples got no response" in caplog.text and "--resume" in caplog.text


def test_critique_and_best_of_n_run_through_a_server(
    server, tiny_model_dir, tmp_path, capsys
) -> None:
    picture = tmp_path / "red.png"
    Image.new("RGB", (64, 48), (200, 30, 30)).save(picture)
    common = [f"--model={tiny_model_dir}", f"--image={picture}", "--question=What colour?"]
    served = ["--engine=openai", f"--base-url={server.url}", "--max-new-tokens=8"]

    assert (
        main(
            ["critique", *common, *served, "--response-a=red", "--response-b=blue", "--both-orders"]
        )
        == 0
    )
    judged = json.loads(capsys.readouterr().out)
    assert judged["mode"] == "pairwise" and judged["raw"]
    assert main(["best-of-n", *common, *served, "--n=3", "--strategy=knockout"]) == 0
    picked = json.loads(capsys.readouterr().out)
    assert picked["n"] == 3 and 0 <= picked["chosen"] < 3


def test_the_critic_judges_the_same_through_a_server(server, hf, tiny_model_dir, pictures) -> None:
    pair = (pictures[0], "What colour?", "It is red.", "It is blue.")
    here = Critic.on(hf, max_new_tokens=16).compare(*pair, both_orders=True)
    there = Critic.on(_served(tiny_model_dir, server.url), max_new_tokens=16).compare(
        *pair, both_orders=True
    )

    assert (here.verdict, here.swapped_verdict) == (there.verdict, there.swapped_verdict)
    assert here.raw.strip() == there.raw


def test_a_served_critic_rewards_like_the_one_in_process_and_lost_judgements_give_none(
    server, hf, tiny_model_dir, tmp_path
) -> None:
    picture = tmp_path / "red.png"
    Image.new("RGB", (56, 56), "red").save(picture)
    texts = [f"<think>{word}</think>\\boxed{{{word}}}" for word in ("red", "blue", "green") * 2]
    batch = _batch(texts, 3, str(picture))
    options = JudgeOptions("pairwise", "round_robin", max_new_tokens=8)
    here = CriticJudgeReward(options, BUDGET, Critic.on(hf, max_new_tokens=8))
    proxy = FaultyProxy(server.url)
    try:
        served = _served(tiny_model_dir, proxy.url, retries=0, concurrency=1)
        there = CriticJudgeReward(
            options, BUDGET, Critic.on(served, max_new_tokens=8, keep_failures=True)
        )
        assert there(**batch) == here(**batch)
        metrics: dict[str, float] = {}
        proxy.spoil("error500", 3)  # the first order of each of the first group's 3 pairs
        rewards = there(**batch, log_metric=metrics.__setitem__)
    finally:
        proxy.close()

    assert rewards[:3] == [None, None, None]
    assert all(isinstance(value, float) for value in rewards[3:])
    assert rewards[3:] == here(**batch)[3:]
    assert metrics["critic/failed"] == 3 and metrics["critic/latency_s"] > 0


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("questions")
    synthesize("color", 8, folder, seed=3, overwrite=True, colors=2, kind="verifiable")
    return folder


def test_policy_grpo_is_rewarded_by_a_critic_on_a_server(
    server, tiny_model_dir, questions, tmp_path
) -> None:
    out = tmp_path / "served_critic"
    _policy_run(
        tiny_model_dir,
        questions,
        out,
        f"rewards.critic_model={tiny_model_dir}",
        "rewards.critic_engine=openai",
        f'rewards.critic_base_urls=["{server.url}"]',
    )

    steps = _critic_metrics(out)
    assert len(steps) == 2
    assert all(entry["critic/calls"] == 2 * 3 * 2 for entry in steps)
    assert all(entry["critic/failed"] == 0 and entry["critic/latency_s"] > 0 for entry in steps)
    assert all("rewards/critic/mean" in entry for entry in steps)


def test_gpt_judged_tasks_are_judged_through_a_served_judge_and_the_verdicts_recorded(
    server, tiny_model_dir, eval_data, tmp_path, capsys
) -> None:
    out = tmp_path / "judged"
    judge = [
        "--judge-engine=openai",
        f"--judge-url={server.url}",
        f"--judge-model={tiny_model_dir}",
    ]
    code = main([*_eval_flags(tiny_model_dir, out, eval_data, ["hallusionbench", "ai2d"]), *judge])

    assert code == 0
    lines = [
        json.loads(line) for line in samples_path(out, "hallusionbench").read_text().splitlines()
    ]
    assert lines and all(
        {"rule_score", "judge_verdict", "judge_raw"} <= set(line) for line in lines
    )
    assert all(line["judge_raw"] for line in lines)
    untouched = samples_path(out, "ai2d").read_text()
    assert "judge_verdict" not in untouched
    results = json.loads((out / "results.json").read_text())
    assert results["tasks"]["hallusionbench"]["scoring"].startswith("LLM judge")
    capsys.readouterr()


def test_the_demo_judges_and_answers_through_a_server(server, hf, tiny_model_dir) -> None:
    picture = Image.new("RGB", (64, 48), (200, 30, 30))
    demo = DemoModel.served(_served(tiny_model_dir, server.url), max_new_tokens=12)
    *_, judged = demo.compare(picture, "What colour?", "red", "blue", True)
    answers = demo.answers(picture, "What colour?", 2, 1.0, 0)

    here = Critic.on(hf, max_new_tokens=12).compare(
        Media.image(picture), "What colour?", "red", "blue", both_orders=True
    )
    assert isinstance(judged, Comparison) and judged.raw == here.raw.strip()
    assert len(answers) == 2 and all(answer.text for answer in answers)


def test_a_served_policy_revises_for_the_refinement_reward_and_a_lost_revision_is_left_out(
    server, hf, tiny_model_dir, tmp_path
) -> None:
    from mmcritic.inference import Policy
    from mmcritic.train.refinement_reward import RefinementOptions, RefinementReward

    picture = tmp_path / "red.png"
    Image.new("RGB", (56, 56), (200, 30, 30)).save(picture)
    options = RefinementOptions(max_new_tokens=8)
    here = RefinementReward(options, BUDGET, Policy.on(hf, max_new_tokens=8))
    rows = 3
    batch = {
        "completions": ["<think>Not red.</think> \\boxed{incorrect}"] * rows,
        "kind": ["critique"] * rows,
        "answer": ["correct", "incorrect", "incorrect"],
        "question": ["What colour is the shape?"] * rows,
        "image_paths": [[str(picture)]] * rows,
        "video_paths": [[]] * rows,
        "video_options": ["{}"] * rows,
        "reference": ["red"] * rows,
        "answer_text": ["\\boxed{red}", "\\boxed{blue}", "\\boxed{green}"],
    }
    proxy = FaultyProxy(server.url)
    try:
        served = _served(tiny_model_dir, proxy.url, retries=0, concurrency=1)
        there = RefinementReward(options, BUDGET, Policy.on(served, max_new_tokens=8))
        assert there(**batch) == here(**batch)
        logged: dict[str, float] = {}
        proxy.spoil("error500", 1)
        rewards = there(**batch, log_metric=logged.__setitem__)
    finally:
        proxy.close()

    assert rewards[0] is None and rewards[1:] == here(**batch)[1:]
    assert logged["refinement/lost"] == 1 and there.lost == 1
    assert not there.revises_with_policy
