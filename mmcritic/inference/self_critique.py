"""Test-time self-critique: pick one of N sampled answers by letting the critic judge them.

LLaVA-Critic-R1 reports Best-of-128 with recursive pairwise comparison without releasing the
pairing scheme, so four strategies are offered (costs for N candidates, in critic calls):

- `knockout`: single elimination; each round is one batched critic call. N-1 comparisons
  (2(N-1) with both orders) in ceil(log2 N) rounds. The seed shuffles the bracket; with an odd
  number of entrants the last one gets a bye and opens the next round, so nobody gets two.
- `round_robin`: every pair once (both orders: twice), one batched call; N(N-1)/2 comparisons.
  LLaVA-Critic's score r_i = sum_k a_ki - sum_l a_il: each readable judgement gives the winner +1
  and the loser -1. The seed picks which answer of a pair is shown first.
- `pointwise`: one score per answer, N calls, the highest score wins.
- `majority`: the baseline; a vote on the normalised final (boxed) answers, no critic calls.

Deterministic resolution, so a result can be reproduced and inspected:

- a knockout match the critic does not decide (tie, unreadable answer, or - with both orders -
  two orders that disagree) goes to the candidate with the lower index. Candidates are
  exchangeable samples, so the index is as fair as a coin and the rule is visible in the bracket;
- equal round-robin or pointwise scores go to the lower index; unreadable scores rank last and
  unreadable pairwise judgements give no points;
- a majority tie goes to the answer given first; candidates without a boxed answer do not vote,
  and with no votes at all candidate 0 is chosen.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from mmcritic.inference.critic import Comparison, PairItem, PointItem, Score
from mmcritic.inference.media import MediaInput
from mmcritic.rewards.answers import as_judged, final_boxed, normalize_answer

Strategy = Literal["knockout", "round_robin", "pointwise", "majority"]
# How a match was decided: "verdict" (one order, or both orders agreeing), "one_order" (both
# orders asked, only one readable), "orders_disagree" (a tie by position), "tie", "unreadable".
ResolvedBy = Literal["verdict", "one_order", "orders_disagree", "tie", "unreadable", "bye"]


class Judge(Protocol):
    """What self-critique needs from a critic; `Critic` is one, and so is a scripted judge."""

    def compare_many(
        self, items: Sequence[PairItem], both_orders: bool = False
    ) -> list[Comparison]: ...

    def score_many(self, items: Sequence[PointItem]) -> list[Score]: ...


@dataclass(frozen=True)
class Match:
    """One pairing: candidates `a` (shown first) and `b`, and who won it and why."""

    a: int
    b: int
    winner: int | None
    resolved_by: ResolvedBy
    comparison: Comparison

    def to_dict(self, raw: bool = False) -> dict[str, Any]:
        judged = self.comparison
        result: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "verdict": judged.verdict,
            "decision": judged.decision,
            "winner": self.winner,
            "resolved_by": self.resolved_by,
            "reason": judged.reason,
        }
        if judged.both_orders:
            result |= {"swapped_verdict": judged.swapped_verdict, "agreement": judged.agreement}
        if raw:
            result |= {"raw": judged.raw, "swapped_raw": judged.swapped_raw}
        return result


@dataclass(frozen=True)
class Round:
    """One batched critic call: its matches and the candidate that sat it out, if any."""

    matches: list[Match]
    bye: int | None = None

    def to_dict(self, raw: bool = False) -> dict[str, Any]:
        return {"matches": [m.to_dict(raw) for m in self.matches], "bye": self.bye}


@dataclass
class BestOfN:
    """The chosen candidate, its final answer, and everything that led to the choice: the
    bracket (`rounds`) and the score or vote `table`."""

    strategy: Strategy
    chosen: int
    answer: str | None
    candidates: list[str]
    comparisons: int
    rounds: list[Round] = field(default_factory=list)
    table: list[dict[str, Any]] = field(default_factory=list)
    both_orders: bool = False
    seed: int = 0

    def to_dict(self, raw: bool = False) -> dict[str, Any]:
        """JSON-able; `raw=True` adds every critic output text to the bracket."""
        return {
            "strategy": self.strategy,
            "chosen": self.chosen,
            "answer": self.answer,
            "candidates": self.candidates,
            "final_answers": [final_boxed(text) for text in self.candidates],
            "comparisons": self.comparisons,
            "rounds": [r.to_dict(raw) for r in self.rounds],
            "table": self.table,
            "both_orders": self.both_orders,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class _Contest:
    judge: Judge
    media: MediaInput
    question: str
    candidates: list[str]
    both_orders: bool
    rng: random.Random

    def shown(self) -> list[str]:
        """The candidates as the critic is shown them: in plain words (`as_judged`), as the
        responses of its training data are, and unable to write its verdict for it."""
        return [as_judged(text) for text in self.candidates]

    def judge_pairs(self, pairs: list[tuple[int, int]]) -> list[Comparison]:
        shown = self.shown()
        items = [(self.media, self.question, shown[a], shown[b]) for a, b in pairs]
        return _checked(self.judge.compare_many(items, both_orders=self.both_orders), items)

    def score_all(self) -> list[Score]:
        items = [(self.media, self.question, text) for text in self.shown()]
        return _checked(self.judge.score_many(items), items)

    @property
    def per_pair(self) -> int:
        return 2 if self.both_orders else 1


def _checked(judgements: list[Any], items: list[Any]) -> list[Any]:
    """A judge that drops or adds items would silently shift every later pairing."""
    if len(judgements) != len(items):
        raise ValueError(f"the judge returned {len(judgements)} judgements for {len(items)} items")
    return judgements


_Outcome = tuple[int, int, list[Round], list[dict[str, Any]]]  # chosen, comparisons, rounds, table


def best_of_n(
    critic: Judge,
    media: MediaInput,
    question: str,
    candidates: Sequence[str],
    strategy: Strategy = "knockout",
    *,
    both_orders: bool = False,
    seed: int = 0,
) -> BestOfN:
    """Selects one of `candidates` (full answer texts) by self-critique; see the module
    docstring for the strategies and the rules that resolve ties and unreadable judgements."""
    if not candidates:
        raise ValueError("best_of_n needs at least one candidate answer")
    run = _strategy(strategy)
    contest = _Contest(critic, media, question, list(candidates), both_orders, random.Random(seed))
    chosen, comparisons, rounds, table = run(contest)
    return BestOfN(
        strategy=strategy,
        chosen=chosen,
        answer=final_boxed(contest.candidates[chosen]),
        candidates=contest.candidates,
        comparisons=comparisons,
        rounds=rounds,
        table=table,
        both_orders=both_orders,
        seed=seed,
    )


def _knockout(contest: _Contest) -> _Outcome:
    entrants = list(range(len(contest.candidates)))
    contest.rng.shuffle(entrants)
    rounds: list[Round] = []
    while len(entrants) > 1:
        bye = entrants.pop() if len(entrants) % 2 else None
        pairs = list(zip(entrants[::2], entrants[1::2], strict=True))
        judged = zip(pairs, contest.judge_pairs(pairs), strict=True)
        matches = [_knockout_match(a, b, comparison) for (a, b), comparison in judged]
        rounds.append(Round(matches, bye))
        winners = [m.winner for m in matches if m.winner is not None]
        entrants = ([bye] if bye is not None else []) + winners
    comparisons = sum(len(r.matches) for r in rounds) * contest.per_pair
    return entrants[0], comparisons, rounds, []


def _knockout_match(a: int, b: int, comparison: Comparison) -> Match:
    decision = comparison.decision
    winner = {"1": a, "2": b}.get(decision or "", min(a, b))
    return Match(a, b, winner, resolution(comparison), comparison)


def resolution(comparison: Comparison) -> ResolvedBy:
    """How the comparison's decision came about, so a match record never says "verdict" where
    the verdict field is empty (the other order decided it)."""
    readable = [v for v in (comparison.verdict, comparison.swapped_verdict) if v is not None]
    if comparison.both_orders and len(readable) == 1 and readable[0] in ("1", "2"):
        return "one_order"
    if comparison.both_orders and len(readable) == 2 and not comparison.agreement:
        return "orders_disagree" if "tie" not in readable else "tie"
    decision = comparison.decision
    return "verdict" if decision in ("1", "2") else "tie" if decision == "tie" else "unreadable"


def _round_robin(contest: _Contest) -> _Outcome:
    n = len(contest.candidates)
    pairs = [
        (i, j) if contest.rng.random() < 0.5 else (j, i) for i in range(n) for j in range(i + 1, n)
    ]
    comparisons = contest.judge_pairs(pairs)
    table = [
        {"index": i, "score": 0, "wins": 0, "losses": 0, "ties": 0, "unreadable": 0}
        for i in range(n)
    ]
    matches = []
    for (a, b), comparison in zip(pairs, comparisons, strict=True):
        for verdict in _judgements(comparison):
            _tally(table, a, b, verdict)
        winner = {"1": a, "2": b}.get(comparison.decision or "")
        matches.append(Match(a, b, winner, resolution(comparison), comparison))
    chosen = max(range(n), key=lambda i: (table[i]["score"], -i))
    return chosen, len(pairs) * contest.per_pair, [Round(matches)] if matches else [], table


def _judgements(comparison: Comparison) -> list[str | None]:
    """Each order counts on its own, as in LLaVA-Critic's sum over ordered pairs."""
    if comparison.both_orders:
        return [comparison.verdict, comparison.swapped_verdict]
    return [comparison.verdict]


def _tally(table: list[dict[str, Any]], a: int, b: int, verdict: str | None) -> None:
    if verdict is None:
        table[a]["unreadable"] += 1
        table[b]["unreadable"] += 1
    elif verdict == "tie":
        table[a]["ties"] += 1
        table[b]["ties"] += 1
    else:
        winner, loser = (a, b) if verdict == "1" else (b, a)
        table[winner]["wins"] += 1
        table[loser]["losses"] += 1
        table[winner]["score"] += 1
        table[loser]["score"] -= 1


def _pointwise(contest: _Contest) -> _Outcome:
    scores = contest.score_all()
    table = [{"index": i, "score": s.score, "reason": s.reason} for i, s in enumerate(scores)]

    def rank(i: int) -> tuple[bool, float, int]:
        value = scores[i].score
        return value is not None, value if value is not None else 0.0, -i

    return max(range(len(scores)), key=rank), len(scores), [], table


def _majority(contest: _Contest) -> _Outcome:
    votes: dict[str, list[int]] = {}
    for index, text in enumerate(contest.candidates):
        boxed = final_boxed(text)
        if boxed is not None:
            votes.setdefault(normalize_answer(boxed), []).append(index)
    # dicts keep insertion order, so among equal counts the answer given first comes first
    table = [
        {"answer": answer, "votes": len(indices), "indices": indices}
        for answer, indices in sorted(votes.items(), key=lambda item: -len(item[1]))
    ]
    chosen = table[0]["indices"][0] if table else 0
    return chosen, 0, [], table


STRATEGIES: dict[str, Callable[[_Contest], _Outcome]] = {
    "knockout": _knockout,
    "round_robin": _round_robin,
    "pointwise": _pointwise,
    "majority": _majority,
}


def _strategy(name: str) -> Callable[[_Contest], _Outcome]:
    if name not in STRATEGIES:
        raise ValueError(
            f"unknown self-critique strategy {name!r}; choose one of {sorted(STRATEGIES)}"
        )
    return STRATEGIES[name]
