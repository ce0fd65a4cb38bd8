"""The words readers understand come from one data file per language, and every file is read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mmcritic.reading.language import LANGUAGES, language_name, number_words, tens_words
from mmcritic.rewards.parsing import parse_judgement, parse_verdict


def test_each_language_file_names_its_language_and_its_words_for_one_and_two() -> None:
    assert {"en", "zh"} <= set(LANGUAGES)
    for code in LANGUAGES:
        assert language_name(code)
        values = number_words(code)
        assert {1, 2} <= set(values.values()), code
        assert all(isinstance(value, int) for value in {**values, **tens_words(code)}.values())


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_boxed_index_spelled_in_any_listed_language_is_that_verdict(code: str) -> None:
    for word, value in number_words(code).items():
        if value in (1, 2):
            verdict = parse_verdict(f"<think>compared</think>\n\\boxed{{{word}}}")
            assert verdict.choice == str(value), (code, word)


# a tie as critics write one in each language, and a word of that language that is no verdict
_TIES = {
    "en": ("It's a tie", "Tied up"),
    "fr": ("Égalité", "Égal à 1"),
    "de": ("Unentschieden", "Entschieden"),
    "es": ("Empate", "Empatado 1"),
    "pt": ("Empate", "Empatado 1"),
    "zh": ("平局", "平局1"),
    "ja": ("引き分け", "引き"),
    "ko": ("무승부", "승부"),
    "ru": ("Ничья", "Ничья 1"),
    "it": ("Pareggio", "Pareggiato 1"),
}


def test_every_language_has_a_tie_example() -> None:
    assert set(_TIES) == set(LANGUAGES)


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_boxed_tie_in_any_listed_language_is_a_tie(code: str) -> None:
    tie, other = _TIES[code]
    assert parse_verdict(f"<think>even</think>\n\\boxed{{{tie}}}").choice == "tie", code
    assert parse_verdict(f"<think>even</think>\n\\boxed{{{other}}}").choice is None, code


@pytest.mark.parametrize(
    ("stated", "undecided"),
    [
        ("Response 1 is better.", "Response 1 is better, or maybe Response 2."),
        ("La réponse 1 est meilleure.", "La réponse 1 est meilleure, ou peut-être la réponse 2."),
        ("Antwort 1 ist besser.", "Antwort 1 ist besser, oder vielleicht Antwort 2."),
        ("La respuesta 1 es mejor.", "La respuesta 1 es mejor, o quizás la respuesta 2."),
        ("A resposta 1 é melhor.", "A resposta 1 é melhor, ou talvez a resposta 2."),
    ],
)
def test_a_verdict_followed_by_or_maybe_the_other_is_none_in_each_language(
    stated: str, undecided: str
) -> None:
    assert parse_judgement(stated).choice == "1"
    assert parse_judgement(undecided).choice is None


@pytest.mark.parametrize(
    ("one", "both"),
    [
        ("Réponse 1 est meilleure", "Réponse 1 est meilleure et Réponse 2"),
        ("Antwort 1 ist besser", "Antwort 1 ist besser und Antwort 2"),
    ],
)
def test_a_box_naming_both_responses_in_another_language_is_no_verdict(one: str, both: str) -> None:
    assert parse_verdict(f"<think>one</think>\n\\boxed{{{one}}}").choice == "1"
    assert parse_verdict(f"<think>both</think>\n\\boxed{{{both}}}").choice is None


def test_a_spelled_index_named_as_one_of_two_alternatives_is_no_verdict() -> None:
    for code in LANGUAGES:
        words = {value: word for word, value in number_words(code).items()}
        hedge = f"<think>unsure</think>\n\\boxed{{{words[1]} or {words[2]}}}"
        assert parse_verdict(hedge).choice is None, code


def test_every_language_file_lists_only_known_kinds_and_its_patterns_compile() -> None:
    from mmcritic.reading.language import KINDS, PATTERN_KINDS, phrases

    for code in LANGUAGES:
        kinds = set(_file(code)) - {"language", "number_words", "tens"}
        assert kinds <= set(KINDS), (code, kinds - set(KINDS))
        for kind in kinds:
            for fragment in phrases(code, kind):
                if kind in PATTERN_KINDS:
                    re.compile(
                        re.sub(r"\{(?:index|letter|place|who|better|value)\}", "1", fragment)
                    )
                if kind in ("verdict_statements", "verdict_finals", "verdict_losers"):
                    assert re.search(r"\{(?:index|letter|place)\}", fragment), (code, fragment)
                if kind == "spellings":
                    spelling, other = fragment
                    re.sub(spelling, other, "")


def _file(code: str) -> dict:
    folder = Path(__file__).parents[1] / "mmcritic" / "reading" / "languages"
    return json.loads((folder / f"{code}.json").read_text(encoding="utf-8"))


# A language no file lists, added the way a contributor adds one: its data and nothing else.
ITALIAN = {
    "language": "Italian",
    "number_words": {"uno": 1, "due": 2, "tre": 3},
    "tens": {},
    "answer_phrases": [r"\b(?:la\s+)?risposta\s+(?:corretta\s+)?è\s*:?\s*"],
    "verdict_statements": [r"risposta\s*{index}\s+è\s+(?:la\s+)?migliore"],
    "unclear_openings": [r"non\s+(?:lo\s+)?so\b"],
    "corrections": [r"\banzi\b"],
    "yes_openings": [r"sì\b"],
    "ordinals": [r"\bprim[oa]\b", r"\bsecond[oa]\b", r"\bterz[oa]\b", r"\bquart[oa]\b"],
    "rejections": [r"\bnon(?:\s+(?:il|la|del|della))?"],
}
READ_IN_ITALIAN = """
import json, sys
from mmcritic.reading import language
files = language._all()
language._all = lambda: {**files, "it": json.loads(sys.argv[1])}
language.LANGUAGES = tuple(sorted(language._all()))
from mmcritic.reading.final import final_answer
from mmcritic.eval.yes_no import yes_no
from mmcritic.rewards.parsing import parse_judgement
from mmcritic.eval.choices import choice_letter
images = ["The first image", "The second image", "The third image", "The fourth image"]
print(json.dumps([
    final_answer("Guardando il grafico, la risposta corretta è: B"),
    parse_judgement("La risposta due è la migliore.").choice,
    yes_no("Non lo so, l'immagine è troppo scura."),
    yes_no("No, è arancione. Anzi, sì: è rosso."),
    choice_letter("La quarta immagine è la più realistica.", list("ABCD"), images),
    choice_letter("Si tratta della meiosi, non della mitosi.", list("AB"), ["meiosi", "mitosi"]),
]))
"""


def test_a_language_added_as_data_alone_is_read_by_every_stage() -> None:
    done = subprocess.run(
        [sys.executable, "-c", READ_IN_ITALIAN, json.dumps(ITALIAN)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == ["B", "2", "unclear", "yes", "D", "A"]


# What an answer in each shipped language says, read through its data file (English's readers
# have corpora of their own): (language, reader, answer, reading); an ordinal picks one of
# BLINK-style options that differ only by it
ORDINAL_OPTIONS = ["The first image", "The second image", "The third image", "The fourth image"]
READ_PER_LANGUAGE = [
    ("de", "final", "Die richtige Antwort ist: B", "B"),
    ("de", "verdict", "Antwort 2 ist besser.", "2"),
    ("de", "yes_no", "Ja, das Auto ist rot.", "yes"),
    ("de", "yes_no", "Nein, das Auto ist blau.", "no"),
    ("de", "ordinal", "Das vierte Bild ist am ehesten ein echtes Foto.", "D"),
    ("de", "verdict", "Insgesamt ist Antwort 2 besser.", "2"),
    ("de", "text", "Der Absender ist Dr. Hans Müller.", "Dr. Hans Müller"),
    ("es", "final", "La respuesta correcta es: B", "B"),
    ("es", "verdict", "La respuesta 1 es mejor.", "1"),
    ("es", "yes_no", "Sí, el coche es rojo.", "yes"),
    ("es", "ordinal", "La segunda imagen parece una foto real.", "B"),
    ("es", "verdict", "La respuesta 2 es claramente mejor.", "2"),
    ("es", "text", "El país con el valor más bajo es Chile.", "Chile"),
    ("fr", "final", "La réponse correcte est : B", "B"),
    ("fr", "verdict", "La réponse 2 est meilleure.", "2"),
    ("fr", "yes_no", "Oui, la voiture est rouge.", "yes"),
    ("fr", "yes_no", "Non, la voiture est bleue.", "no"),
    ("fr", "ordinal", "La troisième image est la plus réaliste.", "C"),
    ("fr", "verdict", "La réponse 1 est donc meilleure.", "1"),
    ("fr", "text", "L'expéditeur est Marie Dupont.", "Marie Dupont"),
    ("ja", "final", "答えは B です", "B"),
    ("ja", "verdict", "回答1の方が優れています。", "1"),
    ("ja", "yes_no", "はい、車は赤です。", "yes"),
    ("ja", "yes_no", "いいえ、車は青です。", "no"),
    ("ja", "ordinal", "2枚目の画像が本物の写真だと思います。", "B"),
    ("ko", "final", "정답은 B입니다", "B"),
    ("ko", "verdict", "답변 2가 더 낫습니다.", "2"),
    ("ko", "yes_no", "네, 차는 빨간색입니다.", "yes"),
    ("ko", "final", "답: C", "C"),
    ("ko", "yes_no", "아니요, 차는 파란색입니다.", "no"),
    ("ko", "ordinal", "세 번째 이미지가 실제 사진입니다.", "C"),
    ("ko", "verdict", "따라서 응답 1이 더 우수합니다.", "1"),
    ("pt", "final", "Olhando o gráfico, a resposta correta é: C", "C"),
    ("pt", "verdict", "A resposta dois é a melhor.", "2"),
    ("pt", "yes_no", "Sim, o carro é vermelho.", "yes"),
    ("pt", "yes_no", "Não, o carro é azul.", "no"),
    ("pt", "yes_no", "Não sei, a imagem está escura.", "unclear"),
    ("pt", "ordinal", "A primeira imagem é a mais realista.", "A"),
    ("pt", "verdict", "A resposta 1 é portanto melhor.", "1"),
    ("pt", "text", "O remetente é João Silva.", "João Silva"),
    ("ru", "final", "Правильный ответ: B", "B"),
    ("ru", "verdict", "Ответ 2 лучше.", "2"),
    ("ru", "yes_no", "Да, машина красная.", "yes"),
    ("ru", "yes_no", "Нет, светофор показывает красный сигнал.", "no"),
    ("ru", "yes_no", "Не уверен, изображение тёмное.", "unclear"),
    ("ru", "ordinal", "Второе изображение похоже на настоящее фото.", "B"),
    ("zh", "final", "所以答案是B。", "B"),
    ("zh", "yes_no", "看起来像星巴克的，但是文字写的是“STARDUCKS”，所以不是星巴克的标志。", "no"),
    ("zh", "verdict", "我更倾向于第二个回答。", "2"),
    ("de", "yes_no", "Das Auto ist blau, also nein.", "no"),
    ("fr", "yes_no", "La voiture est rouge, donc oui.", "yes"),
    ("fr", "yes_no", "Peut-être oui, peut-être non.", "unclear"),
    ("es", "yes_no", "El coche es rojo, así que sí.", "yes"),
    ("pt", "yes_no", "O carro é vermelho, então sim.", "yes"),
    ("fr", "text", "C'est soit Paris ou Lyon.", ""),
    ("fr", "text", "Le pays le plus peuplé est la France, suivi de l'Allemagne.", "France"),
    ("de", "text", "Das Land mit dem höchsten Wert ist Chile, gefolgt von Peru.", "Chile"),
    ("es", "text", "El país con el valor más bajo es Chile, seguido de Perú.", "Chile"),
    ("pt", "text", "O país com o menor valor é o Chile, seguido do Peru.", "Chile"),
    ("de", "text", 'Es steht "BERLIN" oder "BONN" da.', ""),
    ("zh", "yes_no", "是的，车是红色的。", "yes"),
    ("zh", "yes_no", "不是，车是蓝色的。", "no"),
    ("zh", "yes_no", "无法确定图中的颜色。", "unclear"),
    ("zh", "ordinal", "第四张图片最有可能是真实照片。", "D"),
    ("it", "final", "Guardando il grafico, la risposta corretta è: C", "C"),
    ("it", "verdict", "La risposta 2 è chiaramente migliore.", "2"),
    ("it", "verdict", "<think>\nLa Risposta 1 dice Navona.\n</think>\n\n\\boxed{Risposta 1}", "1"),
    ("it", "yes_no", "Sì, la macchina è rossa.", "yes"),
    ("it", "yes_no", "Non sono sicuro, l'immagine è scura.", "unclear"),
    ("it", "ordinal", "La terza immagine è la più realistica.", "C"),
]


def _reading(reader: str, answer: str) -> str | None:
    from mmcritic.eval.choices import choice_letter
    from mmcritic.eval.text_answers import text_answer
    from mmcritic.eval.yes_no import yes_no
    from mmcritic.reading.final import final_answer
    from mmcritic.rewards.parsing import parse_judgement

    if reader == "final":
        return final_answer(answer)
    if reader == "ordinal":
        return choice_letter(answer, list("ABCD"), ORDINAL_OPTIONS)
    if reader == "text":
        return text_answer(answer)
    return parse_judgement(answer).choice if reader == "verdict" else yes_no(answer)


@pytest.mark.parametrize(("code", "reader", "answer", "reading"), READ_PER_LANGUAGE)
def test_an_answer_in_a_shipped_language_reads_as_its_speaker_meant(
    code: str, reader: str, answer: str, reading: str
) -> None:
    assert _reading(reader, answer) == reading


# two values offered in a shipped language, the same sentence stating only the last of them, and
# that value: the one-value sentence states it, the two-value one states neither
TWO_VALUES = [
    ("fr", "Entre 5 et 7.", "C'est 7.", "7"),
    ("fr", "C'est peut-être 5, ou peut-être 6.", "C'est 6.", "6"),
    ("de", "Zwischen 5 und 7.", "Es sind 7.", "7"),
    ("de", "Es ist 5 oder 6.", "Es ist 6.", "6"),
    ("es", "Entre 5 y 7.", "Son 7.", "7"),
    ("es", "Es 5 o 6.", "Es 6.", "6"),
    ("pt", "Entre 5 e 7.", "São 7.", "7"),
    ("pt", "É 5 ou 6.", "É 6.", "6"),
]


@pytest.mark.parametrize(("code", "offered", "stated", "value"), TWO_VALUES)
def test_two_values_offered_in_a_shipped_language_state_neither(
    code: str, offered: str, stated: str, value: str
) -> None:
    from mmcritic.eval.scorers import numeric_match

    assert numeric_match(stated, value), code
    assert not numeric_match(offered, value) and not numeric_match(offered, "5"), code


def test_every_shipped_language_but_english_has_answers_read_in_it() -> None:
    assert {code for code, *_ in READ_PER_LANGUAGE} == set(LANGUAGES) - {"en"}


BARE_FILES = """
from mmcritic.reading import language
files = language._all()
for code in files:
    files[code] = {key: files[code][key] for key in ("language", "number_words", "tens")}
from mmcritic.eval import choices, text_answers, yes_no
from mmcritic.reading.final import final_answer
from mmcritic.rewards.parsing import parse_judgement
print(final_answer("The answer is B"), parse_judgement("[[A]]").choice)
"""


def test_the_readers_stand_on_language_files_that_list_only_their_number_words() -> None:
    # every optional kind may be missing from every file: a reader compiles an empty kind to
    # a pattern that matches nothing, not to an invalid one
    done = subprocess.run(
        [sys.executable, "-c", BARE_FILES], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["The", "answer", "is", "B", "1"]


def test_a_word_two_languages_share_is_one_alternative() -> None:
    from mmcritic.reading.language import ordinals, pattern, words

    shared = "ou"  # French and Portuguese
    assert words("or_words", "fr", "pt").count(shared) == 2
    assert pattern("or_words", "fr", "pt") == "(?:ou)"
    second = ordinals("es", "pt")[1]
    assert second.count("segund") == 1, second


@pytest.mark.parametrize("joined", ["A ou C", "A oder C", "A und C", "A o C", "A e C", "A and C"])
def test_two_letters_joined_in_any_listed_language_pick_none(joined: str) -> None:
    from mmcritic.eval.choices import read_choice

    letters, options = ["A", "B", "C", "D"], ["cat", "dog", "fish", "bird"]
    assert read_choice(joined, letters, options).letter is None


def test_an_or_word_inside_a_word_joins_no_letters() -> None:
    from mmcritic.eval.choices import read_choice

    # Spanish "o" is a whole word only: "no (B)" is not the letters n and B
    assert read_choice("no (B)", ["A", "B"], ["yes", "no"]).letter == "B"


# a comparison asked in each language, an answer that the two are the same, one that the first
# is larger (no sameness, so no answer read from it) and the same answer to a question that
# compares nothing
_SAME_SIZE = {
    "en": ("Is the left circle larger than the right one?", "Both circles are the same size.",
           "The left circle is clearly larger."),
    "fr": ("Le cercle de gauche est-il plus grand que celui de droite ?",
           "Les deux cercles ont la même taille.", "Le cercle de gauche est nettement plus grand."),
    "de": ("Ist der linke Kreis größer als der rechte?", "Beide Kreise sind gleich groß.",
           "Der linke Kreis ist deutlich größer."),
    "es": ("¿Es el círculo izquierdo más grande que el derecho?",
           "Ambos círculos tienen el mismo tamaño.", "El círculo izquierdo es claramente mayor."),
    "pt": ("O círculo da esquerda é maior do que o da direita?",
           "Os dois círculos têm o mesmo tamanho.", "O círculo da esquerda é claramente maior."),
    "zh": ("左边的圆比右边的圆大吗？", "两个圆一样大。", "左边的圆明显更大。"),
    "ja": ("左の円は右の円より大きいですか？", "二つの円は同じ大きさです。",
           "左の円の方が明らかに大きく見えます。"),
    "ko": ("왼쪽 원이 오른쪽 원보다 큽니까?", "두 원의 크기는 같습니다.",
           "왼쪽 원이 분명히 더 크게 보입니다."),
    "ru": ("Левый круг больше правого?", "Оба круга одинакового размера.",
           "Левый круг явно больше."),
    "it": ("Il cerchio di sinistra è più grande di quello di destra?",
           "I due cerchi sono uguali.", "Il cerchio di sinistra è chiaramente più grande."),
}  # fmt: skip


def test_every_language_has_a_same_size_example() -> None:
    assert set(_SAME_SIZE) == set(LANGUAGES)


@pytest.mark.parametrize("code", LANGUAGES)
def test_calling_the_two_compared_things_the_same_answers_no_in_any_listed_language(
    code: str,
) -> None:
    from mmcritic.eval.yes_no import yes_no

    question, same, larger = _SAME_SIZE[code]
    assert yes_no(same, question) == "no", code
    assert yes_no(larger, question) != "no", code
    assert yes_no(same, "Describe the two circles.") is None, code


@pytest.mark.parametrize(
    "same", ["Os dois círculos são iguais.", "O círculo da esquerda é igual ao da direita."]
)
def test_equal_in_the_singular_and_the_plural_is_sameness_in_portuguese(same: str) -> None:
    from mmcritic.eval.yes_no import yes_no

    assert yes_no(same, _SAME_SIZE["pt"][0]) == "no"


def test_a_kind_listed_twice_in_a_language_file_is_an_error_naming_it(tmp_path: Path) -> None:
    # json keeps the last of two equal keys without a word: the first list would be lost
    from mmcritic.reading.language import _load

    doubled = tmp_path / "it.json"
    doubled.write_text('{"language": "Italian", "hedges": ["forse"], "hedges": ["magari"]}')
    with pytest.raises(ValueError, match=r"it\.json: listed twice: hedges"):
        _load(doubled)


@pytest.mark.parametrize(
    ("answer", "options"),
    [
        ("Sí, la barra roja es más alta; decir que no sería ignorar la escala.", ["Sí", "No"]),
        ("Oui, la ligne monte partout : répondre « non » ignore ces données.", ["Oui", "Non"]),
        ("Ja, die rote Linie liegt höher. Wer nein sagt, übersieht die Skala.", ["Ja", "Nein"]),
        ("Sim, a barra vermelha é maior; dizer não seria ignorar a escala.", ["Sim", "Não"]),
    ],
)
def test_options_yes_and_no_in_any_listed_language_are_read_as_yes_and_no(
    answer: str, options: list[str]
) -> None:
    # the answer's own "no" comes last; the yes it opens with is the pick ("Sí" keeps its accent)
    from mmcritic.eval.choices import choice_letter

    assert choice_letter(answer, ["A", "B"], options) == "A"


# a short answer written in a shipped language for an English gold, as a careful grader reads it
# (it counts when it clearly means the gold), and the same answer's wrong or undecided forms
SHORT_ANSWERS_IN_ANOTHER_LANGUAGE = [
    ("es", "What color is the truck?", "Green", "El camión es verde.", "El camión es rojo."),
    ("fr", "What color is the umbrella?", "Red", "Rouge.", "Ce n'est pas rouge."),
    ("de", "Which side is the bus on?", "Left", "Der Bus ist links.", "Links oder rechts."),
    ("pt", "What color is the car?", "White", "O carro é branco.", "O carro é preto."),
    ("ru", "What color is the building?", "Brown", "Оно коричневое.", "Оно белое."),
    ("zh", "What color is the car?", "White", "白色", "红色和白色"),
    ("ja", "What color is the traffic light?", "Green", "信号は緑色です。", "信号は赤です。"),
    ("ko", "Which side is the sign on?", "Right", "오른쪽입니다.", "왼쪽입니다."),
]


@pytest.mark.parametrize(
    ("code", "question", "gold", "meant", "wrong"), SHORT_ANSWERS_IN_ANOTHER_LANGUAGE
)
def test_a_short_answer_in_a_shipped_language_means_its_english_gold(
    code: str, question: str, gold: str, meant: str, wrong: str
) -> None:
    from mmcritic_dev.scorer_agreement import policy_score

    row = {"question": f"{question}\nPlease answer directly with a single word.", "answer": gold}
    assert policy_score("realworldqa", row, meant) == 1.0, code
    assert policy_score("realworldqa", row, wrong) == 0.0, code


CHART_ANSWERS_IN_ANOTHER_LANGUAGE = [
    ("Germany", "El país con el valor más alto es Alemania.", "Alemania y Francia."),
    ("India", "インドが最も高い値を示しています。", "日本が最も高い値を示しています。"),
    ("London", "Londres tiene el alquiler más alto.", "Londres no tiene el alquiler más alto."),
    ("Japan", "日本です。", "中国です。"),
    ("blue", "Facebookを表す棒の色は青です。", "Facebookを表す棒の色は赤です。"),  # a bare colour
]


@pytest.mark.parametrize(("gold", "meant", "wrong"), CHART_ANSWERS_IN_ANOTHER_LANGUAGE)
def test_a_chart_answer_naming_a_country_in_another_language_names_the_gold(
    gold: str, meant: str, wrong: str
) -> None:
    from mmcritic.eval.scorers import relaxed_match

    question = "Which one has the highest value?"
    assert relaxed_match(meant, gold, question=question)
    assert not relaxed_match(wrong, gold, question=question)


def test_an_english_answer_is_not_read_through_another_language() -> None:
    from mmcritic.reading.statements import english_gloss

    # German "links" and "rot" are English words too: an English answer means what it says
    assert english_gloss("There are links to the left") is None
    assert english_gloss("The fruit is rot") is None
    assert english_gloss("Der Apfel ist rot.") == "red"


def test_every_shipped_language_but_english_glosses_its_answer_words() -> None:
    from mmcritic.reading.language import phrases

    assert {code for code in LANGUAGES if phrases(code, "glosses")} == set(LANGUAGES) - {"en"}


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("Há seis cones na estrada.", "6"),
        ("Es gibt sieben Autos.", "7"),
        ("Hay ocho personas.", "8"),
        ("Il y a dix voitures.", "10"),
        ("트럭은 두 대입니다.", "2"),
        ("Их девять.", "9"),
    ],
)
def test_a_count_spelled_in_a_shipped_language_is_its_number(answer: str, value: str) -> None:
    from mmcritic.eval.scorers import numeric_match

    assert numeric_match(answer, value)
    assert not numeric_match(answer, str(int(value) + 1))


@pytest.mark.parametrize(
    "answer",
    [
        "Es gibt 5 Länder mit einem Wert über 20.",
        "Il y a 5 pays avec une valeur supérieure à 20.",
        "有5个国家的数值超过20。",
        "20を超える国は5か国です。",
        "Есть 5 стран со значением выше 20.",
    ],
)
def test_a_count_in_another_language_is_the_number_the_question_does_not_name(
    answer: str,
) -> None:
    from mmcritic.eval.scorers import relaxed_match

    question = "How many countries have a value above 20?"
    assert relaxed_match(answer, "5", question=question)
    assert not relaxed_match(answer, "20", question=question)


def test_a_sentence_in_another_language_with_two_counts_states_no_lone_one() -> None:
    from mmcritic.eval.answers import stated_count

    question = "How many countries are above 20?"
    assert stated_count("Es gibt 5 Länder und 3 Städte über 20.", question) is None
    assert stated_count("Es gibt 5 Länder über 20.", question) == "5"


@pytest.mark.parametrize(
    ("answer", "letter"),
    [
        ("Die Kamera bewegt sich nach rechts.", "B"),
        ("La cámara se mueve a la izquierda.", "A"),
        ("カメラは右に動いています。", "B"),
        ("Die Antwort ist A, nicht rechts.", "A"),  # the letter it names decides
        ("Nicht nach rechts.", None),  # a negation names no option
    ],
)
def test_an_answer_in_another_language_picks_the_option_its_word_glosses(
    answer: str, letter: str | None
) -> None:
    from mmcritic.eval.choices import choice_letter

    assert choice_letter(answer, ["A", "B"], ["left", "right"]) == letter
    assert choice_letter(answer, ["A", "B"], ["Turn left", "Turn right"]) == letter


@pytest.mark.parametrize(
    ("answer", "value", "stated_first"),
    [
        ("正方形的面积是36，所以边长为6。", "6", "36"),
        ("长方形的周长是20厘米，因此正方形的边长是5厘米。", "5", "20"),
        ("長方形の周の長さは20 cmなので、正方形の一辺は5 cmです。", "5", "20"),
        ("小さい正方形が4つ、大きい正方形が1つなので、全部で5つです。", "5", "1"),
    ],
)
def test_a_value_after_a_conclusion_written_without_spaces_is_the_answer(
    answer: str, value: str, stated_first: str
) -> None:
    from mmcritic.eval.scorers import math_equal

    question = "What is the side of the square?"
    assert math_equal(answer, value, question)
    assert not math_equal(answer, stated_first, question)


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("Die SPD hatte die meisten Sitze.", True),
        ("Samsung hat mit 31 % den größten Marktanteil.", True),
        ("Samsung tiene la mayor cuota de mercado.", True),
        ("Die CDU hatte die meisten Sitze.", False),  # another name
        ("Samsung hat nicht den größten Marktanteil.", False),  # negated
        ("Samsung and Apple", False),  # no sentence of another language
    ],
)
def test_a_name_an_answer_in_another_language_opens_with_is_its_subject(
    answer: str, named: bool
) -> None:
    from mmcritic.eval.scorers import relaxed_match

    gold = "SPD" if "Sitze" in answer else "Samsung"
    assert relaxed_match(answer, gold, question="Which one has the largest share?") is named


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ("Le groupe d'âge des 18-29 ans a la part la plus élevée (96 %).", True),
        ("Die Altersgruppe 18-29 hat den höchsten Anteil (96 %).", True),
        ("Los de 18-29 años tienen la mayor proporción.", True),
        ("Die Altersgruppe 30-49 hat den höchsten Anteil (88 %).", False),  # another label
        ("Die Gruppen 18-29 und 30-49 haben den höchsten Anteil.", False),  # two labels
    ],
)
def test_a_category_label_with_digits_in_another_language_names_the_category(
    answer: str, named: bool
) -> None:
    from mmcritic.eval.scorers import relaxed_match

    question = "Which age group has the highest share?"
    assert relaxed_match(answer, "18-29", question=question) is named
