"""The structured reading: each correction, turn, hedge, negation and yes/no of a response with
its position, its patterns stated in one place and asked for by every reader."""

from __future__ import annotations

import re

import pytest

from mmcritic.eval.choices import choice_letter
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.structure import CONCLUSION, MARKS, reading_of


@pytest.mark.parametrize(
    ("text", "offers"),
    [
        ("Age gap: 5–7 years", True),
        ("It could be a bar or a spit", True),
        ("It's either DENTIST or DENTAL", True),
        ("So angle 1 is 65° or 115°", True),
        ("It was highest in both 2014 and 2016", True),
        ("between 30 and 35", True),
        ("the ratio is 5:2, or 2.5", False),
        ("The value is 25 or so", False),
        ("From 2019 to 2020 it rose to 45", False),
    ],
)
def test_alternatives_are_two_answers_not_one(text, offers):
    assert reading_of(text).has("alternatives") is offers


def test_a_range_is_alternatives_but_not_two_readings_of_a_text_answer():
    assert reading_of("1985–1990").has("alternatives")
    assert not reading_of("1985–1990").has("two_readings")
    assert reading_of('It may be "C. W. Rathbun" or "G. W. Rathburn".').has("two_readings")


def test_each_mark_carries_its_position_and_what_it_says():
    text = "yes, it looks taller. wait, measuring it, no: they are the same height."
    reading = reading_of(text)
    correction = reading.last("correction")
    assert text[correction.start : correction.end].lower() == "wait"
    assert [(mark.says, text[mark.start : mark.end]) for mark in reading.marks("yes_no")] == [
        ("yes", "yes"),
        ("no", "no"),
    ]
    assert reading.said("yes_no") == {"yes", "no"}
    assert reading.after_last("correction") == ", measuring it, no: they are the same height."
    assert reading.first("yes_no", correction.end).says == "no"


def test_an_ordinal_in_any_language_says_its_place():
    assert reading_of("The fourth image, not the Second").said("ordinal") == {"o4", "o2"}
    assert reading_of("第四张图片").said("ordinal") == {"o4"}
    assert reading_of("두 번째 이미지").said("ordinal") == {"o2"}
    assert not reading_of("The firstborn came fifteenth").has("ordinal")


def test_an_ordinal_picks_an_option_only_where_the_options_differ_by_it_alone():
    images = ["The first image", "The second image", "The third image", "The fourth image"]
    assert choice_letter("第三张图片是真的。", list("ABCD"), images) == "C"
    intervals = ["Major third", "Perfect fourth", "Perfect fifth", "Octave"]
    assert choice_letter("Perfect fifth or octave", list("ABCD"), intervals) is None
    assert choice_letter("我觉得是第三个音程。", list("ABCD"), intervals) is None


def test_the_text_after_the_last_correction_is_none_without_one():
    assert reading_of("The answer is (C).").after_last("correction") is None
    settled = reading_of("The answer is (C). Wait — no, (B).").after_last("correction")
    assert settled is not None and "(C)" not in settled and "(B)" in settled


def test_a_text_is_cut_at_its_conclusions():
    parts = reading_of("48, 52 and 60 are shown, so the tallest is 60").parts("conclusion")
    assert parts == ["48, 52 and 60 are shown", "the tallest is 60"]
    assert reading_of("The tallest is 60").parts("conclusion") == ["The tallest is 60"]
    text = "A is 3, so B is 4, therefore C is 7"
    assert reading_of(text).parts("conclusion") == re.split(CONCLUSION, text)


def test_overlapping_marks_cut_a_text_once():
    # "either 5 or 6" is marked twice among the alternatives ("either ... or" and "5 or 6")
    text = "It is either 5 or 6 apples"
    marks = reading_of(text).marks("alternatives")
    assert len(marks) == 2 and marks[1].start < marks[0].end
    assert reading_of(text).parts("alternatives") == ["It is ", text[marks[0].end :]]


def test_a_mark_looked_for_from_a_position_may_overlap_one_found_from_the_start():
    # from the start, "might be, or it could be 4" is one hedge; looked for from after "might",
    # "could be 4" is one of its own
    text = "It might be, or it could be 4."
    reading = reading_of(text)
    assert [mark.start for mark in reading.marks("hedged_value")] == [3]
    after_might = text.index("might") + len("might")
    assert [mark.text for mark in reading.marks("hedged_value", after_might)] == ["could be 4"]


def test_every_kind_names_patterns_the_module_holds_by_name(monkeypatch):
    # the rule audit switches a pattern off by its module-level name: a reading must look each
    # pattern up by that name, not keep the object it was first given
    import mmcritic.reading.structure as structure

    for kind, names in MARKS.items():
        assert names, kind
        for name in names:
            assert hasattr(getattr(structure, name), "finditer"), (kind, name)
    assert reading_of("It is not red.").has("negation")
    monkeypatch.setattr(structure, "NEGATION", re.compile("(?!)"))
    assert not reading_of("It is not red.").has("negation")


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ("Yes. Wait, the angle looks closer to 60°. So no, it is not.", "no"),
        ("Yes, in reality it looks larger, but in the chart, no.", "no"),
        ("It could be yes, it might be no. I can't say for sure.", "unclear"),
        ("I can't tell from this image.", "unclear"),
        ("It is not the tallest building.", "no"),
    ],
)
def test_the_yes_no_reader_reads_through_the_structure(answer, read):
    assert yes_no(answer) == read


def test_the_yes_no_reader_settles_on_the_turn_the_reading_marks(monkeypatch):
    import mmcritic.reading.structure as structure

    turned = "Yes, in reality it looks larger, but in the chart, no."
    assert yes_no(turned) == "no"
    # with no turn marked, the opening yes decides
    monkeypatch.setattr(structure, "YES_NO_TURN", re.compile("(?!)"))
    assert yes_no(turned) == "yes"
