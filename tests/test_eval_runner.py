"""The eval runner on saved responses: exact metrics, output files, resume and its guards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmcritic.eval.judges import FunctionJudge
from mmcritic.eval.registry import task_names
from mmcritic.eval.runner import EvalOptions, run_eval, samples_path
from tests.test_eval_fixtures import FIXTURES, all_task_data


@pytest.fixture(scope="session")
def eval_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return all_task_data(tmp_path_factory)


REPLAY = f"replay:{FIXTURES / 'replay.jsonl'}"

# Hand-computed from tests/fixtures/eval/<task>.json and replay.jsonl; the comment on each entry
# says which samples are right.
EXPECTED = {
    # MC B right; open 16.0 = 16 right; "(B) The second" against A wrong
    "mmmu_val": {"accuracy": 2 / 3, "accuracy/Art_Theory": 1.0, "accuracy/Math": 0.5},
    # C (6/11) against 8/11 wrong; 1,000 = 1000; 12.46 rounds to 12.5
    "mathvista_testmini": {
        "accuracy": 2 / 3,
        "accuracy/free_form": 1.0,
        "accuracy/multi_choice": 0.0,
    },
    # C right; 0.5 = 1/2; 3.46 != 2*sqrt(3); "4" is option D's text
    "mathvision_testmini": {
        "accuracy": 0.75,
        "accuracy/analytic geometry": 1.0,
        "accuracy/arithmetic": 1.0,
        "accuracy/counting": 1.0,
        "accuracy/metric geometry - length": 0.0,
    },
    # "The answer is B." right; same expression right; 6 against 5 wrong
    "mathverse_testmini": {
        "accuracy": 2 / 3,
        "accuracy/Text Dominant": 1.0,
        "accuracy/Text Lite": 0.0,
        "accuracy/Vision Only": 1.0,
    },
    # coarse perception 2 of 3, math 1 of 1; average = (2/3 + 1) / 2
    "mmstar": {
        "accuracy": 0.75,
        "average": 5 / 6,
        "accuracy/coarse perception": 2 / 3,
        "accuracy/math": 1.0,
    },
    # B right; \text{B} against A wrong
    "ai2d": {"accuracy": 0.5},
    # 12.0% ~ 12 and 1,040 ~ 1000 (4%) right; no != Yes, 0.56 is 12% off
    "chartqa": {
        "relaxed_accuracy": 0.5,
        "relaxed_accuracy/augmented_test": 0.0,
        "relaxed_accuracy/human_test": 1.0,
    },
    # 1.0 (matches "coca cola"), 1 - 1/4 for 1988 vs 1998, 0 for "unknown"
    "docvqa_val": {"anls": (1.0 + 0.75 + 0.0) / 3},
    # stop ~ STOP, x^{2} ~ x ^ { 2 } without spaces; March 4 != March 3
    "ocrbench": {
        "accuracy": 2 / 3,
        "score": 2.0,
        "score/Doc-oriented VQA": 0.0,
        "score/Handwritten Mathematical Expression Recognition": 1.0,
        "score/Regular Text Recognition": 1.0,
    },
    # unsure on a figure-less VS question counts; No right; Yes right; no against yes wrong.
    # qAcc: VS question right on both figures, VD question not; fAcc: 2 of 3 figures
    "hallusionbench": {"aAcc": 0.75, "qAcc": 0.5, "fAcc": 2 / 3},
    # A right; "Two" = 2; "B." against C wrong
    "realworldqa": {"accuracy": 2 / 3},
    # (C) right; A against B wrong; "The answer is (A)." right
    "blink": {
        "accuracy": 2 / 3,
        "accuracy/Counting": 1.0,
        "accuracy/Jigsaw": 1.0,
        "accuracy/Visual_Similarity": 0.0,
    },
    # B right; "depth-first search (dfs)" contains the target; 41 against 42 wrong
    "mmvu": {"accuracy": 2 / 3, "accuracy/multiple-choice": 1.0, "accuracy/open-ended": 0.5},
    # C right; D against A wrong
    "videomme": {"accuracy": 0.5, "accuracy/medium": 0.0, "accuracy/short": 1.0},
    # truths in length-parity order: 1, 1, 1, 2; verdicts 1, 2, 1, tie
    "vl_rewardbench": {
        "accuracy": 0.5,
        "macro_accuracy": (0.5 + 1.0 + 0.0) / 3,
        "accuracy/general": 0.5,
        "accuracy/hallucination": 1.0,
        "accuracy/reasoning": 0.0,
    },
    # truths 1, 2, 2, 2; verdicts 1, 2, 1, 2: q1 both right, q2 one of two
    "mm_rlhf_rewardbench": {
        "accuracy": 0.75,
        "accuracy/long": 0.5,
        "accuracy/mcq": 1.0,
        "acc_plus": 0.5,
        "acc_plus/long": 0.0,
        "acc_plus/mcq": 1.0,
    },
    # Output2 and verdict 2 right; B (= 2) against Output1 wrong; [[A]] (= 1) right
    "multimodal_rewardbench": {
        "accuracy": 2 / 3,
        "accuracy/reasoning/math": 1.0,
        "accuracy/safety/bias": 0.0,
        "accuracy/vqa": 1.0,
    },
}


def _options(tmp_path: Path, data: dict[str, Path], tasks, **kwargs) -> EvalOptions:
    return EvalOptions(
        model=kwargs.pop("model", REPLAY),
        tasks=tuple(tasks),
        output=tmp_path / "out",
        task_data={task: str(data[task]) for task in tasks},
        show_progress=False,
        **kwargs,
    )


def test_expected_values_cover_every_task() -> None:
    assert set(EXPECTED) == set(task_names())


def test_replay_reproduces_hand_computed_metrics_for_every_task(tmp_path, eval_data) -> None:
    results = run_eval(_options(tmp_path, eval_data, task_names(), batch_size=2))

    for task, expected in EXPECTED.items():
        assert results["tasks"][task]["metrics"] == pytest.approx(expected), task
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["tasks"]["mmstar"]["metrics"] == pytest.approx(EXPECTED["mmstar"])
    assert written["tasks"]["hallusionbench"]["n_samples"] == 4


def test_replay_scores_both_orders_of_a_critic_benchmark(tmp_path, eval_data) -> None:
    results = run_eval(_options(tmp_path, eval_data, ["vl_rewardbench"], both_orders=True))

    # swapped verdicts mapped back: 1, 1, 2, 2 against truths 1, 1, 1, 2
    assert results["tasks"]["vl_rewardbench"]["metrics"] == pytest.approx(
        EXPECTED["vl_rewardbench"]
        | {
            "accuracy_swapped": 0.75,
            "accuracy_order_mean": (0.5 + 0.75) / 2,
            "consistent_accuracy": 0.25,
            "position_consistency": 0.25,
        }
    )


def test_sample_lines_hold_prompt_response_parsed_answer_target_and_score(
    tmp_path, eval_data
) -> None:
    run_eval(_options(tmp_path, eval_data, ["chartqa", "vl_rewardbench"]))

    chart = _lines(samples_path(tmp_path / "out", "chartqa"))
    critic = _lines(samples_path(tmp_path / "out", "vl_rewardbench"))

    assert chart[0]["prompt"].startswith("<image>What percentage of people like tea?")
    assert chart[0]["prompt"].endswith("The final answer MUST BE put in \\boxed{}.")
    assert (chart[0]["response"], chart[0]["parsed"], chart[0]["target"]) == (
        "\\boxed{12.0%}",
        "12.0%",
        "12",
    )
    assert chart[0]["score"] == 1.0
    assert [line["doc_id"] for line in chart] == [0, 1, 2, 3]
    assert (critic[3]["parsed"], critic[3]["target"], critic[3]["score"]) == ("tie", "2", 0.0)


def test_results_record_settings_sample_count_and_scoring_method(tmp_path, eval_data) -> None:
    results = run_eval(_options(tmp_path, eval_data, ["hallusionbench"], limit=3))

    task = results["tasks"]["hallusionbench"]
    assert task["n_samples"] == 3
    assert task["settings"]["limit"] == 3
    assert task["settings"]["dataset"] == str(eval_data["hallusionbench"])
    assert task["settings"]["split"] == "image"
    assert "in place of HallusionBench's GPT-4 judge" in task["scoring"]


def test_a_judge_hook_replaces_rule_scores_where_the_benchmark_uses_an_llm_judge(
    tmp_path, eval_data
) -> None:
    calls = []

    def judge(prompt: str, target, response: str) -> float:
        calls.append(response)
        return 1.0

    results = run_eval(
        _options(tmp_path, eval_data, ["hallusionbench", "ai2d"]), judge=FunctionJudge(judge)
    )

    assert results["tasks"]["hallusionbench"]["metrics"]["aAcc"] == 1.0
    assert results["tasks"]["hallusionbench"]["scoring"].startswith("LLM judge")
    assert results["tasks"]["ai2d"]["metrics"]["accuracy"] == 0.5  # rule-based benchmark
    assert len(calls) == 4


def test_resume_skips_finished_samples_and_redoes_a_torn_last_line(tmp_path, eval_data) -> None:
    run_eval(_options(tmp_path, eval_data, ["mmstar"], limit=2))
    log = samples_path(tmp_path / "out", "mmstar")
    first_two = log.read_text().splitlines()
    with log.open("a") as handle:
        handle.write('{"doc_id": 2, "prompt": "torn')

    results = run_eval(_options(tmp_path, eval_data, ["mmstar"], resume=True))

    lines = log.read_text().splitlines()
    assert lines[:2] == first_two
    assert [json.loads(line)["doc_id"] for line in lines] == [0, 1, 2, 3]
    assert results["tasks"]["mmstar"]["metrics"] == pytest.approx(EXPECTED["mmstar"])


@pytest.mark.parametrize(
    "torn",
    [b'{"doc_id": 2, "response": "caf\xc3', b'{"doc_id": 2}', b"\xff\xfe\x00garbage\n"],
    ids=["inside_a_utf8_character", "complete_json_without_newline", "binary_junk"],
)
def test_resume_drops_a_torn_last_line_whatever_bytes_it_holds(tmp_path, eval_data, torn) -> None:
    run_eval(_options(tmp_path, eval_data, ["mmstar"], limit=2))
    log = samples_path(tmp_path / "out", "mmstar")
    with log.open("ab") as handle:
        handle.write(torn)

    results = run_eval(_options(tmp_path, eval_data, ["mmstar"], resume=True))

    assert [json.loads(line)["doc_id"] for line in log.read_text().splitlines()] == [0, 1, 2, 3]
    assert results["tasks"]["mmstar"]["metrics"] == pytest.approx(EXPECTED["mmstar"])


def test_the_empty_leftover_of_a_failed_run_does_not_block_the_next(tmp_path, eval_data) -> None:
    output = tmp_path / "out"
    output.mkdir()
    samples_path(output, "ai2d").write_text("")

    results = run_eval(_options(tmp_path, eval_data, ["ai2d"]))

    assert results["tasks"]["ai2d"]["n_samples"] > 0


def test_an_existing_run_is_not_overwritten_without_resume(tmp_path, eval_data) -> None:
    run_eval(_options(tmp_path, eval_data, ["ai2d"]))

    with pytest.raises(FileExistsError, match="--resume"):
        run_eval(_options(tmp_path, eval_data, ["ai2d"]))


def test_resume_refuses_changed_settings(tmp_path, eval_data) -> None:
    run_eval(_options(tmp_path, eval_data, ["ai2d"], limit=1))

    with pytest.raises(ValueError, match="think_suffix"):
        run_eval(_options(tmp_path, eval_data, ["ai2d"], resume=True, think_suffix=False))


def test_replay_without_a_response_for_a_row_names_the_row(tmp_path, eval_data) -> None:
    replay = tmp_path / "partial.jsonl"
    replay.write_text(json.dumps({"task": "ai2d", "doc_id": 0, "response": "B"}) + "\n")

    with pytest.raises(ValueError, match="no response for task ai2d doc_id 1"):
        run_eval(_options(tmp_path, eval_data, ["ai2d"], model=f"replay:{replay}"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tasks": ("mmmu",)}, "Did you mean 'mmvu'"),
        ({"limit": 0}, "limit must be at least 1"),
        ({"bon_n": 4, "temperature": 0.0}, "temperature > 0"),
        ({"bon_strategy": "best"}, "unknown bon strategy"),
        ({"task_data": {"ai2d": "x.json"}}, "names tasks not being run"),
    ],
)
def test_bad_options_say_what_to_change(tmp_path, kwargs, message) -> None:
    settings = {"model": REPLAY, "tasks": ("chartqa",), "output": tmp_path} | kwargs
    with pytest.raises(ValueError, match=message):
        EvalOptions(**settings)


def test_a_task_without_a_hub_copy_says_how_to_get_one(tmp_path) -> None:
    options = EvalOptions(
        model=REPLAY, tasks=("multimodal_rewardbench",), output=tmp_path, show_progress=False
    )

    with pytest.raises(ValueError, match=r"scripts/0_download_data\.py"):
        run_eval(options)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_eval_list_names_every_task_with_its_dataset_and_scoring(capsys) -> None:
    from mmcritic.cli import main

    assert main(["eval", "--list"]) == 0

    listing = json.loads(capsys.readouterr().out)
    assert set(listing) == set(task_names())
    assert listing["vl_rewardbench"]["dataset"] == ["MMInstruction/VL-RewardBench"]
    assert listing["ai2d"]["dataset"] == ["lmms-lab/ai2d", "lmms-lab-encoder/ai2d"]
    assert listing["blink"]["split"] == "val"


def test_cli_replay_run_prints_results_and_suites_summarise_them(tmp_path, eval_data, capsys):
    from mmcritic.cli import main
    from mmcritic.eval.suites import headline

    code = main(
        [
            "--quiet",
            "eval",
            f"--model={REPLAY}",
            "--tasks=mmstar,docvqa_val",
            f"--output={tmp_path / 'out'}",
            f"--task-data=mmstar={eval_data['mmstar']}",
            f"--task-data=docvqa_val={eval_data['docvqa_val']}",
        ]
    )

    assert code == 0
    assert headline(json.loads(capsys.readouterr().out)) == pytest.approx(
        {"mmstar": 5 / 6, "docvqa_val": (1.0 + 0.75) / 3}
    )


def test_cli_reports_a_bad_flag_value_as_an_error_exit(tmp_path) -> None:
    from mmcritic.cli import main

    assert main(["eval", f"--model={REPLAY}", "--tasks=nope", f"--output={tmp_path}"]) == 2


def _critic_replay(tmp_path: Path, responses: list[str]) -> str:
    """A replay model answering VL-RewardBench's rows with `responses`, in order."""
    replay = tmp_path / "judged.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"task": "vl_rewardbench", "doc_id": i, "response": text}) + "\n"
            for i, text in enumerate(responses)
        )
    )
    return f"replay:{replay}"


def test_critic_verdicts_stated_in_words_are_read_and_counted(tmp_path, eval_data) -> None:
    responses = [
        "The first answer names the right colour.\nOverall Judgment: Answer 1 is better",
        "<think>Answer 1 looks fine at first.</think> Answer 2 is better.",
        "**Final verdict:** [[A]]",
        "I cannot decide.",
    ]
    replay = _critic_replay(tmp_path, responses)

    results = run_eval(_options(tmp_path, eval_data, ["vl_rewardbench"], model=replay))

    lines = _lines(samples_path(tmp_path / "out", "vl_rewardbench"))
    assert [line["parsed"] for line in lines] == ["1", "2", "1", None]
    assert [line["verdict_source"] for line in lines] == ["phrase", "phrase", "phrase", None]
    assert results["tasks"]["vl_rewardbench"]["verdict_sources"] == {
        "official": 0,
        "box": 0,
        "phrase": 3,
        "unreadable": 1,
    }


def test_the_lmms_eval_protocol_reads_official_verdicts_first_and_counts_each_source(
    tmp_path, eval_data
) -> None:
    responses = [
        "Accuracy: ...\n**Overall Judgment:** Answer 1 is better.",
        "<think>Answer 1 looks fine at first.</think> Answer 2 is better.",
        "Both answers have merits.",
        "Therefore, Answer 2 is better than Answer 1.",
    ]
    replay = _critic_replay(tmp_path, responses)
    options = _options(tmp_path, eval_data, ["vl_rewardbench"], model=replay, protocol="lmms-eval")

    task = run_eval(options)["tasks"]["vl_rewardbench"]

    lines = _lines(samples_path(tmp_path / "out", "vl_rewardbench"))
    assert [line["parsed"] for line in lines] == ["1", "2", None, "2"]
    assert task["verdict_sources"] == {"official": 2, "box": 0, "phrase": 1, "unreadable": 1}
    assert lines[0]["prompt"].startswith("<image> You are a highly capable multimodal AI")
    assert task["protocol"]["name"] == "lmms-eval"
    assert task["protocol"]["decoding"] == {
        "max_new_tokens": 1024,
        "temperature": 1.0,
        "top_p": 1.0,
        "sampled": True,
    }


def test_results_record_every_setting_the_protocol_implies_and_what_the_run_overrode(
    tmp_path, eval_data
) -> None:
    options = _options(
        tmp_path, eval_data, ["chartqa"], limit=2, protocol="lmms-eval", max_new_tokens=64
    )

    settings = run_eval(options)["tasks"]["chartqa"]["protocol"]

    assert settings["prompt_source"] == "lmms-eval 0.7.3 lmms_eval/tasks/chartqa/utils.py"
    assert settings["decoding"]["max_new_tokens"] == 64
    assert settings["overrides"] == {"max_new_tokens": 64}
    assert settings["media"]["image"]["max_pixels"] == 1_605_632
    assert "lmms-eval" in settings["comparable_with"]
    lines = _lines(samples_path(tmp_path / "out", "chartqa"))
    assert lines[0]["prompt"].endswith("\nAnswer the question with a single word.")


def test_the_think_instruction_switch_belongs_to_the_r1_protocol_only(tmp_path, eval_data):
    with pytest.raises(ValueError, match="--no-think-suffix applies to the r1 protocol"):
        _options(tmp_path, eval_data, ["chartqa"], protocol="official", think_suffix=False)


def test_a_resumed_run_must_keep_its_protocol(tmp_path, eval_data) -> None:
    run_eval(_options(tmp_path, eval_data, ["chartqa"], limit=1, protocol="lmms-eval"))
    with pytest.raises(ValueError, match="protocol"):
        run_eval(_options(tmp_path, eval_data, ["chartqa"], limit=2, resume=True))


def test_the_eval_command_prints_a_summary_with_the_protocol(tmp_path, eval_data, capsys):
    from mmcritic.cli import main

    code = main(
        [
            "eval",
            f"--model={REPLAY}",
            "--tasks=chartqa",
            f"--task-data=chartqa={eval_data['chartqa']}",
            f"--output={tmp_path / 'out'}",
            "--protocol=lmms-eval",
        ]
    )

    assert code == 0
    summary = capsys.readouterr().err
    assert "chartqa: relaxed_accuracy" in summary
    assert "protocol lmms-eval, greedy, max_new_tokens 16" in summary


def test_eval_list_also_prints_a_table_for_a_person(capsys) -> None:
    from mmcritic.cli import main

    assert main(["eval", "--list"]) == 0

    table = capsys.readouterr().err.splitlines()
    assert table[0].split() == ["task", "kind", "dataset", "(split)"]
    assert any(line.split()[:2] == ["vl_rewardbench", "critic"] for line in table)
    assert len(table) == len(task_names()) + 1


@pytest.mark.parametrize("protocol", ["lmms-eval", "official"])
def test_every_task_runs_under_every_protocol_and_answers_score_the_same(
    tmp_path, eval_data, protocol
) -> None:
    """A protocol changes what the model is asked, not how a right answer is recognised."""
    results = run_eval(_options(tmp_path, eval_data, task_names(), protocol=protocol))

    for name, task in results["tasks"].items():
        assert task["protocol"]["name"] == protocol and task["protocol"]["prompt_source"]
        if task["kind"] == "policy":
            assert task["metrics"] == pytest.approx(EXPECTED[name]), name
        else:
            assert task["n_samples"] > 0 and "official" in task["verdict_sources"]
