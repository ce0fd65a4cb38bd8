"""What surrounds an answer without being it: a clause that says where a value came from, an
aside, a count of something else, a value told beside a name, a hedge after a turn. Each case
is a phrasing real models write, read as a careful grader reads it."""

from __future__ import annotations

import pytest

from mmcritic.eval.answers import (
    answer_span,
    extract_numbers,
    is_cut_off,
    number_word,
    parse_number,
    same_words,
)
from mmcritic.eval.choices import option_letters, read_choice
from mmcritic.eval.registry import get_task
from mmcritic.eval.scorers import anls, letter_score, math_equal, numeric_match, relaxed_match
from mmcritic.eval.tasks import Problem
from mmcritic.eval.tasks.mmmu_val.scoring import open_match
from mmcritic.eval.tasks.mmvu.scoring import open_match as mmvu_match
from mmcritic.eval.tasks.ocrbench.scoring import substring_match
from mmcritic.eval.text_answers import text_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.reading.final import final_answer, stated_answer
from mmcritic.reading.statements import sentences
from mmcritic.rewards.parsing import parse_judgement

OPTIONS = ["London", "Paris", "Berlin", "Madrid"]


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        # a participle clause after the value says where it came from
        (
            "The slope is 2, computed from the two labelled points (0, 3) and (2, 7).",
            "What is the slope of the line?",
            "2",
        ),
        (
            "The perimeter is 24, using the side lengths 5 and 7 marked on the figure.",
            "Find the perimeter of the rectangle.",
            "24",
        ),
        # an aside that holds a bracket of its own
        (
            "So the x-coordinate of the vertex is 2 (the vertex itself is (2, −1)).",
            "Find the x-coordinate of its vertex.",
            "2",
        ),
        # a number word joined to a noun is no number
        (
            "There are 4 cards, so there are 4 × 3 × 2 = 24 different three-digit numbers.",
            "How many three-digit numbers can be made?",
            "24",
        ),
        # a clause beside an equation states the answer when the equation is context
        (
            "The circumference is 14π, using C = 2πr with the radius of 7 labeled on the figure.",
            "The circle in the figure has a radius of 7. Find its circumference.",
            "14\\pi",
        ),
        (
            "The vertex of the parabola is at x = 2, and the minimum value of the function is −1.",
            "The graph of y = x² − 4x + 3 is shown. Find the minimum value of the function.",
            "-1",
        ),
        (
            "Its perimeter is 2 × (5 + 4) = 18 cm, and its area would be 20 cm².",
            "The rectangle is 5 cm long and 4 cm wide. Find its perimeter.",
            "18",
        ),
        (
            "c = -3, and the vertex is at (1, -4).",
            "The graph of y = ax² + bx + c is shown. What is the value of c?",
            "-3",
        ),
        (
            "The third angle measures 65°, as computed from the two angles marked 40° and 75°.",
            "How many degrees is the third angle?",
            "65",
        ),
        (
            "La cara opuesta al 2 es el 5, porque las caras opuestas de un dado suman 7.",
            "Which number is on the bottom face?",
            "5",
        ),
        ("The line crosses the x-axis at x = 2.5.", "Where does the line cross the x-axis?", "2.5"),
        (
            "The answer is not 1 (the increase in the side) or 4 (the increase in the perimeter); "
            "the area goes from 3² = 9 to 4² = 16, so it increases by 7.",
            "By how much does the area increase?",
            "7",
        ),
        (
            "The shaded area is 9 cm², as can be read from the 3 × 3 block of shaded squares.",
            "What is the shaded area?",
            "9",
        ),
        (
            "Japan is 12 and South Korea is 19. (12 + 19) / 2 = 15.5.\n\nThe average is 15.5.",
            "What is the average of the values for Japan and South Korea?",
            "15.5",
        ),
        (
            "Each side of the square is 7, and the perimeter is 28.",
            "Find the perimeter of the square.",
            "28",
        ),
        # the givens the question states are not what its asking sentence ("Find ...") asks
        (
            "AB = 10, using the legs AC = 8 and BC = 6 marked in the figure.",
            "In right triangle ABC, angle C = 90°, AC = 8 and BC = 6. Find the length of AB.",
            "10",
        ),
        # the asked unknown solved, then what it gives beside it
        (
            "5x + 30 = 180\nx = 30\n\nSo x = 30, and the two angles measure 105° and 75°.",
            "The two angles shown, (3x + 15)° and (2x + 15)°, form a linear pair. Find x.",
            "30",
        ),
        # a quick check after the value, cut off in a note after it
        (
            "AB is the hypotenuse, so AB = 5√2 (≈ 7.07). As a quick check, 5² + 5² = 50 and "
            "(5√2)² = 50, which matches. Note that in any 45-45-90 triangle the hypotenuse is",
            "Triangle ABC is an isosceles right triangle with legs 5. Find AB.",
            "5\\sqrt{2}",
        ),
        # a remark on the value after it
        (
            "The heart rate is 72 bpm, within the normal 60–100 range.",
            "A nurse counts 18 beats in 15 seconds. What is the heart rate in beats per minute?",
            "72",
        ),
        # a bare value said first, then what it is about
        ("2020, when the rate peaked at 8.1%.", "In which year did the rate peak?", "2020"),
        (
            "7.8, reached in 2014, as labelled at the peak of the green line.",
            "What is the highest value of the line for Brazil?",
            "7.8",
        ),
        # what the value was read from, after it
        (
            "12.4, based on the 2019 and 2015 dark blue bars in the chart.",
            "What is the difference between the highest and the lowest value of the dark blue bar?",
            "12.4",
        ),
    ],
)
def test_what_trails_a_value_is_not_the_answer(response: str, question: str, gold: str) -> None:
    assert math_equal(response, gold, question)


def test_the_counted_part_answers_only_when_the_question_asks_for_it() -> None:
    bars = "There are 6 bars in the chart, and 2 of them have values smaller than 6."
    assert answer_span(bars, "How many bars have values smaller than 6?") == "2"
    calories = "There are 110 calories per serving, and 45 of them come from fat."
    assert answer_span(calories, "How many calories are there per serving?") == "110"
    people = "There are 6 people visible in total, but only 2 are crossing the street."
    assert answer_span(people, "How many pedestrians are crossing the street?") == "2"
    assert answer_span(people, "How many people are visible in total?") == "6"


def test_a_compound_word_keeps_its_number_word() -> None:
    assert number_word("three-digit numbers, one-way street, thirty-five") == (
        "three-digit numbers, one-way street, 35"
    )


def test_a_sum_left_open_is_cut_off_and_picks_no_option() -> None:
    cut = (
        "For a central point load P the maximum moment is PL/4. "
        "Substituting P = 20 kN and L = 4 m, we get M_max = 20 × 4 /"
    )
    options = ["10 kN·m", "20 kN·m", "40 kN·m", "80 kN·m"]
    assert read_choice(cut, list("ABCD"), options).letter is None
    assert is_cut_off("M_max = 20 × 4 /") and is_cut_off("so x = 7 +")
    assert not is_cut_off("The language is C++") and not is_cut_off("Grade: A+")


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        (
            "The 18-29 age group has the lowest approval rating at 31%.",
            "Which age group has the lowest approval rating?",
            "18-29",
        ),
        (
            "2012 and 2016 both have a value of 35.",
            "Which two years have the same value?",
            "2012 and 2016",
        ),
        (
            "Q1 is 12, Q2 is 15, Q3 is 21 and Q4 is 19. The highest is Q3 with 21.",
            "Which quarter had the highest sales?",
            "Q3",
        ),
        (
            "El país con el valor más bajo es Chile.",
            "Which country has the lowest value?",
            "Chile",
        ),
        ("图中数值最低的国家是希腊。", "Which country has the lowest value?", "Greece"),
        (
            "Brazil is the 3rd bar from the top, with a value of 213.",
            "What is Brazil's value?",
            "213",
        ),
        (
            "Вторая по величине категория — здравоохранение (Healthcare).",
            "Which category has the second highest value?",
            "Healthcare",
        ),
    ],
)
def test_a_text_answer_is_read_without_what_is_told_beside_it(
    response: str, question: str, gold: str
) -> None:
    assert relaxed_match(response, gold, question=question)
    assert not relaxed_match(response, "nothing like it", question=question)


@pytest.mark.parametrize(
    ("response", "question", "read"),
    [
        (
            "The letter is 2 pages long; it is dated August 8, 1979.",
            "What is the date of the letter?",
            "August 8, 1979",
        ),
        ("64% of respondents agreed.", "What percentage of respondents agreed?", "64%"),
        (
            "Row values: Iron 12 mg, Calcium 800 mg. Calcium is 800 mg.",
            "What is the amount of calcium?",
            "800 mg",
        ),
        ("Der Absender ist Dr. Hans Müller.", "Who is the sender?", "Dr. Hans Müller"),
        # a phrase of three words or fewer is the answer as written
        ("5 pages", "How many pages are in the fax?", "5 pages"),
        ("It's a memorandum.", "What type of document is this?", "memorandum"),
        (
            "The invoice is dated 9/23/85, per the header in the upper right corner.",
            "What is the date of the invoice?",
            "9/23/85",
        ),
        (
            "The table lists 6 samples, and the weight asked for is 2.5.",
            "What is the weight of the sample in grams?",
            "2.5",
        ),
        (
            "The survey was conducted in 4 cities over 2 weeks, and the number of respondents "
            "is 1,028.",
            "What is the number of respondents?",
            "1,028",
        ),
        (
            "根据文件，会议地点是 Washington, D.C.。",
            "Where is the meeting held?",
            "Washington, D.C.",
        ),
        ("Der Gesamtbetrag beträgt $8,940.", "What is the total amount?", "$8,940"),
        ("Общее количество ответов — 1 024.", "What is the total number of responses?", "1 024"),
        (
            "1982年的香烟销售总量是 632.5（十亿支）。",  # the year is the question's
            "What is the total number of cigarettes sold in 1982 (in billions)?",
            "632.5",
        ),
        ("Q3 — 45%.", "Which quarter had the highest share?", "Q3"),
        ("值是3。", "What was the value in 2013?", "3"),  # 3 is no number the question names
        ("Reynolds Blvd.", "What is the name of the street?", "Reynolds Blvd."),
        (
            "Linda Reeves — her name appears in the 'Contact' box at the bottom of the form.",
            "Who is the contact person?",
            "Linda Reeves",
        ),
        (
            "The second signature looks like R. Patel, but it could also be R. Pastel.",
            "Who is the second signatory?",
            "",
        ),
        (
            "The Total column lists 3,920, 4,105, 4,812 and 2,760. The largest of these is 4,812.",
            "What is the highest value in the 'Total' column?",
            "4,812",
        ),
        ("Le mémo a été rédigé par C. J. Hughes.", "Who wrote the memo?", "C. J. Hughes"),
        (
            "The check, numbered 2047, is for $1,500.00.",
            "What is the amount of the check?",
            "$1,500.00",
        ),
        ("La nota es de H. R. Clarke.", "Who is the memo from?", "H. R. Clarke"),
        (
            "La conférence s'appelle « World Conference on Lung Health ».",
            "What is the name of the conference?",
            "World Conference on Lung Health",
        ),
        (
            "The vendor is Acme Supply Inc. Wait, looking again at the header, it reads Acme "
            "Supply Co.",
            "What is the name of the vendor?",
            "Acme Supply Co.",
        ),
        (
            "Dr. Frank Moore chaired the meeting. Hmm, no — he only opened it; the chair was "
            "Dr. Ellen Brooks.",
            "Who chaired the meeting?",
            "Dr. Ellen Brooks",
        ),
        (
            "The value for 1985 is 13%. Wait, I misread it — the 1985 column shows 31%.",
            "What is the percentage for 1985?",
            "31%",
        ),
        (
            "Der Name des Instituts lautet „Tobacco Institute“.",
            "What is the name of the institute?",
            "Tobacco Institute",
        ),
        (
            "1989 was $5.2 million and 1990 was $6.1 million; 1991 rose to $6.3 million.",
            "What is the total for 1991?",
            "$6.3 million",
        ),
        (
            "The study followed 120 subjects for 3 years, and it was conducted in 1985.",
            "What is the year of the study?",
            "1985",
        ),
        (
            "The effective date is January 1, 1990, mentioned in the first paragraph of the "
            "agreement.",
            "What is the effective date?",
            "January 1, 1990",
        ),
        (
            "The committee members are John Davis (Chairman), Robert Fine (Treasurer) and Mary "
            "Ellen Walsh (Secretary). The secretary is Mary Ellen Walsh.",
            "Who is the secretary of the committee?",
            "Mary Ellen Walsh",
        ),
        (
            "The article was published in the *Journal of Clinical Oncology*.",
            "What is the name of the journal?",
            "Journal of Clinical Oncology",
        ),
        ("Die Gesamtsumme beträgt 1.240 $.", "What is the total?", "1.240 $"),
        ("公司名称是Philip Morris Inc.", "What is the name of the company?", "Philip Morris Inc."),
        # a count of other things after a bare value, unless the count is asked
        ("$4,560.00 across 7 line items", "What is the total amount?", "$4,560.00"),
        ("12 across 3 pages", "How many pages are there?", "12 across 3 pages"),
        ("Room 12 on floor 3", "Where is the meeting?", "Room 12 on floor 3"),
        # a main clause counting people not asked about, unless they are asked about
        (
            "The ad shows 2 people on a beach, and the brand is Newport.",
            "What is the name of the brand mentioned in the ad?",
            "Newport",
        ),
        ("The ad shows 2 people on a beach.", "How many people are in the ad?", "2"),
        # a name holding an asked word is read whole; a restatement before a name still goes
        (
            "The document is from the University of Minnesota.",
            "What is the name of the university?",
            "University of Minnesota",
        ),
        (
            "The university named in the letter is Duke University.",
            "What is the name of the university?",
            "Duke University",
        ),
        # a long label restating the question labels its value; a time's colon is no label
        (
            "Dr. Allen's phone number: 212-555-0148",
            "What is the telephone number of Dr. Allen?",
            "212-555-0148",
        ),
        (
            "The press conference is at 3:30 PM.",
            "What is the time mentioned for the press conference?",
            "3:30 PM",
        ),
        # a sentence a loop repeats is said once
        ("Room 407. Room 407. Room 407. Room 407.", "What is the room number?", "407"),
        # a date among other numbers is the date asked for; a date alone keeps its weekday
        (
            "The meeting on June 5, 1991 had 14 attendees listed.",
            "What is the date of the meeting?",
            "June 5, 1991",
        ),
        (
            "The meeting is scheduled for Tuesday, March 8.",
            "When is the meeting scheduled?",
            "Tuesday, March 8",
        ),
        # a heading over label lines, or a bold label, labels the value asked for; a heading
        # over one value line is that value
        ("### Registration\n- **Fee:** $150\n- Due by: May 1", "What is the fee?", "$150"),
        ("Registration:\n$150", "What is the registration fee?", "$150"),
        (
            "The subtotal is $11,600.\n\n**Total cost: $12,480**",
            "What is the total cost?",
            "$12,480",
        ),
        # a year naming the thing after it is no value; a year alone in its clause is
        (
            "The purpose of the meeting is to review the 1985 budget.",
            "What is the purpose of the meeting?",
            "review the 1985 budget",
        ),
        ("The budget was approved in 1985.", "When was the budget approved?", "1985"),
        # a list's first entry is not said first: the sentence concluding on the answer is
        (
            "1974: 12.1M; 1975: 11.8M; 1976: 10.9M. 1975 is lower. So the lowest is 1976.",
            "Which year had the lowest sales?",
            "1976",
        ),
        # a bare passive names its agent for "who"; a bare phrase for another question stays
        ("Prepared by J. L. Charles.", "Who prepared the report?", "J. L. Charles"),
        ("Shipped by air freight", "What is written under the box?", "Shipped by air freight"),
        # a count of things beside the value, and "no." before a number that ends no sentence
        (
            "The total amount due is $1,247.50 for 14 items.",
            "What is the total amount due?",
            "$1,247.50",
        ),
        (
            "Item no. 3 costs $127.50 (10 units).",
            "What is the unit price of item no. 3?",
            "$127.50",
        ),
        ("The bar for 2020 reaches 3,390.", "What is the value in the chart?", "3,390"),
        # the sentence restating what is asked, in the words a restatement adds ("missing")
        (
            "H plus 3 is K, and K plus 3 gives N, which matches the last letter shown. The missing "
            "letter is K.",
            "What letter replaces the question mark in the sequence shown?",
            "K",
        ),
        # a place named after a preposition of another language answers where
        ("La conferenza si terrà a Chicago.", "In which city is the conference held?", "Chicago"),
        ("Die Konferenz findet in New York statt.", "Where is the conference held?", "New York"),
        ("La réunion aura lieu à Genève.", "Which city hosts the meeting?", "Genève"),
        # in a sentence in another script, its one Latin run, also after a dash or holding a time
        ("昼食会は12:30 p.m.に始まります。", "At what time does the luncheon begin?", "12:30 p.m."),
        (
            "Автор отчёта — Dr. Alan Rodgman.",
            "Who is the author of the report?",
            "Dr. Alan Rodgman",
        ),
        (
            "Отчёт подготовила компания Philip Morris Inc.",
            "Which company prepared the report?",
            "Philip Morris Inc.",
        ),
        # a verb before a colon says what follows it; words before a name describe it
        (
            "The subject line reads: Budget Revision for FY 1990.",
            "What is the subject of the memo?",
            "Budget Revision for FY 1990",
        ),
        (
            "The 'Approved by' field contains the handwritten name J. M. Kassler.",
            "What is written in the 'Approved by' field?",
            "J. M. Kassler",
        ),
    ],
)
def test_a_document_answer_is_read_in_its_own_words(
    response: str, question: str, read: str
) -> None:
    assert text_answer(response, question) == read
    assert anls(text_answer(response, question), [read]) == 1.0


@pytest.mark.parametrize(
    ("response", "question", "read"),
    [
        # a quoted title keeps its own full stop
        ('The heading is "Table 3. Nicotine Content by Brand".', "What is the heading?",
         "Table 3. Nicotine Content by Brand"),
        ("The caption reads “Fig. 2. Sales by Region”.", "What is the caption of the figure?",
         "Fig. 2. Sales by Region"),
        # a source set off inside a clause that goes on to state the answer
        ("The fax went to 2 recipients and, according to the cover sheet, it contains 3 pages.",
         "How many pages does the fax contain?", "3"),
        ("It was sent in May but, as shown in the footer, it is dated June 4, 1998.",
         "What is the date on the letter?", "June 4, 1998"),
        # a name after the verb that repeats the asked word
        ("The journal is the Journal of the National Cancer Institute.",
         "What is the name of the journal?", "Journal of the National Cancer Institute"),
        ("The company is Lorillard Company.", "What is the name of the company?",
         "Lorillard Company"),
        # the text asked for as written, whatever its participle
        ("Samples shipped by air freight", "What is written in the 'Remarks' field?",
         "Samples shipped by air freight"),
        ("Approved by the board in 1987", "What is printed below the signature?",
         "Approved by the board in 1987"),
        # a compound unit stays whole
        ("The dosage is 10 mg/kg.", "What is the recommended dosage?", "10 mg/kg"),
    ],
)  # fmt: skip
def test_a_document_answer_keeps_what_belongs_to_it(response: str, question: str, read: str):
    assert text_answer(response, question) == read


def test_a_count_beside_the_asked_value_is_not_the_answer() -> None:
    assert numeric_match(
        "There are 6 bars in the chart, and 2 of them have values smaller than 6.",
        "2",
        question="How many bars have values smaller than 6?",
    )


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ("It may or may not be blocked; the truck could be parked on the shoulder.", "unclear"),
        (
            "Possibly. The left bar might be taller, but they could also be the same height.",
            "unclear",
        ),
        ("It might look taller, but they are the same height.", None),
        (
            "It might. One row shows a dash at Oxford but the next a time, so I'm not certain.",
            "unclear",
        ),
        ("Possibly yes, but it may also pass just outside the city boundary.", "unclear"),
        ("Yes, it does; it may also stop at Reading.", "yes"),
        # a closing lean offered only as possible commits to neither
        (
            "It is right around 9%, so it could be just above or just below. Possibly yes.",
            "unclear",
        ),
        ("Vielleicht ja.", "unclear"),
        ("Possibly yes, the peak is at 9.5%.", "yes"),
    ],
)
def test_a_yes_no_answer_that_offers_both_settles_on_neither(answer: str, read: str) -> None:
    assert yes_no(answer) == read


def test_a_range_that_is_an_options_own_text_is_no_hedge() -> None:
    scores = ["2–1.", "3–1.", "3–2.", "1–0."]
    settled = "At the 90th minute the scoreboard shows 3–2."
    assert read_choice(settled, list("ABCD"), scores).letter == "C"
    assert read_choice("It ended 3–2 or 3–1, I cannot tell.", list("ABCD"), scores).letter is None
    times = ["About 10 seconds.", "About 30 seconds.", "About 1 minute.", "About 2 minutes."]
    hedged = "The fireworks begin around 30 seconds or 1 minute into the video."
    assert read_choice(hedged, list("ABCD"), times).letter is None


@pytest.mark.parametrize(
    ("critique", "verdict"),
    [
        (
            "Response 2 names the jersey number more closely. "
            "Response 2 is therefore the better answer.",
            "2",
        ),
        (
            "Response 1 is better.\n\nHowever, looking more closely, the cup holds tea, so "
            "Response 2 is right after all. Final answer: Response 2.",
            "2",
        ),
        (
            "Response 1 is better.\n\nOn reflection, both misidentify the species, so neither "
            "is really better than the other.",
            None,
        ),
        ("Final answer: 12", None),
        (
            'Answer 2 reads "Ibuprofen 400 mg". Both are concise.\n\nMy final choice is Answer 1.',
            "1",
        ),
        (
            "It's hard to say which one is better: Response 1 is more accurate about the "
            "number of bikes, but Response 2 gives a more complete description.",
            None,
        ),
        (
            "Response 2 misses that the question asks for the smallest slice. The winner is "
            "Response 1.",
            "1",
        ),
        (
            "La réponse 1 nomme correctement l'Arc de Triomphe. Je préfère donc la réponse 2 "
            "pour sa richesse.",
            "2",
        ),
        ("답변 2가 더 정확하지만 답변 1이 더 자세합니다. 최종적으로 답변 1을 선택합니다.", "1"),
        ("Comparing the two, I find Answer 2 superior: it reads the plate as KX 4471.", "2"),
        ("Judging by the coat and ears, I'd go with Response 2 as the better answer.", "2"),
        ("Antwort 2 erfindet einen Hund. Daher ist Antwort 1 vorzuziehen.", "1"),
        ("回答1的描述更详细。回答2只说了“桌子”。最终选择：回答1。", "1"),
        (
            "1. Answer 1 shows an umbrella.\n2. Answer 2 is right.\n\n**Final judgment: Answer 2**",
            "2",
        ),
        ("Answer 1: cat. Answer 2: dog. Answer 1 is correct and is the better answer.", "1"),
        ("La meilleure réponse est la Réponse 2.", "2"),
        (
            "Response 1 is more accurate about the color, while Response 2 is more complete. It "
            "depends on what the user values more.",
            None,
        ),
        # the final statement, as every reader reads it: a marked answer, answer tags
        ("Answer: Response 2", "2"),
        ("<think>Response 1 says lamp; the chair is closer.</think>\n<answer>2</answer>", "2"),
        ("Response 1 makes fewer errors. My judgment: Response 1.", "1"),
        ("Could Response 2 be better? It invents a bicycle. So the better one is Response 1.", "1"),
        # a box stays the box: words after it that disagree are not a final statement
        ("Overall Judgment: Answer 1 is better.\n\n\\boxed{2}", None),
    ],
)
def test_a_critique_settles_on_its_final_verdict(critique: str, verdict: str | None) -> None:
    assert parse_judgement(critique).choice == verdict


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        (
            "Samsung held a 22% market share in Q3 2022, as shown in the third bar from the left.",
            "What was the market share of Samsung in Q3 2022?",
            "22",
        ),
        (
            "Agriculture accounts for 18% and Industry for 27%, both well below Services at "
            "55%. So Services employs the most people.",
            "Which sector employs the most people?",
            "Services",
        ),
        (
            "The values are 21, 28, 33, 40 and 47. Their mean is 33.8, but the question asks "
            "for the median, which is the middle value: 33.",
            "What is the median of the five values?",
            "33",
        ),
        (
            "La proporción de energías renovables en Francia es del 19,1 %.",
            "What is the share of renewables in France?",
            "19.1",
        ),
    ],
)
def test_a_chart_answer_is_the_value_it_settles_on(response: str, question: str, gold: str) -> None:
    assert relaxed_match(response, gold, question=question)


def test_a_value_before_a_turn_stands_when_the_turn_leaves_the_question() -> None:
    answer = "The value in 2019 is 45. However, in 2020 it was 30."
    assert answer_span(answer, "What was the value in 2019?") == "45."


@pytest.mark.parametrize(
    ("response", "question", "targets", "read"),
    [
        (
            "The map legend lists 12 regions, and 9 countries are highlighted in blue.",
            "how many countries are highlighted in blue?",
            ["12"],
            False,
        ),
        (
            "The word reads \"stated\". Actually, looking again, there is an 'r' after the "
            "'t', so it is \"started\".",
            "what is written in the image?",
            ["stated"],
            False,
        ),
        (
            "The letter mentions Carol Hart in the cc line and Dennis Lowe in the greeting; "
            "the sender is Dennis Lowe.",
            "who is the sender?",
            ["Carol Hart"],
            False,
        ),
        (
            "The letter mentions Carol Hart in the cc line and Dennis Lowe in the greeting; "
            "the sender is Dennis Lowe.",
            "who is the sender?",
            ["Dennis Lowe"],
            True,
        ),
        (
            "There are 12 countries in the chart, and Germany's value is 8.",
            "What is the value for Germany?",
            ["12"],
            False,
        ),
        (
            "It's likely Heineken or Carlsberg, judging by the green label.",
            "what brand of beer is this?",
            ["heineken"],
            False,
        ),
        (
            "Paris, as shown in the ranking to the right of the London skyline illustration.",
            "Which city has the highest average rent?",
            ["London"],
            False,
        ),
        (
            "The menu lists Tea $2.50, Coffee $2.75 and Latte $3.50. The coffee costs $2.75.",
            "what is the price of the coffee?",
            ["$2.50"],
            False,
        ),
        ('It could read "Dream" or "Bream".', "what is written in the image?", ["Dream"], False),
        (
            "The curved letters could be mistaken for HARBOUR or HARDER, but reading it letter by "
            "letter it is HARBOR.",
            "what is written in the image?",
            ["HARBOR"],
            True,
        ),
        # a closing passive about the document restates no reading of it
        (
            "The letter is dated March 14, 1987. The letter is addressed to Dr. Harold",
            "What is the date mentioned in the letter?",
            ["March 14, 1987"],
            True,
        ),
    ],
)
def test_ocr_containment_reads_what_the_answer_settles_on(
    response: str, question: str, targets: list[str], read: bool
) -> None:
    assert substring_match(response, targets, question=question) is read


@pytest.mark.parametrize(
    ("response", "options", "letter"),
    [
        # reasoning cut off on a colon, at a subject after a phrase, or at a list's next item
        (
            "Let's look at each image:\n1. First image: the hands have six fingers.\n2. Second "
            "image: the light is wrong.\n3. Third image:",
            ["the first image", "the second image", "the third image"],
            None,
        ),
        (
            "Compare the frames. In the first frame, the lamp is left of the sofa. In the "
            "second frame, the lamp",
            ["left", "right"],
            None,
        ),
        (
            "I'll estimate the distances:\n- The plant is next to the window, far from the "
            "door.\n- The umbrella stand",
            ["the plant", "the umbrella stand", "the shoe rack"],
            None,
        ),
        # "option B or option C" offers two
        (
            "The speaker could be referring to either option B or option C; the video doesn't "
            "make it clear.",
            ["The processor.", "The modem.", "The display.", "The camera."],
            None,
        ),
        # an article the option leaves out or changes
        (
            "The report focuses on the election results.",
            ["A flood.", "An election.", "A sports final.", "A new bridge opening."],
            "B",
        ),
        # other options' texts named as what they are not, then a letter
        (
            "Pumping blood is the heart's job, digesting food is the stomach's. The "
            "highlighted organ is the kidney, which filters blood. **B**",
            ["pumping blood", "filtering blood", "digesting food", "exchanging gases"],
            "B",
        ),
        # yes and no as options: the yes/no reader, not the word "no" in "no breaks"
        (
            "Yes, the graph has no breaks at x = 2, so the function is continuous there.",
            ["Yes", "No"],
            "A",
        ),
        ("No, there is a 'No Right Turn' sign.\nA", ["Yes", "No"], None),
        # texts that differ only in a sign do not tell the options apart; the letter does
        (
            "The graph opens downward with vertex (0, 2), so it's **B: y = −x² + 2**.",
            ["y = x² + 2", "y = −x² + 2", "y = −x² − 2", "y = x² − 2"],
            "B",
        ),
        (
            "The plant might be on the table (A) or on the floor behind it (B); the angle "
            "makes it unclear.",
            ["yes", "no"],
            None,
        ),
        ("It reaches roughly 8, or maybe 9, units up the wall.", ["4", "6", "8", "12"], None),
        (
            "BC is opposite ∠A, so BC = AB · sin 30° = 10 × 1/2 = 5. **A**",
            ["5", "5√3", "10", "20"],
            "A",
        ),
        (
            "The perimeter is 24 and AB = 6 and AC = 10, so BC = 24 − 6 − 10 = 8. **C**",
            ["5", "6", "8", "10"],
            "C",
        ),
        (
            "Starting from the leftmost node D we go to B, E, A and C. So the answer is (A) D "
            "B E A C.",
            ["D B E A C", "A B D E C", "D E B C A", "A B C D E"],
            "A",
        ),
        (
            "Points A and D lie on the roof, and C is on the door. Point B is on the window's "
            "corner. **(B) Point B**",
            ["Point A", "Point B", "Point C", "Point D"],
            "B",
        ),
        (
            "The ammeter reads 0.4 A, as indicated by the needle on the 0–1 A scale.",
            ["0.2 A", "0.4 A", "2 A", "4 A"],
            "B",
        ),
        # a conclusion that ends on one letter, after options discussed or alternatives weighed
        (
            "(A) 1/2 would need two triangles shaded, and (E) 1/8 would need the triangles to "
            "be split again. The diagonals cut the square into 4 congruent triangles and one is "
            "shaded, so the fraction is 1/4, option **C**.",
            ["1/2", "1/3", "1/4", "1/6", "1/8"],
            "C",
        ),
        (
            "- Removing 4 leaves 16, and 1 + 7 = 3 + 5 = 8 ✓\n- Removing 1, 3, 5 or 7 leaves an "
            "odd sum ✗\n\nSo the number not used is 4, option **(C)**.",
            ["1", "3", "4", "5", "7"],
            "C",
        ),
        # options a conclusion sets aside are no pick
        (
            "B. It runs on rails set into the road, so it is a tram rather than a bus (A) or a "
            "truck (C).",
            ["A bus", "A tram", "A truck"],
            "B",
        ),
        # a closing statement that ends on one letter, after options discussed with theirs
        (
            "A resistor dissipates energy rather than storing it, and an inductor (B) stores "
            "energy in a magnetic field. Storing energy between two plates describes a "
            "**capacitor — C**.",
            ["Resistor", "Inductor", "Capacitor", "Diode"],
            "C",
        ),
        (
            "Simple cubic (A) has atoms only at the corners. With one atom at the body center, "
            "this is **B. Body-centered cubic**.",
            ["Simple cubic", "Body-centered cubic", "Face-centered cubic"],
            "B",
        ),
        ("The camera is moving left when shooting the video. (B)", ["left", "right"], None),
        ("B. Paris. The capital of France is Paris, so it is not A.", OPTIONS, "B"),
        ("B\n\nIt is Paris, hence not option A.", OPTIONS, "B"),
        # reasoning cut off at a verb or a preposition still waiting for what it says
        (
            "Let's think step by step. First, the video shows the piston moving down with the "
            "intake valve open, which means",
            ["Intake", "Compression", "Power", "Exhaust"],
            None,
        ),
        (
            "Step 1: The layers from outside in: corona, chromosphere, photosphere, core.\n"
            "Step 2: Temperature generally increases toward",
            ["corona", "photosphere", "core", "chromosphere"],
            None,
        ),
        (
            "Let's examine each statement:\n\n- **A**: Sales drop in February, so they did not "
            "decrease steadily.\n- **B**: The highest point on the line is at March, at roughly",
            ["sales decreased steadily", "sales peaked in March", "sales were constant"],
            None,
        ),
        # a letter alone on the last line answers, whatever the reasoning named on the way
        (
            "It isn't sunny (A). The sky is gray, which could suggest overcast (B), but the "
            "buildings fade into a white haze — that is fog.\n\n**D**",
            ["Sunny", "Overcast", "Snowing", "Foggy"],
            "D",
        ),
        # a lean that leaves another option open commits to neither
        ("Probably A, but it could be B.", ["recall", "push mid", "farm", "defend"], None),
        ("I'd lean toward C, but E is also possible.", list("vwxyz"), None),
        ("Probably A, but it could be a problem later.", ["recall", "push", "farm", "wait"], "A"),
        # a value is no part of an option's sum, but a fraction written two ways is the same
        ("2π", ["16-2π", "16-4π", "8π", "16-π", "4π"], None),
        ("3/5", ["\\frac{3}{5}", "\\frac{4}{5}", "\\frac{3}{4}"], "A"),
        # a pick stated before its reasons stands when the reasons are cut off
        (
            "**Answer: B (9:35)**\n\nReasoning: In a mirror image the face is flipped. The hands "
            "that appear to point at 2 and 5 (2:25) actually point at the positions which are",
            ["2:25", "9:35", "9:25", "3:35"],
            "B",
        ),
        (
            "The diagram shows a **composite volcano** (C). You can tell because:\n- It has "
            "steep sides of lava and ash\n- There is a central vent and",
            ["shield", "cinder cone", "composite", "caldera"],
            "C",
        ),
        # the figure's labels as a range pick neither end; a path of letters is no range
        ("The diagram labels 6 organs, A through F.", ["stomach", "liver", "pancreas"], None),
        ("The parts are marked A–F; the liver is B.", ["stomach", "liver", "pancreas"], "B"),
        (
            "The critical path is A-B-D-F (option A), with a total duration of 18 days.",
            ["A-B-D-F", "A-C-E-F", "A-B-E-F"],
            "A",
        ),
    ],
)
def test_the_letter_reader_settles_where_a_careful_grader_does(
    response: str, options: list[str], letter: str | None
) -> None:
    assert read_choice(response, option_letters(len(options)), options).letter == letter


def test_a_self_correcting_math_answer_is_read_after_its_correction() -> None:
    answer = "The answer is 6. No wait, I should also count the full rectangle — that makes 7."
    assert not math_equal(answer, "6") and math_equal(answer, "7")
    assert yes_no("I'm not able to tell from the information given.") == "unclear"


def test_a_revised_reading_is_not_the_first_one() -> None:
    revised = "1979. Hmm, no — reading the small print again, it's © 2001."
    assert anls(text_answer(revised, "What is the year on the copyright line?"), ["1979"]) == 0
    flipped = (
        "No, the door is being closed. Hmm, let me re-check the order: the gap gets wider "
        "from frame 1 to frame 4, so yes, it's being opened."
    )
    assert yes_no(flipped) == "yes"


def test_numbers_that_frame_the_asked_value_are_not_it() -> None:
    pie = "The pie is divided into 5 segments, and the red one accounts for 19%."
    assert relaxed_match(pie, "19", question="What is the value of the red segment?")
    curve = "From the graph, at x = 3 the curve passes through y = 5. So f(3) = 5."
    assert numeric_match(curve, "5", question="What is the value of f(3)?")


def test_a_count_it_cannot_make_picks_no_option() -> None:
    refusal = "I'm unable to count the three-pointers accurately because shots happen off-camera."
    assert read_choice(refusal, list("ABCD"), ["One.", "Two.", "Three.", "Four."]).letter is None


def test_a_clause_that_sums_states_the_value() -> None:
    total = "81% of Democrats and 14% of Republicans approve, which adds up to 95."
    question = "What's the total of Democrats and Republicans who approve?"
    assert relaxed_match(total, "95", question=question)
    assert not relaxed_match(total, "14", question=question)


def test_a_count_in_another_language_is_its_number_but_an_article_is_not_one() -> None:
    how_many = "How many people are crossing the street?"
    assert numeric_match("Hay cuatro personas cruzando la calle.", "4", question=how_many)
    assert numeric_match("Auf der Bank sitzen drei Personen.", "3", question=how_many)
    assert number_word("Es una persona. Il y a un chat.") == "Es una persona. Il y a un chat."


def test_two_values_of_one_label_are_two_readings() -> None:
    assert text_answer("The meeting is on July 8 or July 9, 1980.", "What is the date?") == ""
    assert text_answer("The meeting is on July 8, 1980.", "What is the date?") == "July 8, 1980"


def test_an_answer_label_in_another_language_marks_the_answer() -> None:
    french = "La diagonale vaut 8, donc le côté vaut 8/√2 = 4√2.\n\n**Réponse : 4√2**"
    assert math_equal(french, "4\\sqrt{2}", "Find the side length of the square.")
    assert numeric_match("Respuesta: 12", "12") and numeric_match("Antwort: 12", "12")
    assert numeric_match("**Answer: 12**", "12")  # the bold opened before the label closes
    # the label itself marks the answer, not only the last number
    assert stated_answer("La base mide 8.\nRespuesta: 12") == "12"
    assert stated_answer("Die Basis ist 8.\nAntwort: 12") == "12"
    assert stated_answer("**Answer: 12**") == "12"


def test_saying_it_is_not_able_to_judge_is_unclear() -> None:
    unable = "I'm not able to reliably judge whether the circles differ in size from this image."
    assert yes_no(unable) == "unclear"


def test_a_count_said_to_be_the_total_answers_how_many_in_total() -> None:
    lanes = "4 lanes in total, counting the two lanes on the opposite side of the median (2 + 2)."
    assert numeric_match(lanes, "4", question="How many lanes does the highway have in total?")
    left = "There are 7 objects in total and 1 yellow cylinder, so 6 objects are left."
    assert numeric_match(left, "6", question="How many objects are left?")
    subset = "Out of the 8 countries shown, 3 have a value above 40."
    assert numeric_match(subset, "3", question="How many countries have a value above 40?")


@pytest.mark.parametrize(
    "sum_word", ["so", "therefore", "which adds up to", "which makes", "giving a total of"]
)
def test_a_count_summed_up_after_its_parts_is_the_count(sum_word: str) -> None:
    answer = f"There are 3 apples on the left and 2 apples on the right, {sum_word} 5."
    assert numeric_match(answer, "5", question="How many apples are there?")
    assert not numeric_match(answer, "2", question="How many apples are there?")


def test_a_colour_named_with_its_chart_part_answers_which_colour() -> None:
    question = "Which color is used to represent Canada?"
    assert relaxed_match("Canada is represented by the red line.", "red", question=question)


def test_ranges_in_the_context_of_an_open_answer_are_no_hedge() -> None:
    answer = "32, as read from the bottom three bars of the pyramid (ages 0–4, 5–9 and 10–14)."
    assert open_match(answer, "32")
    assert not open_match("It is 30–35, judging from the bottom bars.", "32")


def test_a_value_stated_only_in_a_condition_or_after_its_equation_is_the_answer() -> None:
    crossing = "The line crosses the x-axis at x = 2.5."
    assert numeric_match(crossing, "2.5", question="Where does the line cross the x-axis?")
    average = "Japan is 12 and South Korea is 19. (12 + 19) / 2 = 15.5.\n\nThe average is 15.5."
    question = "What is the average of the values for Japan and South Korea?"
    assert relaxed_match(average, "15.5", question=question)


@pytest.mark.parametrize(
    ("response", "question", "read"),
    [
        # a number that ends a name is no answer alone; "called" restates the question
        (
            "The program is called the Smoke-Free Class of 2000.",
            "What is the name of the program?",
            "Smoke-Free Class of 2000",
        ),
        # quotes around the question's words do not end its restatement
        (
            "The name in the 'Approved by' field is L. F. Meyer.",
            "What is the name in the 'Approved by' field?",
            "L. F. Meyer",
        ),
        # the text asked to be read, whole; a yes/no question answered by its opening word
        ("Printed in U.S.A.", "What is printed at the bottom of the page?", "Printed in U.S.A."),
        (
            "Yes, it is marked CONFIDENTIAL in the upper right corner.",
            "Is the document marked confidential?",
            "Yes",
        ),
        # a relative clause or a place on the page after the answer is context
        (
            "The sender is Linda Marsh, who works in the Public Affairs department",
            "What is the sender's name?",
            "Linda Marsh",
        ),
        ("RJR-0418, at the top of the page", "What is the form number?", "RJR-0418"),
    ],
)
def test_a_document_answer_is_the_span_a_grader_would_take(
    response: str, question: str, read: str
) -> None:
    assert text_answer(response, question) == read


def test_a_name_that_could_be_one_of_two_is_no_answer() -> None:
    response = "The name could be Smokeless Tobacco Research Council or Tobacco Research Council."
    assert text_answer(response, "What is the name of the foundation?") == ""


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        # an equation that computes the value from numbers is the answer, not context beside it
        (
            "The two smallest bars are 14 and 17, and 14 + 17 = 31.",
            "What is the sum of the two smallest bars?",
            "31",
        ),
        (
            "Each term is twice the previous term minus 1: 33 × 2 − 1 = 65.\n\n65",
            "What is the next number in the sequence shown: 3, 5, 9, 17, 33, ?",
            "65",
        ),
        # ... unless it only explains the value stated before it
        (
            "The number in the empty circle must be 5, since 5 + 4 + 6 = 15 along the line.",
            "What number goes in the empty circle?",
            "5",
        ),
        # an equation of any expression may be the subject that gives the value
        (
            "The vertex form y = −(x − 1)² + 4 gives a maximum of 4 at x = 1.",
            "What is the maximum value of y?",
            "4",
        ),
        # a scale word counts, and a year beside the value is a label
        (
            "The company earned $2 million in 2019.",
            "How much revenue, in dollars, did the company earn in 2019?",
            "2000000",
        ),
        (
            "The company earned $2 million in 2019.",
            "In which year did the company earn $2 million?",
            "2019",
        ),
        # a decimal comma
        ("À x = 3, la droite atteint y = 7,5.", "What is the value of y at x = 3?", "7.5"),
    ],
)
def test_the_stated_number_is_the_one_a_grader_reads(
    response: str, question: str, gold: str
) -> None:
    assert numeric_match(response, gold, question=question)


def test_a_decimal_comma_is_a_decimal_point_but_not_in_a_list_or_a_point() -> None:
    assert relaxed_match("Der Wert für 2016 beträgt 3,7.", "3.7", question="Value in 2016?")
    assert open_match("Die Fläche beträgt π · 3² ≈ 28,27.", "28.27")
    assert not numeric_match("The solutions are 3,7,9.", "3.7")
    assert extract_numbers("The solutions are 3,7,9.") == [3, 7, 9]  # not 3.7 nor 7.9
    assert math_equal("The intersection is (3,7).", "(3,7)")
    point = parse_number("The intersection is (3,7).")
    assert point is not None and point.value == 7  # not 3.7


def test_a_reading_settled_on_after_a_closer_look_is_the_reading() -> None:
    response = (
        "The word appears to be 'form'. On a closer look, the middle letter is an 'a', so it "
        "reads 'farm'."
    )
    assert not substring_match(response, ["form"], question="what is written in the image?")
    assert substring_match(response, ["farm"], question="what is written in the image?")


@pytest.mark.parametrize(
    ("critique", "verdict"),
    [
        (
            "Assistant A says the number is 23, but it is 32. Assistant B reads 32 correctly. "
            "Assistant B's answer is better.",
            "2",
        ),
        ("回答1把数字读成了17，但实际是71。回答2读对了。综合来看，回答2更准确。", "2"),
    ],
)
def test_a_verdict_stated_in_words_is_read(critique: str, verdict: str) -> None:
    assert parse_judgement(critique).choice == verdict


@pytest.mark.parametrize("answer", ["Nein.", "Non.", "Não."])
def test_no_alone_in_another_language_is_no(answer: str) -> None:
    assert yes_no(answer) == "no"


def test_a_letter_written_against_cjk_text_is_the_pick() -> None:
    options = ["chloroplast", "nucleus", "cell wall", "vacuole"]
    answer = stated_answer("答えはAの葉緑体です。")
    assert read_choice(answer, option_letters(4), options).letter == "A"


def test_a_figure_label_names_an_option_when_the_options_are_the_points() -> None:
    letters = option_letters(4)
    assert read_choice("Point A", letters, letters).letter == "A"
    on_a_figure = read_choice("Point B is the blade.", letters, ["blade", "stem", "leaf", "root"])
    assert on_a_figure.letter == "A"


def test_an_option_is_named_by_its_value_with_a_scale_word() -> None:
    options = ["5,000.", "15,000.", "50,000.", "150,000."]
    answer = "The narrator says about fifty thousand people attended."
    assert letter_score(answer, "C", option_letters(4), options) == ("C", 1.0)


def test_an_equation_that_gives_the_value_is_read_for_its_value() -> None:
    answer = "The vertex form y = −(x − 1)² + 4 gives a maximum of 4 at x = 1."
    assert math_equal(answer, "4", question="What is the maximum value of y?")


def test_saying_none_of_the_given_options_match_picks_none() -> None:
    answer = (
        "Company C sold 180 of the 1,500 total units, so its market share is 180 / 1,500 = "
        "12%. None of the given options match."
    )
    assert read_choice(answer, option_letters(4), ["15%", "20%", "25%", "30%"]).letter is None


def test_reasoning_cut_off_at_a_subject_after_a_leading_phrase_picks_none() -> None:
    answer = (
        "Let's analyze the graph step by step.\n\n1. For x < 0, the curve rises to a local "
        "maximum at x = 0.\n2. Between x = 0 and x = 2, the curve"
    )
    options = ["(−∞, 0)", "(0, 2)", "(2, ∞)", "(−1, 1)"]
    assert read_choice(answer, option_letters(4), options).letter is None


def test_two_readings_in_capitals_commit_to_neither() -> None:
    answer = "Possible readings: FRESH or FRESCO. The last letters are too curved to be certain."
    assert not substring_match(answer, ["FRESH"], question="what is written in the image?")


def test_a_count_a_colon_breaks_down_is_the_count() -> None:
    answer = (
        "There are 8 triangles in the picture: 4 small ones, 3 made of two small triangles, "
        "and 1 large triangle."
    )
    assert answer_span(answer, "How many triangles can be found in the picture?") == "8"


def test_an_answer_glossed_in_brackets_after_cjk_text_is_read() -> None:
    answer = "売上が最も高いのは12月（December）です。"
    assert relaxed_match(answer, "December", question="Which month has the highest sales?")


@pytest.mark.parametrize(
    ("response", "question", "answer"),
    [
        # a trailing clause naming where the answer was read, holding a quoted label
        (
            'Susan M. Blake, as given under "Contact" at the bottom of the form.',
            "Who is the contact person?",
            "Susan M. Blake",
        ),
        # an address opening with a number and an initial, then where it was read
        (
            "The address is 401 N. Main Street, shown in the letterhead at the top of the page.",
            "What is the address of the company?",
            "401 N. Main Street",
        ),
        # a passive's participle and preposition before the answer
        (
            "The meeting is scheduled for October 14, 1985.",
            "What is the date of the meeting?",
            "October 14, 1985",
        ),
        (
            "The letter is from J. P. McCarthy. Actually, McCarthy is the recipient; the letter "
            "is signed by William D. Hobbs.",
            "Who is the letter from?",
            "William D. Hobbs",
        ),
        # a re-check that settles on another count
        (
            "24 samples were tested. Let me re-check: the table shows 24 per group and there are "
            "two groups, so 48 samples in total.",
            "How many samples were tested?",
            "48",
        ),
        # an imperative's object of the asked preposition
        (
            "Please return the form to the Personnel Office.",
            "To whom should the form be returned?",
            "Personnel Office",
        ),
    ],
)
def test_the_document_answer_is_read_without_its_source_its_verb_or_a_first_count(
    response: str, question: str, answer: str
) -> None:
    assert text_answer(response, question) == answer


def test_a_value_with_a_trailing_source_naming_a_year_is_the_value() -> None:
    answer = "95.5 million, according to the data label at the top of the 2019 bar."
    question = "What was the number of passengers in 2019 in millions?"
    assert relaxed_match(answer, "95.5", question=question)
    assert not relaxed_match(answer, "2019", question=question)


def test_a_root_in_the_stated_value_is_part_of_it() -> None:
    answer = "a · b = |a||b|cos 60° = 2 × 3 × √3/2 = 3√3"
    assert not math_equal(answer, "3")
    assert math_equal(answer, "3\\sqrt{3}")


def test_a_labelled_last_line_restating_the_question_is_the_answer() -> None:
    answer = (
        "The graph is made of cycles and every vertex has degree at most 3. Alternating two "
        "colors around the outer cycle works, so it can be colored with 2 colors.\n\n"
        "Chromatic number: 2"
    )
    assert answer_span(answer, "For the graph shown, what is the chromatic number?") == "2"


def test_walking_through_the_options_picks_the_one_it_settles_on() -> None:
    answer = (
        "A (9) would be 3 cuts, giving 4 pieces. C (15) is 5 cuts, giving 6 pieces. D (18) and "
        "E (20) are too many. 5 pieces need 4 cuts: 12 minutes, B."
    )
    options = ["9", "12", "15", "18", "20"]
    assert read_choice(answer, option_letters(5), options).letter == "B"


def test_a_fraction_option_is_not_named_by_a_product_of_its_digits() -> None:
    options = ["5", "6", "1.5", "2/3", "12"]
    assert read_choice("a = xy = 2 × 3 = 6 → B", option_letters(5), options).letter == "B"
    assert read_choice("a = 2/3, so D", option_letters(5), options).letter == "D"
    assert letter_score("a = xy = 2 × 3 = 6", "B", option_letters(5), options) == ("B", 1.0)


def test_looking_closely_after_an_answer_explains_it_and_looking_again_revises_it() -> None:
    question = "Does the logo in the image read 'Starbucks Coffee'?"
    explained = "No. Looking closely, the text reads \"STARBOCKS COFFEE\": the 'U' is an 'O'."
    assert yes_no(explained, question) == "no"
    revised = 'No. Looking again, the text reads "STARBUCKS COFFEE", so yes.'
    assert yes_no(revised, question) == "yes"


def test_a_yes_stated_once_after_negated_reasoning_is_yes() -> None:
    answer = (
        "2013 is 40, not the tallest. 2014 is 55. 2015 reaches 62, so yes, 2015 is the tallest."
    )
    assert yes_no(answer, "According to the chart, is the tallest bar the one for 2015?") == "yes"


def test_two_coded_readings_commit_to_neither_and_a_final_reading_settles() -> None:
    question = "what is the gate number?"
    assert not substring_match("The gate number is B12 or B17; the last digit is hidden.", ["B12"])
    answer = 'It could be read as "Blown" or "Broom", but the strokes differ. Final reading: Bloom'
    assert stated_answer(answer) == "Bloom"
    assert substring_match(answer, ["Bloom"], question=question)


@pytest.mark.parametrize(
    ("critique", "verdict"),
    [
        ("Both are good. I would choose Response 1 or Response 2.", None),
        ("I choose Response 1 or 2.", None),
        ("I would go with the first response or the second.", None),
        ("I would choose Response 2.", "2"),
    ],
)
def test_choosing_one_response_or_the_other_chooses_neither(critique, verdict) -> None:
    assert parse_judgement(critique).choice == verdict


def test_a_critic_finding_one_response_more_convincing_prefers_it() -> None:
    answer = (
        "I find Response 1 more convincing: it reads the axis in millions, Response 2 does not."
    )
    assert parse_judgement(answer).choice == "1"


@pytest.mark.parametrize(
    ("response", "question", "answer"),
    [
        # a past tense no verb list names makes a sentence, whose count is the answer
        (
            "Group A smoked 20 cigarettes per day.",
            "How many cigarettes per day did group A smoke?",
            "20",
        ),
        (
            "Plant B produced 340 units in March.",
            "How many units did plant B produce in March?",
            "340",
        ),
        # a leading phrase that counts the set the answer is taken from
        (
            "Of the 6 samples listed, the one asked about weighs 0.58 g.",
            "What is the weight of the sample?",
            "0.58 g",
        ),
        (
            "Out of the 4 answer options, 'Strongly agree' received 44%.",
            "What is the percentage for 'Strongly agree'?",
            "44%",
        ),
        # a correction that concludes on a bare value
        (
            "11/30/83. Correction: the year is 93, so 11/30/93.",
            "What is the expiration date?",
            "11/30/93",
        ),
        # another language's copula and article before the answer
        (
            "La fecha de la carta es el 15 de septiembre de 1971.",
            "What is the date of the letter?",
            "15 de septiembre de 1971",
        ),
        ("Le destinataire est le Dr. S. Green.", "Who is the addressee?", "Dr. S. Green"),
        # a telephone number with its area code in brackets inside a Korean sentence
        ("전화번호는 (336) 741-5000입니다.", "What is the phone number?", "(336) 741-5000"),
    ],
)
def test_a_document_answer_is_read_past_counts_corrections_and_other_languages(
    response: str, question: str, answer: str
) -> None:
    assert text_answer(response, question) == answer


def test_saying_the_image_is_too_unclear_to_answer_is_no_yes_or_no() -> None:
    question = "According to the chart, did Germany win the most medals?"
    for answer in (
        "I'm sorry, but the chart is not clear enough for me to answer this question.",
        "The labels are too blurry to read.",
    ):
        assert yes_no(answer, question) == "unclear"


def test_a_count_of_features_beside_a_reading_is_not_the_reading() -> None:
    answer = (
        "It's not Adidas, since there are no three stripes. It isn't Puma either; there's no cat "
        "logo. The swoosh and the text show it's Nike."
    )
    assert substring_match(answer, ["nike"], question="what is the brand on the shoe?")
    question = "How many hours of sleep are recommended for teens?"
    assert substring_match("8-10 hours", ["8-10"], question=question)


def test_a_value_followed_by_what_it_is_is_the_value_not_a_count_in_brackets() -> None:
    answer = "The mode is 37, the size with the highest frequency (7 students)."
    assert math_equal(answer, "37")
    assert not math_equal(answer, "7")


def test_a_critic_giving_the_more_accurate_answer_prefers_it_but_not_on_one_criterion() -> None:
    answer = (
        "Response 1 identifies the animal as a red panda, while Response 2 mistakes it for a "
        "raccoon. Therefore, Response 1 provides the more accurate and helpful answer."
    )
    assert parse_judgement(answer).choice == "1"
    answer = "Response 1 names the breed, but Response 2 gives a more accurate description."
    assert parse_judgement(answer).choice is None


def test_a_closing_letter_after_a_count_of_other_things_is_the_pick() -> None:
    options = ["Anther", "Petal", "Ovary", "Sepal", "Stigma"]
    answer = (
        "The video shows 5 petals being removed first, and the part that develops into the fruit "
        "is the ovary, C."
    )
    assert read_choice(answer, option_letters(5), options).letter == "C"


def test_a_walk_through_the_options_cut_off_at_the_next_option_picks_none() -> None:
    options = ["PEST analysis", "SWOT analysis", "Porter's Five Forces", "BCG matrix"]
    answer = (
        "Let's look at the options:\n\n1. **PEST analysis** covers political, economic, social "
        "and technological factors.\n2. **SWOT analysis**"
    )
    assert read_choice(answer, option_letters(4), options).letter is None


def test_an_article_before_an_options_text_is_no_letter() -> None:
    options = ["solar eclipse", "lunar eclipse"]
    assert read_choice("A lunar eclipse.", option_letters(2), options).letter == "B"
    assert read_choice("An adult.", option_letters(3), ["egg", "adult", "pupa"]).letter == "B"
    assert read_choice("A. lunar eclipse", option_letters(2), options).letter is None


def test_a_conclusion_that_is_only_a_letter_is_the_pick() -> None:
    answer = "B. Hmm, the sign is round rather than square, so C."
    assert read_choice(answer, option_letters(4)).letter == "C"


def test_a_response_named_before_better_at_its_clauses_end_is_preferred() -> None:
    answer = "Response 1 reads the chart more carefully and is therefore better."
    assert parse_judgement(answer).choice == "1"
    answer = "After weighing both, Response 1 answers the question better: it names the year."
    assert parse_judgement(answer).choice == "1"
    answer = "Response 1 explains the trend better, but Response 2 gets the value right."
    assert parse_judgement(answer).choice is None
    assert parse_judgement("Response 2 does not handle the question better.").choice is None


def test_a_count_of_other_things_beside_a_document_answer_is_not_it() -> None:
    question = "What is the shipping charge?"
    answer = "The form lists 5 line items, and the shipping charge is $18.25."
    assert text_answer(answer, question) == "$18.25"
    answer = "The memo has 3 attachments and the sender is Paul Gray."
    assert text_answer(answer, "Who is the sender of the memo?") == "Paul Gray"


def test_a_part_counted_in_a_later_clause_is_the_count_asked_for() -> None:
    question = "In how many months did rainfall exceed 80 mm?"
    answer = "The table covers 12 months, and rainfall topped 80 mm in 4 of them."
    assert relaxed_match(answer, "4", question=question)
    assert not relaxed_match(answer, "12", question=question)


def test_a_result_of_listed_values_is_the_answer() -> None:
    question = "What is the sum of the three bars?"
    answer = "The three bars read 12, 18, and 20, so the sum is 50."
    assert relaxed_match(answer, "50", question=question)
    question = "What is the sum of the two largest shares?"
    answer = "The two largest shares are 31% and 24%, which add up to 55, per the legend."
    assert numeric_match(answer, "55", question=question)


def test_an_approximation_with_a_decimal_comma_is_the_value() -> None:
    assert math_equal("Der Flächeninhalt beträgt 3 · 4,5 ≈ 13,5.", "13.5")
    assert not math_equal("Der Flächeninhalt beträgt 3 · 4,5 ≈ 13,5.", "135")


def test_yes_or_no_after_weighing_both_is_the_concluded_one_and_either_is_neither() -> None:
    question = "Is the angle 25 degrees?"
    answer = "Could it be 20? No, the marks rule that out. 30? Also no. The scale shows 25, so yes."
    assert yes_no(answer, question) == "yes"
    answer = "It might be either: the photo is dark, and the cup may be on the left or the right."
    assert yes_no(answer, "Is the cup on the left?") == "unclear"


def test_a_date_after_its_verb_in_another_language_is_the_date() -> None:
    question = "What is the date of the letter?"
    assert text_answer("La lettre est datée du 3 mars 1987.", question) == "3 mars 1987"
    answer = "El informe está fechado el 5 de mayo de 1990."
    assert text_answer(answer, question) == "5 de mayo de 1990"


def test_a_how_many_question_with_its_own_verb_is_answered_by_the_count() -> None:
    answer = "Four regions exceed 30%: north, south, east and west."
    assert relaxed_match(answer, "4", question="How many regions exceed 30%?")
    assert not relaxed_match(answer, "30", question="How many regions exceed 30%?")


def test_the_base_of_a_rate_is_no_value() -> None:
    assert relaxed_match("Roughly 25 per 100,000 people.", "24.5", question="What was the rate?")
    assert not relaxed_match("Roughly 25 per 100,000 people.", "100000")


def test_a_quoted_name_with_its_title_is_the_name_asked_for() -> None:
    answer = 'The letter is signed "Mary T. Lowe, Director of Research."'
    assert text_answer(answer, "What name is at the bottom of the letter?") == "Mary T. Lowe"


def test_a_document_answer_after_an_apology_or_a_correction_in_words_is_read() -> None:
    question = "What is the name of the publisher?"
    assert text_answer("Apologies for the confusion. The publisher is Harbor Books.", question) == (
        "Harbor Books"
    )
    answer = "Lumina. Let me correct that: the product name is Lumena."
    assert text_answer(answer, "What is the product name?") == "Lumena"
    answer = "C-4410. Hmm, the 0 might be a 6, so C-4416. I'll go with C-4416."
    assert text_answer(answer, "What is the code?") == "C-4416"


def test_a_count_stated_in_another_languages_past_is_the_number() -> None:
    question = "How many people were interviewed?"
    assert text_answer("Fueron entrevistadas 48 personas.", question) == "48"
    assert text_answer("Foram avaliados 15 pacientes.", "How many patients were seen?") == "15"


def test_a_letter_after_a_cjk_sentence_is_the_pick() -> None:
    assert read_choice("右側の信号は赤です。B", option_letters(3)).letter == "B"


@pytest.mark.parametrize(
    ("answer", "letter"),
    [
        ("沿虚线剪开无法得到的图形是A。", "A"),  # the letter closes a Chinese sentence
        ("正确的选项是C", "C"),
        ("정답은 D입니다.", "D"),  # a word that closes a stated answer follows it
        ("答えはBです。", "B"),
    ],
)
def test_a_letter_inside_a_sentence_no_space_delimits_is_the_pick(answer, letter) -> None:
    letters = option_letters(5)
    assert read_choice(answer, letters, letters).letter == letter


def test_ending_between_two_letters_picks_none_but_weighing_them_first_does_not() -> None:
    letters = option_letters(4)
    assert read_choice("The value is near 7, so it's between B and C.", letters).letter is None
    answer = "Between B and C, only C fits the graph. Therefore, C."
    assert read_choice(answer, letters).letter == "C"


def test_an_explanation_after_the_value_is_not_the_value() -> None:
    answer = "Each side is 4 cm, as the frame in the figure is made of 9 equal rods."
    assert math_equal(answer, "4")
    assert not math_equal(answer, "9")


def test_two_option_texts_joined_by_or_a_are_a_hedge() -> None:
    options = ["Major third", "Perfect fourth", "Perfect fifth", "Minor sixth"]
    answer = "It is a major third or a minor sixth, depending on the key."
    assert read_choice(answer, option_letters(4), options).letter is None


def test_a_critic_calling_it_a_tie_gives_no_verdict() -> None:
    answer = "Response 2 is clearer, but Response 1 is more accurate, so I'd call it a tie."
    assert parse_judgement(answer).choice is None


def test_an_ocr_reading_holds_the_target_as_a_word_not_inside_a_longer_one() -> None:
    assert not substring_match("Sunsets", ["sunset"])
    assert substring_match("SUNSET!", ["sunset"])
    assert substring_match("sunset boulevard", ["sunset"])
    assert substring_match("北京市", ["北京"])


def test_a_ratio_written_with_a_colon_ends_no_clause() -> None:
    answer = "The biggest slice is 36% and the smallest 9%, so the ratio is 36 : 9 = 4."
    assert relaxed_match(answer, "4", question="What is the ratio of the biggest to the smallest?")
    assert not relaxed_match(answer, "36")


def test_a_count_of_things_loses_to_a_value_told_in_a_with_clause() -> None:
    answer = "The chart covers 8 regions; the highest bar is Asia, with a value of 7.2."
    assert relaxed_match(answer, "7.2", question="What is the value of the highest bar?")
    assert not relaxed_match(answer, "8", question="What is the value of the highest bar?")


def test_a_participle_clause_after_the_value_is_context() -> None:
    answer = "The total is 34, taking the four circled numbers on the left."
    assert math_equal(answer, "34")
    assert not math_equal(answer, "4")


def test_a_critic_rating_one_response_higher_prefers_it() -> None:
    answer = "Both are fluent, but Response 2 cites the chart correctly. I rate Response 2 higher."
    assert parse_judgement(answer).choice == "2"


def test_a_value_taken_back_after_a_dash_and_no_is_not_the_answer() -> None:
    answer = "$450 — no, that is the deposit; the full price is $1,800."
    assert text_answer(answer, "What is the price?") == "$1,800"


def test_a_yes_no_answer_that_opens_one_way_and_concludes_the_other_is_the_conclusion() -> None:
    answer = "Yes. Hmm, comparing the two lines again, the blue one ends lower, so no."
    assert yes_no(answer) == "no"
    assert yes_no("No. Both bars are 40, so no other bar is taller.") == "no"


def test_two_readings_in_single_quotes_commit_to_neither() -> None:
    assert not substring_match(
        "It may say 'HOTEL' or 'MOTEL', the first letter is worn.", ["hotel"]
    )


def test_a_reading_settled_after_readings_set_aside_is_read() -> None:
    answer = "It might be 'CASTLE', but the second letter is an O. It might also be 'COSTLY', but "
    answer += "there is no Y. The sign says COSTLE."
    assert substring_match(answer, ["COSTLE"], question="what is written in the image?")


def test_walking_through_the_options_by_letter_ends_on_the_one_kept() -> None:
    options = ["Mitosis", "Meiosis", "Binary fission", "Budding"]
    answer = (
        "A: mitosis makes identical body cells. C: binary fission is for bacteria. D: budding is"
        " asexual. Halving the chromosomes for gametes fits B, meiosis."
    )
    assert read_choice(answer, option_letters(4), options).letter == "B"


def test_the_sentence_restating_the_question_in_another_form_of_its_word_answers() -> None:
    answer = (
        "The Treasury office is named beside the payment, but only as receiving it. The"
        " authorization came from the Budget Office."
    )
    assert text_answer(answer, "Which office authorized the payment?") == "Budget Office"


def test_a_letter_before_an_ideographic_comma_is_the_pick() -> None:
    options = ["Ruby", "Pearl", "Opal", "Jade"]
    assert read_choice("A、ルビーです。", option_letters(4), options).letter == "A"


def test_a_closing_so_with_a_bare_value_is_that_value() -> None:
    answer = "March is low. June is high, but October is the peak of the year. So October."
    assert text_answer(answer, "Which month had the most visitors?") == "October"


def test_digits_that_end_a_label_are_no_quantity() -> None:
    answer = "Samsung held a 21.3% share in Q4, as shown on the fourth bar."
    assert relaxed_match(answer, "21.3", question="What was Samsung's share in Q4?")
    assert not relaxed_match(answer, "4", question="What was Samsung's share in Q4?")


def test_a_total_told_after_its_parts_is_the_value() -> None:
    answer = "The three hidden numbers are 2, 4 and 6, totaling 12."
    assert math_equal(answer, "12", question="What is the sum of the hidden numbers?")
    assert not math_equal(answer, "6", question="What is the sum of the hidden numbers?")


def test_the_subject_after_a_turn_is_the_one_named() -> None:
    answer = "Lamb fell. Beef rose a lot, but pork rose the most, so the largest rise is pork."
    assert not relaxed_match(answer, "Beef", question="Which meat rose the most?")


@pytest.mark.parametrize(
    ("response", "question", "gold"),
    [
        # a reason after "as" is not the answer
        (
            "The mode is 8, as it appears three times in the 'Number of pets' column.",
            "What is the mode of the numbers?",
            "8",
        ),
        # a participle saying what was counted, under another name than the question's
        (
            "4, counting the vehicles stopped in the two lanes before the stop line.",
            "How many cars are waiting at the red light?",
            "4",
        ),
        # a comparative after the counted noun: the noun is "points", not "higher"
        (
            "In 2017 the rating was 64%, and in 2020 it was 42%. That's a gap of 22 percentage "
            "points.",
            "How many percentage points higher was the rating in 2017 than in 2020?",
            "22",
        ),
        # a phrase after several values sums them up; "Spending" is the subject, not a gerund
        (
            "Spending rose from $618 billion in 2015 to $760 billion in 2020, an increase of $142 "
            "billion.",
            "By how much did spending increase from 2015 to 2020, in billions?",
            "142",
        ),
        # a phrase after one value says what it is
        ("The total is 37, a rise of 5 from last year.", "What is the total?", "37"),
        # the part of the things counted, under another name, that the question asks about
        (
            "There are 5 people visible in total, and 2 of them are on the right sidewalk.",
            "How many pedestrians are on the sidewalk to the right?",
            "2",
        ),
    ],
)
def test_a_value_beside_the_answer_is_not_read_for_it(
    response: str, question: str, gold: str
) -> None:
    assert numeric_match(response, gold, question=question)
    assert relaxed_match(response, gold, question=question)


def test_two_bold_readings_joined_by_or_are_a_hedge() -> None:
    question = "Which age group has the lowest share?"
    hedged = "The lowest share is in the **50-64** or the **65+** group; the bars are close."
    assert not relaxed_match(hedged, "65+", question=question)
    assert not relaxed_match(hedged, "50-64", question=question)
    assert relaxed_match("The lowest share is in the **65+** group.", "65+", question=question)


def test_a_label_is_read_after_the_words_naming_its_kind() -> None:
    question = "Which age group is most likely to use TikTok?"
    said = "Adults ages 18-29 are the most likely to use TikTok, at 62%."
    assert relaxed_match(said, "18-29", question=question)
    assert not relaxed_match("Adults ages 30-49 are the most likely.", "18-29", question=question)
    assert not relaxed_match("Not 18-29.", "18-29", question=question)


def test_a_closing_pronoun_clause_restating_the_question_is_not_the_answer() -> None:
    said = "The 'From' line shows J. T. Winebrenner, so he's the sender."
    assert text_answer(said, "Who is the sender of the memo?") == "J. T. Winebrenner"
    # a closing clause that adds more than the question asked stays part of the reading
    kept = "The 'From' line shows J. T. Winebrenner, so he's the one who wrote the report."
    assert text_answer(kept, "Who is the sender of the memo?") != "J. T. Winebrenner"


@pytest.mark.parametrize(
    "said",
    [
        "La lettre est adressée à Mr. Harold Turner.",
        "La carta está dirigida a Mr. Harold Turner.",
        "A carta é endereçada a Mr. Harold Turner.",
        "The letter is addressed to Mr. Harold Turner.",
    ],
)
def test_a_passive_before_the_name_is_passed_in_every_language(said: str) -> None:
    assert text_answer(said, "Who is the recipient of the letter?") == "Mr. Harold Turner"


def test_a_root_in_the_gold_is_part_of_its_value() -> None:
    assert not math_equal("6", "6√3")
    assert math_equal("6√3", "6√3")
    assert math_equal("The longer leg is √108.", "6√3")


def test_a_refusal_in_a_contraction_picks_no_option() -> None:
    refusal = (
        "I'm not able to provide a medical diagnosis from this image. Please consult a doctor."
    )
    assert read_choice(refusal, ["A", "B"], ["yes", "no"]).letter is None
    assert yes_no(refusal) not in ("yes", "no")


def test_reasoning_cut_off_at_a_clause_subject_picks_nothing() -> None:
    cut = (
        "Comparing the images: the reference shows a white kitten on a blue blanket. The second "
        "image shows a white kitten lying on a blue blanket, and the third image shows"
    )
    assert read_choice(cut, ["A", "B"], ["the second image", "the third image"]).letter is None


def test_a_revised_verdict_naming_the_better_response_is_the_verdict() -> None:
    critique = (
        "Response 1 is better. Hmm, wait — Response 2 also mentions the umbrella, which "
        "Response 1 leaves out. So Response 2 is more complete and is the better response."
    )
    assert parse_judgement(critique).choice == "2"


@pytest.mark.parametrize(
    ("said", "question", "answer"),
    [
        # a month before a year is part of the date
        ("The survey began in March 1976.", "When did the survey begin?", "March 1976"),
        # "percent" written out stays with its number, as a unit does
        ("The approval rate was 48 percent.", "What was the approval rate?", "48 percent"),
        # an irregular participle before its preposition is a passive too
        (
            "The refund was paid to Ms. Carla Duvall.",
            "Who received the refund?",
            "Ms. Carla Duvall",
        ),
        ("Der Bericht heißt Jahresbilanz.", "What is the title of the report?", "Jahresbilanz"),
        # a closing pronoun clause is no conclusion holding the answer
        (
            "Ruth Abel is named as a reviewer. The signature belongs to Paul Grady, so he is "
            "the author.",
            "Who is the author of the memo?",
            "Paul Grady",
        ),
        # the lower-case noun after a name says what the name is of
        (
            "The conference was held at the Palmer House hotel.",
            "What is the name of the hotel?",
            "Palmer House",
        ),
    ],
)
def test_the_span_is_the_value_the_sentence_states(said: str, question: str, answer: str) -> None:
    assert text_answer(said, question) == answer


def test_a_noun_that_is_part_of_the_name_stays() -> None:
    question = "What is the name of the hotel?"
    assert text_answer("The dinner was at the Grand Hotel.", question) == "Grand Hotel"


def test_a_rounded_result_after_an_equation_is_the_answer() -> None:
    question = "What is the shaded area, to the nearest whole number?"
    said = "Shaded area = 36 − 9π ≈ 7.73, which rounds to 8."
    assert math_equal(said, "8", question)
    assert not math_equal("Shaded area = 36 − 9π ≈ 7.73.", "8", question)


def test_a_second_statement_naming_what_is_asked_is_the_answer() -> None:
    question = "What is the volume of the cube?"
    said = "Each edge is 3 cm, so the edge of the cube is 3 and its volume is 27."
    assert math_equal(said, "27", question)
    assert not math_equal(said, "3", question)


def test_a_root_in_the_span_keeps_the_whole_answer_from_being_read_as_a_number() -> None:
    question = "Find the length of the hypotenuse EF."
    said = "In right triangle DEF, angle D = 45°, so EF = 10 / (√2/2) = 10√2 ≈ 14.1."
    assert not math_equal(said, "10", question)
    assert math_equal(said, "10√2", question)
    assert math_equal("The diagonal BD = 5√2.", "5√2", question)


def test_a_conclusion_after_two_readings_settles_the_word() -> None:
    said = (
        'The third letter could be an a or an o. "Boat" fits the picture of the harbour better '
        'than "Beat". So the word is Boat.'
    )
    assert substring_match(said, ["Boat"])
    assert not substring_match(
        'The third letter could be an a or an o: "Boat" or "Beat".', ["Boat"]
    )


def test_a_dash_after_an_option_opens_its_explanation() -> None:
    options = ["algae", "shrimp", "seal", "shark"]
    said = "Shark — it eats the seal, which eats shrimp."
    assert read_choice(said, option_letters(4), options).letter == "D"


@pytest.mark.parametrize(
    ("response", "question", "gold", "right"),
    [
        # a loop cut off mid-repeat says what it repeats
        ("The value for Brazil is 15.6. " * 3 + "The value for Brazil is", "Brazil?", "15.6", True),
        # a template said once is no loop: cut off in its second step, it answers nothing
        (
            "Step 1: Point A is 12. It lies on the wall.\nStep 2: Point B is 15. It lies on the",
            "What is the value at point B?",
            "15",
            False,
        ),
        ("The value for Brazil is", "What is the value for Brazil?", "15.6", False),
        ("Probably 45, but possibly 54 — the label is faint.", "Purple?", "45", False),
        ("Der Anteil im Jahr 2012 betrug 14,2 Prozent.", "Share in 2012?", "14.2", True),
        ("The green line represents men.", "What does the green line represent?", "Men", True),
        ("The sign says Exit.", "What does the sign say?", "Exit", True),
    ],
)
def test_a_chart_answer_reads_loops_hedges_decimal_commas_and_the_asked_verb(
    response: str, question: str, gold: str, right: bool
) -> None:
    assert relaxed_match(response, gold, question=question) is right


def test_a_name_stated_before_a_dated_participle_is_the_answer() -> None:
    meeting = "The meeting is the Annual Scientific Advisory Board Meeting, held on June 3-4."
    assert text_answer(meeting, "What is the name of the meeting?") == (
        "Annual Scientific Advisory Board Meeting"
    )
    assert text_answer("The date is given in the header, dated June 3.", "What is the date?") == (
        "June 3"
    )


def test_an_equation_the_question_gives_is_not_the_answer_it_asks_for() -> None:
    question = "The figure shows the graph of f(x) = 3sin(2x). What is the period of f(x)?"
    answer = (
        "Sorry, it is blurry, but from the given equation f(x) = 3sin(2x), the period is 2π/2 = π."
    )
    assert math_equal(answer, "π", question)
    assert not math_equal(answer.replace("= π", "= 2π"), "π", question)


def test_the_asked_part_of_a_count_is_the_answer_beside_the_total() -> None:
    said = "There are 6 cars in total, and 2 of them are red."
    assert numeric_match(said, "2", question="How many of the cars are red?")
    assert not numeric_match(said, "6", question="How many of the cars are red?")


def test_a_sentence_cut_off_after_the_answer_is_no_part_of_it() -> None:
    response = (
        "The principal investigator is Dr. Helen M. Carver. Her affiliation is listed as the "
        "Department of Medicine at the University of"
    )
    question = "What is the name of the principal investigator?"
    assert text_answer(response, question) == "Dr. Helen M. Carver"


@pytest.mark.parametrize(
    "response",
    [
        "The badge reads Ellen Marsh. On closer inspection,",
        "The fax is addressed to Dr. Marsh. Correction: on second look,",
        "The letter is signed by Thomas Gray. Actually,",
    ],
)
def test_an_answer_cut_off_as_it_corrects_itself_states_nothing(response) -> None:
    assert text_answer(response, "Who is named?") == ""
    finished = response + " it is Ellen Marsh."
    assert text_answer(finished, "Who is named?") == "Ellen Marsh"


@pytest.mark.parametrize(
    "response",
    ["2016, with sales of 3.2 million units.", "2016 — with sales of 3.2 million units."],
)
def test_a_year_named_before_the_figure_beside_it_is_the_answer(response) -> None:
    question = "In which year did sales peak?"
    assert relaxed_match(response, "2016", question=question)
    assert not relaxed_match(response.replace("2016", "2015"), "2016", question=question)
    assert not relaxed_match("2016 or 2017, with sales of 3.2 million.", "2016", question=question)


@pytest.mark.parametrize(
    ("response", "question", "answer"),
    [
        ("The labels on both boxes say Acme Foods.", "What company is on the boxes?", "Acme Foods"),
        ("The letterhead reads Liggett Group Inc. — no, actually, looking again, the logo and "
         "text at the top say Lorillard Corporation.", "Which company's name appears in the "
         "letterhead?", "Lorillard Corporation"),
        ("The two stamps show Dec 3, 1979.", "What date is stamped?", "Dec 3, 1979"),
    ],
)  # fmt: skip
def test_what_plural_things_say_or_show_is_the_answer(response, question, answer) -> None:
    assert text_answer(response, question) == answer


def test_a_plural_that_adds_no_ending_names_the_same_thing() -> None:
    assert same_words("The mitochondria", "Mitochondrion")
    assert same_words("nuclei", "Nucleus")
    assert same_words("bacterium", "bacteria")
    assert not same_words("the bus", "bi")
    assert not same_words("mitochondria", "Chloroplast")


def test_actually_no_takes_back_the_answer_before_it() -> None:
    question = "Which brand has the largest share?"
    response = (
        "Apple has the largest share. Actually no — the purple segment labelled Samsung is "
        "slightly bigger, so Samsung."
    )
    assert relaxed_match(response, "Samsung", question=question)
    assert not relaxed_match(response, "Apple", question=question)
    assert relaxed_match("The value is 10. Actually, no, it is 12.", "12", question="Value?")
    assert not relaxed_match("The value is 10. Actually, no, it is 12.", "10", question="Value?")
    # doubt after an answer takes nothing back; a yes/no question's "Actually no" answers no
    doubt = "Food has the largest share at 34%. Hmm, actually, I am not entirely sure."
    assert relaxed_match(doubt, "Food", question="Which category has the largest share?")
    turned = "Yes. Actually no, it is rectangular and white, a speed limit"
    assert yes_no(turned, "Is the sign on the right a yield sign?") == "no"


@pytest.mark.parametrize(
    "response",
    [
        "Point A is on the wheel. Point B is on the seat. Point C and Point D are both on the "
        "handlebar, like the reference, so it's one of those.",
        "C and D both fit, so it must be one of the two.",
    ],
)
def test_narrowing_to_one_of_two_options_picks_neither(response) -> None:
    options = ["Point A", "Point B", "Point C", "Point D"]
    assert read_choice(response, "ABCD", options).letter is None
    settled = response + " Looking closer, the circle sits on the grip, so D."
    assert read_choice(settled, "ABCD", options).letter == "D"


def test_what_an_answer_says_it_cannot_confirm_it_does_not_state() -> None:
    refusal = 'Sorry, I cannot confirm whether the word is "COFFEE" — the image is too blurry.'
    assert not substring_match(final_answer(refusal), ["coffee"])
    read_anyway = 'I cannot confirm whether the word is "COFFEE", but it reads COFFEE.'
    assert substring_match(final_answer(read_anyway), ["coffee"])


@pytest.mark.parametrize(
    ("options", "response", "settled"),
    [
        # a question back to the user
        (["The first lap.", "The sixth lap.", "The penultimate lap.", "The final lap."],
         "I'm unable to determine in which lap the winner took the lead, as the lap counter is "
         "not visible in the sampled frames. Could you provide more frames from the final laps?",
         "It is D, the final lap. Want more detail?"),
        # reasoning cut off at its result
        (["2 Ω", "4 Ω", "6 Ω", "8 Ω"],
         "The 6 Ω and 3 Ω resistors are in parallel: 6·3/(6+3) = 2 Ω. This 2 Ω combination is "
         "in series with the 4 Ω resistor, giving",
         "With the 2 Ω lead in series as well, the total is 2 + 4 + 2 = 8 Ω: D."),
        # giving up on the comparison asked for
        (["The streetlight", "The tree", "The traffic light", "The building"],
         "The streetlight is about 8 m. The tree reaches roughly the same height. The building "
         "extends beyond the top of the frame, but perspective makes heights hard to compare.",
         "The building extends beyond the frame, so it is the tallest: D."),
    ],
)  # fmt: skip
def test_an_answer_that_gives_up_or_stops_short_picks_no_option(options, response, settled):
    assert read_choice(response, "ABCD", options).letter is None
    assert read_choice(settled, "ABCD", options).letter == "D"


@pytest.mark.parametrize(
    ("response", "question", "answer"),
    [
        ("Box 7 contains the code A7-X.", "What is the code entered in box 7?", "A7-X"),
        ("NCI stands for the National Cancer Institute.", "What does NCI stand for?",
         "National Cancer Institute"),
        ("CTR stands for Council for Tobacco Research. No wait, it's Center for Tobacco "
         "Research.", "What does CTR stand for?", "Center for Tobacco Research"),
        ("### Title\nPer Capita Consumption, 1950–1985", "What is the title of the graph?",
         "Per Capita Consumption, 1950–1985"),
        ("Distribution list (first entry): B. Bouton", "What is the first name on the "
         "distribution list?", "B. Bouton"),
        ("The 2-page letter, dated 1982, is signed by Harold T. Baker.",
         "Who signed the letter?", "Harold T. Baker"),
        ("The sender is therefore the signatory, Robert Klein.", "Who is the sender of the memo?",
         "Robert Klein"),
        ("Das Datum des Briefes ist der 3. Februar 1982.", "What is the date of the letter?",
         "3. Februar 1982"),
    ],
)  # fmt: skip
def test_a_document_answer_is_read_past_the_words_around_it(response, question, answer) -> None:
    assert text_answer(response, question) == answer


def test_a_labelled_option_in_an_answer_cut_off_later_is_its_pick() -> None:
    options = ["A-B-D-F", "A-C-E-F", "A-B-E-F", "A-C-D-F"]
    response = (
        "The critical path is A-B-D-F (option A), with a total duration of 18 days. Path "
        "A-C-E-F takes 15 days, path A-B-E-F takes 16 days, and path"
    )
    assert read_choice(response, "ABCD", options).letter == "A"


@pytest.mark.parametrize(
    ("response", "question", "gold", "stated"),
    [
        ("The smallest segment is 'Other' at 7%. This is followed by 'Transport' at 11%, then "
         "'Housing' at", "What is the value of the smallest segment?", "7", True),
        ("The segments are 'Other' at 7%, 'Transport' at 11%, then 'Housing' at",
         "What is the value of the smallest segment?", "7", False),
        ("To find it, compare 'Other' at 7% and 'Transport' at 11%. The smallest is",
         "What is the value of the smallest segment?", "7", False),
        # taken back before the cut
        ("The approval rating in March was 62%. Wait, I think the label above that",
         "What was the approval rating in March?", "62", False),
        # a premise, not the answer
        ("The graph is made of cycles and every vertex has degree at most 3. Alternating two "
         "colors around the outer cycle works,", "For the graph shown, what is the chromatic "
         "number?", "3", False),
    ],
)  # fmt: skip
def test_a_value_stated_before_the_answer_is_cut_off_counts(response, question, gold, stated):
    assert relaxed_match(response, gold, question=question) is stated


def test_an_open_answer_counts_when_cut_off_after_it() -> None:
    worked = "Break-even units = 50,000 / (30 − 10) = 2,500 units."
    assert open_match(
        f"{worked}\n\nTo verify: at 2,500 units, revenue is $75,000 and cost is", "2500"
    )
    assert not open_match("Break-even units = 50,000 / (30 − 10) =", "2500")
    revised = "C_eq = 4 + 2 = 6 μF. Actually, the two capacitors are in series, so C_eq ="
    assert not open_match(revised, "6")
    assert not open_match("", "6")


def test_a_part_counted_before_its_whole_is_the_count() -> None:
    question = "How many bars have values larger than 40?"
    assert answer_span("3 of the 7 bars are above 40.", question) == "3"
    assert answer_span("There are 7 bars, and 3 of them are above 40.", question) == "3"


def test_formula_options_are_told_apart_by_their_signs() -> None:
    options = ["$y=x^2-1$", "$y=-x^2+1$", "$y=(x-1)^2$", "$y=x^2+1$", "$y=-(x+1)^2$"]
    concluded = (
        "The parabola opens downward with its vertex at (0, 1), so the function is $y=-x^2+1$."
    )
    assert read_choice(final_answer(concluded), "ABCDE", options).letter == "B"
    assert read_choice("y = -x^2 + 1", "ABCDE", options).letter == "B"
    assert read_choice("The answer is y=x^2+1.", "ABCDE", options).letter == "D"


def test_where_a_value_was_read_off_is_no_part_of_it() -> None:
    said = "a + b = 10, reading the intercepts (0, 4) and (6, 0) off the axes in the picture."
    assert math_equal(said, "10", "What is $a+b$?")
    assert not math_equal(said, "4", "What is $a+b$?")


def test_a_closing_paragraph_that_checks_or_adds_is_no_answer() -> None:
    question = "Find the volume of the cylinder."
    said = (
        "V = πr²h = π × 3² × 5 = 45π.\n\nFor reference, the lateral surface area is 30π and the "
        "total surface area is 48π."
    )
    assert math_equal(said, "45π", question)
    assert not math_equal(said, "48π", question)
    assert answer_span("The mean is 5.\n\nCheck: 4 + 5 + 6 = 15", "What is the mean?") == "5"


@pytest.mark.parametrize(
    ("response", "question", "value"),
    [
        ("Among the 5 age groups shown, adults aged 65+ have the lowest rate: 45%.",
         "What percentage of adults aged 65+ use social media?", "45%"),
        ("Angle 2 measures forty-five degrees.", "What is the measure of angle 2?", "45 degrees"),
        ("The slope is 2, computed from the points (0, 3) and (2, 7).",
         "What is the slope through (0, 3) and (2, 7)?", "2"),
    ],
)  # fmt: skip
def test_a_number_as_the_question_names_it_states_no_value(response, question, value) -> None:
    assert answer_span(response, question) == value


@pytest.mark.parametrize(
    "response",
    [
        "Lo siento, no puedo ver claramente el contenido de la copa.",
        "Désolé, je ne peux pas voir l'image.",
        "Ich kann den Inhalt des Glases nicht erkennen.",
        "Desculpe, não consigo ver a imagem.",
        "Lo siento, no puedo responder sin ver el gráfico al que te refieres.",
        "Je ne peux pas répondre sans voir le graphique.",
        "Ich kann die Frage ohne das Diagramm nicht beantworten.",
    ],
)
def test_a_refusal_in_another_language_answers_neither_yes_nor_no(response) -> None:
    assert yes_no(response, "Is the glass full of red wine?") == "unclear"
    assert yes_no("No, la copa está vacía.", "Is the glass full of red wine?") == "no"


def test_the_words_of_a_refusal_are_no_reading() -> None:
    assert not substring_match("I am unable to read the handwriting in this image.", ["unable"])
    assert not substring_match("Sorry, I can't make out the text in this image.", ["can"])
    assert substring_match("It says CAN.", ["can"])
    assert substring_match("COFFEE, though I am not sure.", ["coffee"])


@pytest.mark.parametrize(
    ("response", "question", "answer"),
    [
        ("The company name shown in the letterhead is Lorillard Corporation, and its address "
         "is 666 Fifth Ave", "What is the company name in the letterhead?",
         "Lorillard Corporation"),
        ('I apologize — the text is faint, but it appears to say "Quality Assurance '
         'Department".', "Which department issued the report?", "Quality Assurance Department"),
    ],
)  # fmt: skip
def test_a_named_answer_is_read_before_a_number_and_past_an_apology(response, question, answer):
    assert text_answer(response, question) == answer


def test_mathvista_reads_a_text_answer_from_its_sentence() -> None:
    row = {"pid": "1", "question": "Which country has the highest value in 2010?",
           "query": "Which country has the highest value in 2010?", "answer": "Germany",
           "question_type": "free_form", "answer_type": "text", "precision": None,
           "choices": None, "image": "x.png"}  # fmt: skip
    task = get_task("mathvista_testmini")
    said = "Germany has the highest value in 2010, at about 41%."
    assert task.score(said, task.problem(row)).score == 1.0
    assert task.score("France has the highest value.", task.problem(row)).score == 0.0


def test_a_value_concluded_before_the_cut_counts() -> None:
    question = "What is the mean of the values?"
    said = "The values are 3, 5 and 9. So the mean is 5.67. Next, the median of the"
    assert relaxed_match(said, "5.67", question=question)
    assert not relaxed_match(
        said.replace("So the mean", "Wait, the mean"), "5.67", question=question
    )


@pytest.mark.parametrize(
    "response",
    [
        "The best response is Response 2. It describes the cat as sleeping on the keyboard.",
        "Je préfère la deuxième réponse : elle identifie correctement le monument.",
        "<think>\nLet me count.\n</think>\n\n\\boxed{1}\n\nHmm, on second thought, Response 1 "
        "miscounts the stripes. So the final answer should be Response 2.",
    ],
)
def test_a_critic_verdict_is_read_as_the_best_the_final_or_a_preferred_place(response) -> None:
    assert parse_judgement(response).choice == "2"
    assert parse_judgement(response.replace("2", "1").replace("deuxième", "première")).choice == "1"


def test_a_heading_alone_is_read_without_its_marks() -> None:
    assert text_answer("## Summary of Test Results", "What is the heading?") == (
        "Summary of Test Results"
    )


def test_an_open_answer_offered_with_or_maybe_commits_to_neither() -> None:
    row = {"question": "What is the complexity?", "answer": "O(log n)", "choices": {},
           "question_type": "open-ended", "video": "v.mp4"}  # fmt: skip
    task = get_task("mmvu")
    hedged = "It's O(log n) or maybe O(n) in the worst case, depending on the implementation."
    assert task.score(hedged, task.problem(row)).score == 0.0
    assert task.score("It is O(log n) in the worst case.", task.problem(row)).score == 1.0


@pytest.mark.parametrize(
    ("answer", "question", "gold"),
    [
        (
            "Arc length = (120/360) × 2π × 3 = 2π.\n\nSo arc AB has length 2π. To double-check, "
            "the full circumference is 6π and one third of it is 2π, which",
            "Find the length of arc AB.",
            "2\\pi",
        ),
        (
            "Top: 13 + 18 = 31.\n\nSo the number at the top is 31. Checking the bottom row once "
            "more, 5 + 8 = 13 and 8 + 10 = 18, which",
            "What number goes at the top?",
            "31",
        ),
        (
            "The curve crosses the x-axis at x = −2, x = 0 and x = 3, so the function has 3 "
            "zeros. To double-check, the graph looks like a cubic, which",
            "How many zeros does the function have?",
            "3",
        ),
    ],
)
def test_a_conclusion_stands_when_the_check_after_it_is_cut_off(answer, question, gold) -> None:
    assert math_equal(answer, gold, question)
    wrong = str(int(float(gold)) + 1) if gold.isdigit() else "3\\pi"
    assert not math_equal(answer, wrong, question)
    assert not math_equal("So the number at the top is 31. Wait, the top one", "31", question)


def test_a_value_given_plus_or_minus_names_two_values() -> None:
    answer = "The slope is probably 2 or −2; I can't tell which way it tilts. So k = ±2."
    assert not math_equal(answer, "2", "Find the value of k.")
    assert math_equal("So x = ±3.", "\\pm 3", "Solve x^2 = 9.")


def test_a_chain_of_values_ends_on_its_value_and_a_lead_in_is_no_value() -> None:
    question = "Starting from 200 mg, how much remains after 18 hours?"
    chain = "After 18 hours (three half-lives): 200 → 100 → 50 → 25 mg remaining."
    assert mmvu_match(chain, "25 mg", question)  # the last mass it gives
    assert not mmvu_match(chain, "200 mg", question)
    rate = "What is its approximate annual growth rate?"
    assert numeric_match("Using the rule of 70: 70 / 35 ≈ 2% per year.", "2%", 2, question=rate)


@pytest.mark.parametrize(
    ("answer", "question", "expected"),
    [
        # a reading offered with a verb of seeming is the reading
        ("Sorry, the scan is blurry, but it appears to read Carol Dean.", "Who witnessed it?",
         "Carol Dean"),
        ("Apologies, the number is partly cut off, but it looks like F-2297.",
         "What is the file number?", "F-2297"),
        # a date with its day's ordinal ending is the date, not its year
        ("The meeting was held on June 3rd, 1991.", "When was the meeting held?", "June 3rd, 1991"),
        # a count of things the question does not ask for is context
        ("There are 3 sponsors listed; the main one is Philip Morris U.S.A.",
         "What is the name of the sponsor?", "Philip Morris U.S.A."),
        # a field's label in short form restates the question: "No." is "number"
        ("Invoice No. INV-08823", "What is the invoice number?", "INV-08823"),
        # a second reading offered after the first commits to neither
        ("The amount looks like $275.00, although it could also be read as $215.00.",
         "What is the handwritten amount?", ""),
    ],
)  # fmt: skip
def test_a_document_answer_is_read_past_what_only_frames_it(answer, question, expected) -> None:
    assert text_answer(answer, question) == expected


def test_how_many_still_reads_the_count_a_sponsor_question_passes_over() -> None:
    answer = "There are 3 sponsors listed; the main one is Philip Morris U.S.A."
    assert text_answer(answer, "How many sponsors are listed?") == "3"


@pytest.mark.parametrize(
    ("critique", "choice", "source"),
    [
        ("After careful comparison, I find the second response more faithful to the image.",
         "2", "phrase"),
        ("Either Response 1 or Response 2 could be considered better depending on whether "
         "detail or brevity is preferred.", None, None),
        ("<think>\nResponse 1 says 35°, Response 2 says 55°.\n</think>\n\nThe better response is "
         "Response 2. Wait, let me re-check: the figure marks 35°, so Response 1 is right.\n\n"
         "Final answer: \\boxed{1}", "1", "box"),
        ("<think>\nchecking\n</think>\n\nThe better response is Response 2.\n\n\\boxed{1}",
         None, None),
    ],
)  # fmt: skip
def test_a_verdict_by_place_a_hedge_and_a_revision_before_the_box(critique, choice, source):
    judgement = parse_judgement(critique)
    assert (judgement.choice, judgement.source) == (choice, source)


def test_how_many_more_asks_a_difference_not_a_count() -> None:
    answer = (
        "Sam sold 52 tickets and Dana sold 38, so Sam sold 14 more (a total of 90 between them)."
    )
    assert numeric_match(answer, "14", question="How many more tickets did Sam sell than Dana?")
    assert numeric_match("Sam sold 52 tickets.", "52", question="How many tickets did Sam sell?")


@pytest.mark.parametrize(
    ("answer", "question", "expected"),
    [
        # a bold answer offered with another commits to neither
        ("**T. S. Osdene**, or possibly H. Wakeham, who also signed.", "Who is the sender?", ""),
        # a loop of one line says it once
        ("Paul Nagel\n\nPaul Nagel\n\nPaul Nagel\n\nPaul Na", "Who is treasurer?", "Paul Nagel"),
        # a label line that walks through values is no dashed answer with a comment
        ("Let's check each year: 1980 — 1.2M, 1981 — 1.5M, 1982 — 1.4M. The highest is 1981.",
         "Which year had the highest sales?", "1981"),
        # a name with its function words, less the noun the question asks about
        ("The memo is from the Research and Development division.",
         "What is the name of the division?", "Research and Development"),
    ],
)  # fmt: skip
def test_a_document_answer_is_one_committed_reading(answer, question, expected) -> None:
    assert text_answer(answer, question) == expected


def test_a_closing_yes_or_no_settles_reasoning_through_other_cases() -> None:
    answer = (
        "Let's check. If the triangle were a right triangle, angle ABC would be 90°, but there is "
        "no right-angle mark. The tick marks show all three sides are equal, so every angle is "
        "60°. Yes."
    )
    assert yes_no(answer) == "yes"
    assert yes_no(answer.replace("Yes.", "No.")) == "no"


def test_options_weighed_without_settling_pick_none() -> None:
    answer = (
        "The side looks like it's labelled 4, which would give a perimeter of 16 (A). Option B "
        "(20) would need a side of 5. Without a clearer view, I can't pin down which option is "
        "intended."
    )
    assert read_choice(answer, option_letters(4), ["16", "20", "24", "32"]).letter is None


def test_a_boxed_verdict_revised_on_reflection_reads_the_words() -> None:
    critique = (
        "<think>\nfog or snow\n</think>\n\n\\boxed{1}\n\nOn reflection, the blur is fog, not snow. "
        "In conclusion, Response 2 is better."
    )
    assert (parse_judgement(critique).choice, parse_judgement(critique).source) == ("2", "phrase")


def test_a_pick_concluded_before_a_cut_off_check_stands() -> None:
    letters, options = option_letters(4), ["14", "15", "16", "17"]
    answer = (
        "Sorting the values: 11, 13, 15, 18, 21. The median is the middle value, 15, which "
        "corresponds to option B. To double-check, there are five values, so the third one is the "
        "median: 11, 13,"
    )
    assert read_choice(answer, letters, options).letter == "B"
    wait = "The median is 15, which corresponds to option B. Wait, I misread the table, so the"
    assert read_choice(wait, letters, options).letter is None
    cut = "Now this 6 Ω branch is in parallel with the"
    assert read_choice(cut, letters, options).letter is None


def test_probably_not_leans_no_even_when_it_wavers_after() -> None:
    answer = (
        "Probably not — I think Germany won in 2014, though Brazil hosted it, so it might be yes."
    )
    assert yes_no(answer) == "no"
    assert yes_no("Probably not.") == "no"
    assert yes_no("Not sure; it could be yes or no.") == "unclear"


def test_i_mislabeled_corrects_the_stated_answer() -> None:
    letters, options = option_letters(4), ["divergent", "convergent", "transform", "hotspot"]
    answer = "Final answer: B. Hmm, I mislabeled — divergent is A. Final: A"
    assert read_choice(final_answer(answer), letters, options).letter == "A"
    assert (
        read_choice(final_answer("Final answer: B. I missed nothing."), letters, options).letter
        == "B"
    )


def test_an_answer_cut_off_at_its_label_stands_on_what_it_worked_out() -> None:
    letters, options = option_letters(4), ["2:15", "2:30", "2:45", "3:00"]
    answer = "The clock shows 1:30. Adding 45 minutes gives 2:15. Answer:"
    assert read_choice(answer, letters, options).letter == "A"
    cut = "The clock shows 1:30. Adding 45 minutes gives 2:15. Wait, the minute hand is"
    assert read_choice(cut, letters, options).letter is None


def test_either_of_two_names_with_initials_commits_to_neither() -> None:
    question = 'What is the content in the "FROM:" field?'
    answer = "Either J. Hall or J. Hull — the vowel is unclear."
    assert not substring_match(answer, ["J. Hall"], question=question)
    assert substring_match("J. Hall. Or so the field reads.", ["J. Hall"], question=question)


def test_a_count_of_all_surveyed_before_the_share_is_context() -> None:
    question = "What percentage of respondents were 'Very satisfied'?"
    answer = "Out of 1,502 respondents surveyed, 23% said they were very satisfied."
    assert relaxed_match(answer, "23", question=question)
    assert not relaxed_match(answer, "1502", question=question)


def test_a_named_party_with_its_seats_states_the_party() -> None:
    question = "Which party won the most seats in 2015?"
    assert relaxed_match(
        "The Conservative party, with 330 seats.", "Conservative", question=question
    )
    assert not relaxed_match("The Labour party, with 232 seats.", "Conservative", question=question)


def test_a_closing_sentence_that_adds_a_value_for_reference_is_not_the_answer() -> None:
    from mmcritic.eval.answers import answer_span

    question = "Calculate the sensitivity of the screening test (in %)."
    added = "Sensitivity = 170 / (170 + 30) = 85%. For reference, specificity = 720 / 800 = 90%."
    assert answer_span(added, question) == "85%"
    # a closing sentence that states the value is the answer
    assert answer_span("Specificity = 720 / 800 = 90%. Sensitivity = 85%.", question) == "85%"


def test_an_answer_phrase_in_a_supposition_states_no_answer() -> None:
    from mmcritic.reading.final import final_answer

    supposed = (
        "The table lists Everest at 8,500 m and K2 at 8,611 m, which would mean the answer is "
        "no. However, Everest is the tallest mountain on Earth. Yes, Everest is taller than K2."
    )
    assert yes_no(final_answer(supposed), "Is Everest taller than K2?") == "yes"
    assert final_answer("If the answer is B, x = 3. The answer is C.") == "C"
    assert final_answer("The answer is C.") == "C"


def test_the_thing_after_than_is_not_the_one_picked() -> None:
    options = ["the dog", "the chair", "they are the same size", "cannot be determined"]
    assert read_choice("The chair is larger than the dog.", list("ABCD"), options).letter == "B"
    assert read_choice("The dog is smaller than the chair.", list("ABCD"), options).letter == "A"
    assert read_choice("More than 10", list("ABC"), ["5", "More than 10", "3"]).letter == "B"


def test_the_one_name_in_a_chinese_sentence_answers_which_beside_its_value() -> None:
    question = "Which country has the lowest share of renewable energy?"
    said = "根据图表，可再生能源占比最低的国家是 Poland，约为 11%。"
    assert text_answer(said, question) == "Poland"
    # a value question keeps the whole sentence's reading, not the name beside it
    assert text_answer("Poland 的占比约为 11%。", "What is Poland's share?") != "Poland"


def test_a_measure_a_thing_has_is_its_value() -> None:
    question = "What is the volume of the water in cm$^3$?"
    had = "Full volume = 90π cm³. Half full, so the water has volume 45π cm³ ≈ 141.4 cm³."
    assert math_equal(had, "45\\pi", question)
    assert not math_equal(had, "90\\pi", question)


def test_an_open_answer_is_read_without_a_value_added_for_reference() -> None:
    added = "Sensitivity = 170 / (170 + 30) = 85%. For reference, specificity = 720 / 800 = 90%."
    assert open_match(added, "85")
    assert not open_match(added, "90")


def test_a_value_is_no_option_whose_number_only_ends_in_its_digits() -> None:
    options = ["$1,200", "$1,210", "$1,100", "$1,221", "$1,020"]
    assert letter_score("The interest earned is $210.", "B", list("ABCDE"), options)[0] is None
    assert letter_score("The final amount is $1,210.", "B", list("ABCDE"), options) == ("B", 1.0)


def test_a_value_of_something_unasked_said_after_the_answer_is_not_the_answer() -> None:
    question = "In right triangle ABC, angle C = 90°, AC = 6, BC = 8, then the length of AB is ()"
    extra = "AB = √(6² + 8²) = √100 = 10. The perimeter of triangle ABC is 6 + 8 + 10 = 24."
    assert math_equal(extra, "10", question)
    assert answer_span(extra, question) == "10"
    speed = "So the total displacement is 36 m. The maximum speed reached is 8 m/s."
    asked = "What is the total displacement of the car in the first 6 seconds (in m)?"
    assert open_match(speed, "36", asked)
    assert not open_match(speed, "8", asked)
    # a later sentence that computes from the values read, or concludes, is the answer
    computed = "The top two bars are 48 and 46.\n48 + 46 = 94"
    assert relaxed_match(computed, "94", question="What's the total of the top two bars?")
    concluded = "The total is 45. So the average is 15."
    assert relaxed_match(concluded, "15", question="What is the total?")
    corrected = "The tallest bar is 87. No — actually, reading the label again, it's 78."
    assert relaxed_match(corrected, "78", question="What is the value of the tallest bar?")


def test_a_computation_said_to_come_to_about_a_value_states_that_value() -> None:
    question = "What is the ratio between the two largest segments?"
    assert relaxed_match(
        "The two largest segments are 36% and 28%. 36/28 ≈ 1.29.", "1.29", question=question
    )
    # the root's fraction is no computation from numbers alone: both sides are read
    rooted = "Area = (√3/4)(25) = 25√3/4 ≈ 10.83"
    assert math_equal(rooted, "\\frac{25\\sqrt{3}}{4}", "Find the area of the triangle.")


def test_a_letter_set_off_by_a_dash_opens_the_answer() -> None:
    options = ["Zero", "9.8 m/s² upward", "9.8 m/s² downward", "Increasing", "Equal to velocity"]
    dashed = (
        "**C** — gravity still acts at the top, so the acceleration is 9.8 m/s² downward even "
        "though the velocity is momentarily zero."
    )
    assert read_choice(dashed, list("ABCDE"), options).letter == "C"
    # the pronoun "I" before a dash is no option
    assert read_choice("I — think it is zero.", list("ABCDE"), options).letter == "A"


def test_no_and_a_dash_after_a_stated_answer_corrects_it() -> None:
    corrected = (
        "The answer is 9. No — 9 is the number of cells. Each path needs 3 right moves and 3 "
        "down moves, so the number of paths is C(6, 3) = 20."
    )
    assert open_match(final_answer(corrected), "20")
    assert not open_match(final_answer(corrected), "9")


def test_a_symbol_for_the_asked_quantity_states_it_before_an_unasked_one() -> None:
    question = "What is the relative risk of disease among exposed vs. unexposed individuals?"
    risk = "RR = 0.30 / 0.05 = 6.00\n\nThe attributable risk is 0.30 − 0.05 = 0.25."
    assert open_match(risk, "6", question)
    assert not open_match(risk, "0.25", question)
    moment = "What is the maximum bending moment in kN·m?"
    shear = "M_max = wL²/8 = 18 kN·m.\n\nThe maximum shear force is 12 kN, at the supports."
    assert open_match(shear, "18", moment)


def test_context_set_between_the_subject_and_its_verb_is_no_source_clause() -> None:
    question = "Which department issued the report?"
    enclosed = "The issuing department, printed under the title, is Research and Development."
    assert text_answer(enclosed, question) == "Research and Development"
    trailing = "Research and Development, printed under the title."
    assert text_answer(trailing, question) == "Research and Development"


def test_the_initials_of_the_asked_words_before_a_number_are_kept_with_it() -> None:
    question = "What is the serial number?"
    said = "My best reading of the serial number is SN 40287."
    assert text_answer(said, question, keep_asked_words=True) == "SN 40287"
    assert text_answer(said, question) == "40287"
    # capitals that are not the asked words' initials are not kept
    assert text_answer("The serial number is XY 40287.", question, keep_asked_words=True) == "40287"


def test_an_equation_solving_for_the_asked_symbol_states_it_over_the_clause_before() -> None:
    question = "The parabola $y=x^2-6x+k$ touches the $x$-axis at one point. What is $k$?"
    solved = "The parabola touches the x-axis once, so the discriminant is 0: 36 − 4k = 0, k = 9."
    assert answer_span(solved, question) == "9"
    # an equation used to explain a value stated first does not state the answer
    assert answer_span("It is 14π, using C = 2πr.", "What is the circumference?") == "14π"


def test_a_variable_keeps_its_power_where_a_unit_drops_it() -> None:
    question = "Find the expression of the quadratic function."
    expanded = "Therefore y = (x − 1)(x − 3) = x² − 4x + 3."
    assert math_equal(expanded, "y=x^2-4x+3", question)
    assert not math_equal(expanded, "y=x-4x+3", question)
    assert numeric_match("The area is 25.1 cm².", "25.1")


def test_a_decimal_offered_as_probably_one_of_two_is_a_hedge() -> None:
    question = "What is the difference between the highest and the lowest value?"
    hedged = (
        "The highest is 27.9 and the lowest is 14.5, so the difference is 13.4. Hmm, or 13.9 "
        "if the 2016 point is 14.0 — so probably 13.4 or 13.9."
    )
    assert not numeric_match(hedged, "13.4", 1, question)
    assert numeric_match("The highest is 27.9 and the lowest is 14.5, so 13.4.", "13.4", 1)


def test_an_option_it_cannot_be_is_rejected() -> None:
    options = ["Central Station.", "North Terminal.", "Harbor Station.", "Union Station."]
    ruled_out = (
        "The sign is partly hidden. It can't be North Terminal (B), since the visible word ends "
        "in 'Station'. So it's C, Harbor Station."
    )
    assert read_choice(ruled_out, list("ABCD"), options).letter == "C"
    assert read_choice("It is North Terminal (B).", list("ABCD"), options).letter == "B"


def test_an_answer_cut_off_as_it_repeats_itself_says_what_it_repeats() -> None:
    options = ["photosynthesis", "metamorphosis", "germination", "pollination"]
    loop = "The process is metamorphosis. " * 2 + "The process is metamor"
    assert read_choice(loop, list("ABCD"), options).letter == "B"


def test_a_check_cut_off_before_it_doubts_anything_leaves_the_answer_standing() -> None:
    question = (
        "The circle has radius 5 and the chord AB is at distance 3 from the centre. How long is AB?"
    )
    checked = (
        "Half of AB = √(5² − 3²) = 4, so AB = 8.\n\nLet me double-check with the diagram: the "
        "perpendicular from O bisects the chord, giving two right triangles with hypotenuse 5 and"
    )
    assert math_equal(checked, "8", question)
    lettered = "So the total is 4. The answer is C.\n\nLet me double-check the second equation: the"
    assert stated_answer(lettered) == "C"
    # a check that doubts revises what it checks: nothing stands
    doubting = (
        "The bars are 20, 25, 30, 35. Sum = 110. Average = 110 / 4 = 27.5. Let me double-check the "
        "third bar; it could be 32 instead of 30, in which case"
    )
    assert not relaxed_match(doubting, "27.5", question="What is the average of the bars?")
    assert stated_answer("The answer is C.\n\nLet me double-check whether it might be") is None
    # a whole check that corrects is a correction
    assert stated_answer("The answer is 9. Let me recheck: it's 20.") is None


def test_a_count_of_things_beside_a_read_number_is_not_the_reading() -> None:
    question = "what is the jersey number of the player on the left?"
    counted = "The player on the left wears number 23; there are 7 players visible in the image."
    assert not substring_match(counted, ["7"], question=question)
    assert substring_match(counted, ["23"], question=question)
    # a "how many" question reads the count
    assert substring_match("There are 7 players visible.", ["7"], question="how many players?")


def test_an_answer_quoting_the_claim_of_the_question_says_yes() -> None:
    question = "Does the sign in the image say 'STOP'?"
    quoted = 'I\'m sorry, the image is a bit blurry, but it looks like the sign does say "STOP".'
    assert yes_no(quoted, question) == "yes"
    # another quoted reading restates no claim, and a quoted "No" is no answer
    assert yes_no('It looks like the sign says "YIELD".', question) is None
    assert yes_no('The sign reads "No Parking".', "Is parking allowed here?") is None


def test_a_closing_value_of_something_else_counts_nothing() -> None:
    asked = "How many years had a share above 40 percent?"
    said = "3 years had a share above 40 percent; the highest share was 46.2%."
    assert relaxed_match(said, "3", question=asked)
    assert not relaxed_match(said, "46.2", question=asked)
    # a sum names the count it closes on
    squares = "The figure is a 4×4 grid of unit squares. How many squares of any size are in it?"
    summed = (
        "16 unit squares + 9 squares of size 2×2 + 4 squares of size 3×3 = 29. Wait, I forgot "
        "the whole 4×4 square itself, so the total is 30."
    )
    assert math_equal(summed, "30", squares)


def test_a_share_stated_as_the_subject_is_the_value() -> None:
    asked = "What share of Japan's population is projected to be aged 65 and over in 2050?"
    said = "About 37.7% of Japan's population is projected to be 65 or older in 2050."
    assert answer_span(said, asked) == "37.7%"
    assert relaxed_match(said, "37.7", question=asked)
    # a value after the verb that happens to be one the question gives is still the value
    sector = "The shaded sector is 1/6 of the circle of radius 6. What is its area?"
    assert math_equal("One sixth of 36π is 6π.", "6\\pi", sector)


def test_a_check_cut_off_after_a_count_leaves_the_count_standing() -> None:
    asked = "How many chairs are around the dining table?"
    said = (
        "There are 6 chairs around the dining table. Let me double-check by counting from the "
        "left: the first chair is at the head of the table, the second and third are along the "
        "near side, the fourth"
    )
    assert numeric_match(said, "6", question=asked)
    assert not numeric_match(said, "4", question=asked)


def test_a_letter_in_what_the_answer_cannot_tell_is_no_pick() -> None:
    layers = ["crust", "mantle", "outer core", "inner core"]
    letters = option_letters(4)
    untold = "Sorry, I can't read the labels clearly, so I can't tell which layer is marked D."
    assert read_choice(untold, letters, layers).letter is None
    assert read_choice("I can't tell for sure, but it is D.", letters, layers).letter == "D"
    hedged = "It's hard to tell whether x is 5 or 6, so the most likely answers are B and C."
    assert read_choice(hedged, letters, ["4", "5", "6", "8"]).letter is None


def test_a_pronoun_subject_names_no_answer() -> None:
    asked = "Who is the memorandum addressed to?"
    said = (
        'The memo is addressed to Dr. J. M. Haley — actually, no: Haley is listed on the "From" '
        "line. It is addressed to Dr. R. A. Fenton."
    )
    assert anls(text_answer(said, asked), ["Dr. R. A. Fenton"]) == 1.0
    which = "Which country has the highest share?"
    assert text_answer("Norway has the highest share, at 41%.", which) == "Norway"


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("The sign is for Route 135.", "35", False),  # another number, from its first digit
        ("The value for 2012 is 17.5.", "17", False),  # another value
        ("403120", "40312", True),  # one digit more at the end: OCRBench's containment
        ("The total is $1,250.00.", "$1,250", True),  # the same value
        ("The speed limit is 35 mph.", "35", True),
    ],
)
def test_a_number_is_held_from_its_first_digit_to_its_value(
    response: str, gold: str, expected: bool
) -> None:
    assert substring_match(response, [gold], question="What number is shown?") is expected


def test_an_answer_in_another_language_reads_through_its_conclusion() -> None:
    asked = "How many more books did Eva read than Dan?"
    said = "Eva a lu 9 livres et Dan en a lu 3, donc Eva a lu 6 livres de plus que Dan."
    assert math_equal(said, "6", asked)
    assert not math_equal(said, "9", asked)


def test_a_unit_after_a_number_leaves_nothing_open() -> None:
    assert not is_cut_off("I = V / R = 12 / 6 = 2 A")
    assert open_match("Total resistance = 6 Ω\nI = V / R = 12 / 6 = 2 A", "2")
    assert is_cut_off("The brightest bulb is a")


def test_a_computation_in_brackets_after_a_value_is_its_working() -> None:
    asked = "What is the patient's heart rate in beats per minute?"
    said = "A frequência cardíaca do paciente é de 72 batimentos por minuto (18 × 4)."
    assert numeric_match(said, "72", question=asked)
    assert math_equal("(2, -1)", "(2,-1)")  # a point, not a computation
    assert math_equal("The slope is (8 - 2) / (3 - 0)", "2")  # brackets inside the value
    assert math_equal("The perimeter is 2(2 + 3)", "10")


def test_a_step_by_step_explanation_after_the_answer_explains_it() -> None:
    asked = "What is the ratio of Apple's market share to Samsung's market share in Q3 2023?"
    said = (
        "The ratio is approximately 1.12.\n\nStep-by-step:\n1. Apple's share in Q3 2023 is "
        "23.6%.\n2. Samsung's share is 21.1%.\n3. Dividing 23.6 by 21.1 gives"
    )
    assert relaxed_match(said, "1.12", question=asked)
    worked = "Step-by-step:\n1. Apple's share is 23.6%.\n2. Samsung's is 21.1%.\n3. So it is 1.12."
    assert relaxed_match(worked, "1.12", question=asked)


def test_a_count_of_something_else_names_no_numeric_option() -> None:
    from mmcritic_dev.scorer_agreement import policy_score

    row = {
        "index": 29,
        "question": "How many wheels are visible on the vehicle?\nOptions: A: 2, B: 3, C: 4, D: 6",
        "answer": "A",
        "category": "fine-grained perception",
        "l2_category": "object counting",
    }
    assert policy_score("mmstar", row, "The motorcycle has 1 rider and 2 mirrors.") == 0.0
    assert policy_score("mmstar", row, "The motorcycle has 2 wheels.") == 1.0
    assert policy_score("mmstar", row, "I can see 2 of them, front and back.") == 1.0


def test_an_answer_supposed_in_a_relative_clause_is_not_stated() -> None:
    illusion = (
        "At first glance this looks like the classic Müller-Lyer illusion, where the answer "
        "would be yes. But measuring the shafts, the top line is longer.\n\nSo, **no**, they are "
        "not the same length."
    )
    assert yes_no(final_answer(illusion)) == "no"
    assert stated_answer("The lines differ, in which case the answer would be no. But") is None


def test_saying_there_is_no_figure_is_no_answer_no() -> None:
    refusal = (
        "I'm sorry, but there is no chart provided, so I can't determine when the unemployment "
        "rate peaked based on a figure."
    )
    assert yes_no(refusal) == "unclear"
    assert yes_no("There is no chart provided, but from what is known, yes, it peaked.") == "yes"


def test_a_root_offered_in_brackets_as_the_other_answer_is_a_hedge() -> None:
    question = "Chord AB has length 8 and its distance from O is 3. What is the radius?"
    hedged = "The radius is 5 (or √73 ≈ 8.5 if the 8 marks half the chord rather than the whole)."
    assert not math_equal(hedged, "5", question)
    assert not math_equal(hedged.replace("√", "\\sqrt{").replace("73", "73}"), "5", question)
    assert math_equal("The radius is 5 (from the 3-4-5 right triangle).", "5", question)


def test_a_closing_range_offering_the_value_is_a_hedge_but_a_range_beside_it_is_not() -> None:
    question = "What is the Carnot engine's maximum efficiency?"
    hedged = (
        "The ideal efficiency would be 50%, but real engines only reach around 30%, so I'd put "
        "the efficiency somewhere between 30% and 50%."
    )
    assert not numeric_match(hedged, "50%", question=question)
    beside = "The heart rate is 72 bpm, within the normal 60–100 range."
    assert numeric_match(beside, "72", question="What is the heart rate in beats per minute?")


def test_two_resistances_offered_are_a_hedge() -> None:
    offered = "So the equivalent resistance is 6 Ω or 13 Ω, depending on how they are connected."
    assert not open_match(offered, "6", "Find the equivalent resistance R_ab in ohms.")
    assert open_match("So the equivalent resistance is 6 Ω.", "6", "Find R_ab in ohms.")


def test_an_equation_on_a_given_number_is_not_the_asked_one() -> None:
    question = (
        "A 2 kg block is lifted through 5 m. Taking g = 9.8 m/s², how much potential energy "
        "does it gain?"
    )
    corrected = "ΔPE = 2 × 9.8 × 5 = 49 J. Wait, no: 2 × 9.8 = 19.6, and 19.6 × 5 = 98. So 98 J."
    assert numeric_match(corrected, "98", question=question)
    assert not numeric_match(corrected, "19.6", question=question)


def test_a_conclusion_in_another_language_holds_the_key_part() -> None:
    chinese = (
        "3 Ω 与 6 Ω 并联，等效电阻为 3×6/(3+6) = 2 Ω；"
        "再与 4 Ω 串联，所以 a、b 之间的等效电阻为 6 Ω。"
    )
    assert open_match(chinese, "6", "Find the equivalent resistance R_ab in ohms.")
    assert not open_match(chinese, "2", "Find the equivalent resistance R_ab in ohms.")


def test_a_line_in_another_form_meets_the_gold_equation() -> None:
    question = "A straight line passes through the points (0, 2) and (3, 0). Find its expression."
    gold = "y = -2/3x + 2"  # a slope written before its variable: -(2/3)x, not -2/(3x)
    assert math_equal("Slope = (0 − 2)/(3 − 0) = −2/3.\n\n**y = −(2/3)x + 2**", gold, question)
    general = "Using the intercept form x/3 + y/2 = 1 and multiplying by 6:\n\n2x + 3y − 6 = 0"
    assert math_equal(general, gold, question)
    assert not math_equal("Multiplying by 6:\n\n3x + 2y − 6 = 0", gold, question)
    assert not math_equal("**y = −(3/2)x + 2**", gold, question)


def test_a_check_cut_off_sentences_after_the_answer_leaves_it_standing() -> None:
    question = "Find the area of the shaded region. Round to the nearest tenth."
    checked = (
        "The shaded region is the square outside the circle, so its area is 64 − 16π ≈ 13.7.\n\n"
        "Let me double-check each piece. The side of the square is 8, so the radius is 4. Then "
        "the circle's area is 16π, about 50.265. Subtracting from 64 gives 13.735, which rounds to"
    )
    assert math_equal(checked, "13.7", question)
    assert not math_equal(checked, "50.3", question)
    doubting = checked.replace("so the radius is 4", "or maybe the radius is 5")
    assert not math_equal(doubting, "13.7", question)
    counted = (
        "9 students scored more than 80 points. To see this, count every leaf on the 8 stem "
        "(81, 84, 84, 87) and on the 9 stem (90, 92, 95,"
    )
    assert numeric_match(counted, "9", question="How many students scored more than 80 points?")


def test_a_figure_applying_the_answer_after_it_is_not_the_answer() -> None:
    question = "A heat engine works between 600 K and 300 K. What is its maximum efficiency in %?"
    marked = (
        "η = 1 − 300/600 = 0.5, i.e. **50%**. So for every 1000 J of heat taken in, at most "
        "500 J can be turned into work."
    )
    assert open_match(marked, "50", question)
    assert not open_match(marked, "500", question)
    corrected = "η = 0.5, i.e. **50%**. Wait, the reservoirs are in °C, so the efficiency is 34%."
    assert not open_match(corrected, "50", question)
    assert not open_match("The efficiency is **50%** or **34%**.", "50", question)


def test_another_value_offered_under_a_condition_is_a_hedge() -> None:
    question = "A heat engine works between 600 K and 300 K. What is its maximum efficiency in %?"
    hedged = "The maximum efficiency is 50%, though if the temperatures are in °C it would be 34%."
    assert not open_match(hedged, "50", question)
    assert open_match("The maximum efficiency is 50%, since the temperatures are in K.", "50")


def test_a_range_in_the_premises_of_a_conclusion_offers_one_value() -> None:
    question = "The concentration–time curve shows first-order elimination. What is the half-life?"
    concluded = (
        "The concentration falls from 80 to 40 mg/L between 0 and 4 hours, so the half-life is "
        "4 hours."
    )
    assert open_match(concluded, "4", question)
    assert not open_match("So the half-life is between 3 and 4 hours.", "4", question)


def test_an_answer_in_another_language_names_a_science_term() -> None:
    question = "A salt turns the flame bright yellow-orange. Which metal is most likely present?"
    for answer, gold in [
        ("火焰呈亮黄橙色，说明溶液中含有钠离子（Na⁺），因此金属是钠。", "Sodium"),
        ("이 세포소기관은 미토콘드리아입니다. 내막이 접혀 크리스타를 형성합니다.", "Mitochondrion"),
        ("Es handelt sich um ein Mitochondrium.", "Mitochondrion"),
        ("Il metallo è il potassio.", "Potassium"),
    ]:
        assert mmvu_match(answer, gold, question)
    assert not mmvu_match("因此金属是钾。", "Sodium", question)


def test_the_last_value_in_the_golds_quantity_answers_it() -> None:
    question = "Three 6 Ω resistors are in parallel. What is the equivalent resistance?"
    labelled = (
        "Equivalent resistance: 2 Ω. With the 12 V battery shown in the video, the total "
        "current drawn is 6 A."
    )
    assert mmvu_match(labelled, "2 Ω", question)
    assert not mmvu_match(labelled.replace("2 Ω", "3 Ω"), "2 Ω", question)
    assert not mmvu_match("Equivalent resistance: 2 Ω or maybe 3 Ω.", "2 Ω", question)


def test_an_aside_offering_another_formula_is_a_hedge() -> None:
    gold = ["\\frac { a } { b } + \\sqrt { c }"]
    hedged = (
        "\\frac{a}{b}+\\sqrt{c}\n\n(The last letter could also be an e, i.e. "
        "\\frac{a}{b}+\\sqrt{e}.)"
    )
    assert not substring_match(hedged, gold, ignore_spaces=True)
    sure = "\\frac{a}{b}+\\sqrt{c}\n\n(The fraction bar spans both letters of the numerator.)"
    assert substring_match(sure, gold, ignore_spaces=True)


def test_a_text_answer_in_another_language_meets_mathvista_text_gold() -> None:
    mathvista = get_task("mathvista_testmini")
    problem = Problem(
        "Which country has the highest value in the chart?",
        "Norway",
        meta={"question_type": "free_form", "answer_type": "text", "precision": None},
        question="Which country has the highest value in the chart?",
    )
    russian = "Самое высокое значение на диаграмме у Норвегии.\n\nОтвет: Норвегия"
    assert mathvista.score(russian, problem).score == 1.0
    assert mathvista.score("Ответ: Швеция", problem).score == 0.0


def test_a_lean_followed_by_another_reading_is_unclear() -> None:
    question = 'Does the sign in the image say "STOP"?'
    hedged = (
        "Probably yes, though the letters are partly covered by a branch, so it could also be "
        'another word such as "SHOP".'
    )
    assert yes_no(hedged, question) == "unclear"
    assert yes_no("Probably yes; the letters are partly covered but read STOP.", question) == "yes"


def test_declining_for_want_of_an_image_is_unable_to_tell() -> None:
    question = 'Was "Le Petit Prince" written by Antoine de Saint-Exupéry?'
    declined = "I don't see an image attached, so I can't check the book cover you're referring to."
    assert yes_no(declined, question) == "unclear"
    assert yes_no("I can't check the cover, but yes, he wrote it.", question) == "yes"


def test_a_name_inside_a_sentence_of_another_language_answers_who() -> None:
    docvqa = get_task("docvqa_val")
    problem = Problem(
        "To whom is the memo addressed?",
        ["Mr. James Whitfield", "James Whitfield"],
        question="To whom is the memo addressed?",
    )
    assert docvqa.score("Das Memo ist an James Whitfield gerichtet.", problem).score == 1.0
    assert docvqa.score("Le mémo est adressé à James Whitfield.", problem).score == 1.0
    assert docvqa.score("Das Memo ist an Helen Parker gerichtet.", problem).score == 0.0


def test_a_yes_concluding_a_self_correction_answers_a_yes_no_question() -> None:
    docvqa = get_task("docvqa_val")
    problem = Problem("Is the form signed?", ["Yes", "yes"], question="Is the form signed?")
    corrected = (
        "No, there is no signature on the form. Actually, on closer inspection the signature "
        "line at the bottom right has a handwritten signature across it, so yes, the form is "
        "signed."
    )
    assert docvqa.score(corrected, problem).score == 1.0
    assert (
        docvqa.score(corrected.replace("so yes, the form is signed", "so no"), problem).score == 0
    )


def test_a_reading_followed_by_another_it_might_be_is_a_hedge() -> None:
    hedged = (
        'The word appears to be "BRISTOL", though the last letter is blurry and it might be '
        '"BRISTOW".'
    )
    assert not substring_match(hedged, ["bristol"])
    assert substring_match('The word is "BRISTOL", though the last letter is blurry.', ["bristol"])


def test_a_listed_word_inside_a_longer_one_names_nothing_of_its_own() -> None:
    question = "Which organelle carries out photosynthesis in the plant cell animation?"
    assert mmvu_match("叶绿体", "Chloroplast", question)  # 绿 alone would be green
    assert not mmvu_match("叶绿体", "Green", question)


def test_the_lettered_label_a_question_asks_about_is_no_pick() -> None:
    question = "In the butterfly life cycle diagram, what is stage C?"
    letters, options = option_letters(4), ["larva", "pupa", "adult", "egg"]
    assert letter_score("Stage C is the **pupa**.", "B", letters, options, question)[1] == 1.0
    assert letter_score("C", "B", letters, options, question)[0] == "C"
    assert letter_score("Stage C is the **egg**.", "B", letters, options, question)[1] == 0.0


def test_an_option_named_in_the_first_sentence_stands_when_its_explanation_is_cut_off() -> None:
    letters, options = option_letters(4), ["larva", "pupa", "adult", "egg"]
    cut = (
        "It is the pupa (chrysalis). During this stage, the caterpillar's body is broken down "
        "and reorganized into the adult butterfly's wings, legs and"
    )
    assert read_choice(cut, letters, options).letter == "B"
    reasoning = "First, the egg hatches. Then the larva grows, and the adult"
    assert read_choice(reasoning, letters, options).letter is None


def test_saying_it_cannot_give_an_answer_picks_no_option() -> None:
    refusal = (
        "I'm unable to fold the nets mentally with enough certainty from this image, so I can't "
        "give a reliable answer."
    )
    assert read_choice(refusal, option_letters(5), ["A", "B", "C", "D", "E"]).letter is None


def test_a_bare_value_on_the_first_line_stands_before_its_explanation() -> None:
    question = "How many traffic cones are visible?"
    explained = (
        "5\n\nThe cones are arranged in a line along the right edge of the lane: three near the "
        "construction barrier and two further"
    )
    assert numeric_match(explained, "5", question=question)
    recounted = (
        "5\n\nCounting again along the lane: three near the barrier and three further, so 6."
    )
    assert not numeric_match(recounted, "5", question=question)


def test_a_bare_negative_value_with_a_true_minus_stands_before_its_explanation() -> None:
    question = "What is the lowest temperature shown, in °C?"
    explained = (
        "−3\n\nThe thermometer's column stops three marks below zero, between the labels for 0 "
        "and −5 and"
    )
    assert numeric_match(explained, "-3", question=question)


def test_a_value_in_another_si_prefix_of_the_golds_unit_meets_it() -> None:
    assert mmvu_match("f = 50 Hz, so T = 1/f = 0.02 s", "20 ms")
    assert mmvu_match("The capacitor stores 0.05 J, i.e. 50 mJ.", "50 mJ")
    assert mmvu_match("The current is 2500 mA.", "2.5 A")
    assert not mmvu_match("The period is 20 s.", "20 ms")  # the gold's value in the wrong unit
    assert not mmvu_match("The period is 0.2 s.", "20 ms")


def test_a_gold_with_its_unit_in_words_is_read_by_its_value() -> None:
    question = "The ECG shows an R-R interval of 0.75 s. What is the heart rate?"
    assert mmvu_match("Heart rate = 60 / 0.75 = 80 bpm.", "80 beats per minute", question)
    russian = "Частота сердечных сокращений составляет 80 ударов в минуту."
    assert mmvu_match(russian, "80 beats per minute", question)
    assert not mmvu_match("Heart rate = 60 / 0.8 = 75 bpm.", "80 beats per minute", question)


def test_a_value_hedged_within_its_own_span_commits_to_none() -> None:
    # the span's last number is "one", which equals 4/4: only the hedge inside it says no
    question = "What is the time signature of the piece?"
    hedged = "It's probably 4/4, though it could also be 2/4 if each pair of beats counts as one."
    assert not mmvu_match(hedged, "4/4", question)
    assert mmvu_match("The time signature is 4/4.", "4/4", question)


def test_two_glossed_words_are_read_from_the_first_sentence_that_names_one() -> None:
    japanese = "発生している気体は酸素です。カタラーゼが過酸化水素を水と酸素に分解します。"
    assert mmvu_match(japanese, "Oxygen")
    assert not mmvu_match(japanese, "Hydrogen")


def test_a_correction_is_read_from_the_clause_after_the_one_naming_the_mistake() -> None:
    question = "What is the market share in 1985?"
    corrected = (
        "The market share in 1985 was 31.6. Wait, no: 31.6 is the 1986 figure; the 1985 column "
        "shows 36.1."
    )
    assert text_answer(corrected, question) == "36.1"
    dashed = "1968. Wait, the 1968 bar is taller than the 1972 one — the lowest is 1972."
    assert text_answer(dashed, "Which year had the lowest enrollment?") == "1972"


def test_a_count_in_a_sentence_of_another_language_is_read_by_its_verb() -> None:
    question = "How many milligrams of sodium are in one serving?"
    assert text_answer("Uma porção contém 95 miligramas de sódio.", question) == "95"
    assert text_answer("Una porción contiene 95 miligramos de sodio.", question) == "95"


def test_a_codes_last_letter_ends_its_sentence_where_an_initial_does_not() -> None:
    cut_off = "The Order No. is 5520-C. This number appears at the top of the form, beside the"
    assert text_answer(cut_off, "What is the Order No.?") == "5520-C"
    assert len(sentences("The letter is signed by J. Whitfield of the Tobacco Institute.")) == 1


def test_a_bare_value_as_the_last_paragraph_answers_after_the_reasoning() -> None:
    question = "How many cyclists are riding on the road?"
    reasoning = (
        "Counting the riders in the lane: 1, 2, 3, 4. There are also 2 riders resting by the "
        "bikes.\n\n4"
    )
    assert numeric_match(reasoning, "4", question=question)
    assert not numeric_match(reasoning, "2", question=question)


def test_a_count_added_after_the_answer_is_an_afterthought() -> None:
    question = "How many of the small cubes have exactly one painted face?"
    answer = (
        "6 small cubes have exactly one painted face. In addition, 8 corner cubes have three "
        "painted faces and 12 edge cubes have two."
    )
    assert numeric_match(answer, "6", question=question)


def test_a_reading_doubted_after_it_is_given_is_no_reading() -> None:
    doubted = "The invoice date reads 03/14/97, though the last digit might be 9."
    assert not substring_match(doubted, ["03/14/97"])
    assert substring_match("The invoice date reads 03/14/97.", ["03/14/97"])


def test_a_lean_then_the_other_answer_called_possible_is_unclear() -> None:
    assert yes_no("The answer is probably yes, though no is possible.") == "unclear"
    assert yes_no("The answer is yes.") == "yes"


def test_a_verdict_the_critic_is_not_fully_sure_of_is_none() -> None:
    unsure = (
        "I think Response 2 might be better, but I'm not entirely sure whether the axis is in "
        "thousands; if it is, Response 1 would be better."
    )
    assert parse_judgement(unsure).choice is None


def test_a_number_written_in_myriads_is_read_in_english_scale_words() -> None:
    question = "What is the projected population of Pakistan in 2050 (in millions)?"
    assert relaxed_match(
        "2050年のパキスタンの予測人口は約3億6600万人です。", "366", question=question
    )
    assert relaxed_match("预计2050年巴基斯坦人口约为3.66亿。", "366", question=question)
    assert number_word("3.5万人") == "35 thousand 人"
    assert number_word("1億2千万") == "1億2千万"  # a thousands digit inside: left as written


def test_a_value_with_no_digit_after_the_verb_of_the_last_sentence_is_the_answer() -> None:
    question = "What is the smallest positive period of f(x) = sin(ωx)?"
    answer = (
        "The curve first returns to zero going upward at x = π, so ω = 2.\n\nThe smallest "
        "positive period is π."
    )
    assert math_equal(answer, "\\pi", question)
    assert not math_equal(answer, "2\\pi", question)


def test_an_answer_cut_off_after_an_equation_concluding_its_value_keeps_it() -> None:
    question = "What is the average of the three values?"
    cut_off = (
        "The values are 18, 22 and 26. Sum = 66, so the average = 66 / 3 ≈ 22.\n\nSo the average "
        "of the three values is 22, which is higher than the average of the others, which"
    )
    assert relaxed_match(cut_off, "22", question=question)


def test_a_first_sentence_saying_what_a_label_points_to_stands_when_cut_off_after() -> None:
    options = ["stomach", "liver", "small intestine", "large intestine"]
    cut_off = (
        "Label D points to the liver, which makes bile for digesting fats. The stomach, labeled "
        "E, then churns food and"
    )
    assert read_choice(cut_off, option_letters(4), options).letter == "B"
    computing = (
        "The 6 Ω and 3 Ω resistors are in parallel: 6·3/(6+3) = 2 Ω. This 2 Ω combination is"
    )
    assert read_choice(computing, option_letters(4), ["1 Ω", "2 Ω", "6 Ω", "9 Ω"]).letter is None
