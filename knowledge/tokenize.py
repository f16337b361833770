"""BM25 tokenization by script: Korean morphemes, Japanese words, English stems.

bm25s takes pre-tokenized input, so documents and queries go through `tokenize` alike. Every run of one
script goes to its own analyzer, so mixed text such as "API 키를 rotate 하려면" is analyzed part by part
and a Latin word or a number is the same token in every language:

- **Hangul**: kiwipiepy morphological analysis; content morphemes only (nouns, numerals, verb/adjective
  stems, roots), so particles no longer stick to words (`결제는` → `결제`).
- **kana/kanji**: SudachiPy with sudachidict_core, split mode B, normalized forms (`サーバ` → `サーバー`,
  `行きました` → `行く`); content parts of speech only.
- **plus character bigrams** of every Hangul and kana/kanji run (``결제일로부터`` → ``결제 제일 일로 로부 부터``),
  as Lucene's CJK bigram filter does: they match words the analyzers cut differently in a question and
  in a passage (unknown names, compounds). Measured on the full test sets, morphemes + bigrams vs
  morphemes alone: KorQuAD nDCG@10 0.9644 vs 0.9551, JSQuAD 0.9495 vs 0.9423, both better on each half
  of the queries taken separately (benchmarks/results/tokenizer_variants.json).
- **everything else** (Latin, digits, emoji, punctuation): lower-cased ``\\w\\w+|\\d`` words minus
  bm25s's English stop words, Snowball (Porter2) stemmed — the setup that reproduces the published BM25
  figure on BEIR SciFact (notes/retrieval.md).

The Korean and Japanese analyzers are given whole stretches of their script ("zones": from one character
of the script to the last one before a character of the other CJK script), Latin words and digits
included, so they see whole sentences and are called once per stretch rather than once per word; they
keep only morphemes written in their script, and the Latin words and digits of the zone go through the
English pipeline. Text is NFKC-normalised first (full-width ``ＡＰＩ１２`` → ``API12``).

The analyzers are loaded lazily, once per process (kiwipiepy ~3 s and ~300 MB; Sudachi ~0.3 s), and only
when a text of their script is seen, so English-only corpora never load them. Tokens come as a bag: their
order is not the text's order.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache

import regex
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

#: Bumped when tokens change for the same text; an index built with another version needs a rebuild (5: a Korean
#: particle written against a Latin word, "VPN은", is read with that word, `_korean`).
TOKENIZER_VERSION = 5

_KO = r"\p{Hangul}"
_JA = r"\p{Hiragana}\p{Katakana}\p{Han}ー〆〇"  # ー (U+30FC) is script Common, not Katakana
_RUNS = regex.compile(rf"(?P<ko>[{_KO}]+)|(?P<ja>[{_JA}]+)|(?P<other>[^{_KO}{_JA}]+)")
_SCRIPT_CHARS = {"ko": regex.compile(rf"[{_KO}]+"), "ja": regex.compile(rf"[{_JA}]+")}
_HAS_CJK = regex.compile(rf"[{_KO}{_JA}]")
_WORD = regex.compile(r"\w\w+|\d")
_STOPWORDS = frozenset(STOPWORDS_EN)

#: kiwipiepy tags kept (Sejong tag set): general/proper nouns, numerals, verb and adjective stems, roots.
#: Dropped: particles (J*), endings (E*), affixes (X[PS]*), dependent nouns (NNB: 것, 수), pronouns,
#: adverbs, punctuation; foreign words and numbers (SL, SN) come from the English pipeline instead.
KOREAN_TAGS = frozenset({"NNG", "NNP", "NR", "VV", "VA", "XR"})
#: Light verbs and the question word 어떻다 ("how"), which carry no topic.
KOREAN_STOP_STEMS = frozenset({"하", "되", "있", "않", "어떻"})
#: Sudachi parts of speech kept (first level): nouns, verbs, adjectives, adjectival nouns.
JAPANESE_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞"})
#: Normalized forms of light/auxiliary verbs that carry no topic (する, いる, ある, なる, ください, …).
JAPANESE_STOP_FORMS = frozenset({"為る", "居る", "有る", "成る", "下さる", "呉れる", "致す", "御座る", "出来る"})
#: Korean interrogatives Kiwi tags as nouns ("how many days", "how much"); 언제, 어디, 누구, 무엇 are pronouns and
#: 몇 a determiner, which `KOREAN_TAGS` already drops. Like `QUESTION_WORDS_EN`, left out of a question only: in
#: "연차는 며칠인가요?" ("how many days of annual leave?") 며칠 weighed more than 연차 and no page says it.
KOREAN_QUESTION_WORDS = frozenset({"며칠", "얼마", "얼마나"})
#: Japanese interrogatives Sudachi tags as nouns (normalized forms); 何 or 幾 with a counter (何日, 何回, 幾つ) too.
JAPANESE_QUESTION_WORDS = frozenset({"何", "幾ら", "幾つ", "何故"})
#: English words that shape a question without naming its topic: interrogatives, auxiliary and modal verbs,
#: personal pronouns, and chat filler. bm25s's stop list (Lucene's 33 words) keeps them, so in "What should I
#: do when KubeHpaMaxedOut fires?" four of six tokens were these words: they weighed 37 % of the question's IDF,
#: matched any page, and the runbook that holds the alert name covered only 0.37 of the question (refused).
#: `question_tokens` leaves them out of a question, as `KOREAN_STOP_STEMS` and `JAPANESE_STOP_FORMS` leave out
#: 어떻다 and する; documents keep them. Words that also name things ("id", "us", "it" as IT, "may" the
#: month, "current") are not in the list. Listed unstemmed; compared stemmed. A contraction is two words to
#: the tokenizer ("isn't" → "isn"): its first half is listed too, "isn" weighed more than "visit" in a question.
QUESTION_WORDS_EN = (
    "what whats when where which who whom whose why how hows about "
    "do does did doing done can could should would shall might must am are were be been being "
    "have has had having get gets got getting "
    "i me my mine myself we our ours you your yours he him his she her they them their its "
    "someone anyone anybody something anything "
    "im ive dont doesnt didnt cant couldnt wont wouldnt shouldnt isnt arent wasnt werent havent hasnt "
    "don doesn didn couldn won wouldn shouldn isn aren wasn weren haven hasn hadn ve ll re "
    "gonna wanna gotta pls plz please thanks thank thx hi hey hello lol ok okay "
    "just really actually still anymore now right much many also so then that this there"
).split()

#: Slack's broadcast mentions, as a page writes them (``<!channel>``, ``@here``, ``<!everyone>``), and the
#: words they mean: a page saying "post <!channel> in #incidents" answers "how do I ping everyone?" (the
#: sample set's s-012). Slack documents them as notifying everyone in the channel / everyone active in it / the
#: whole workspace (api.slack.com, "Formatting text for app surfaces", special mentions).
_BROADCAST = regex.compile(r"<!(channel|here|everyone)(?:\|[^>]*)?>|(?<![\w@])@(channel|here|everyone)\b", regex.I)
_BROADCAST_WORDS = {"channel": "channel everyone notify", "here": "here everyone notify", "everyone": "everyone notify"}

#: Sudachi refuses inputs over 49,149 bytes; runs are cut below that (3 bytes per CJK character).
_SUDACHI_MAX_CHARS = 12_000


def tokenize(text: str, *, bigrams: bool = True, topic: bool = False) -> list[str]:
    """BM25 tokens of ``text``: content morphemes per script (see module docstring); may be empty.

    ``bigrams=False`` leaves out the CJK character bigrams: the content words alone, e.g. to count how much a
    question says (`knowledge.followup`); BM25 always uses them. ``topic=True`` keeps what names a
    question's topic (`topic_tokens`): bigrams only inside its content words, and no Korean or Japanese
    interrogative (`KOREAN_QUESTION_WORDS`, `JAPANESE_QUESTION_WORDS`).

    Example::

        >>> tokenize("결제는 어떻게 하나요? The API limits")
        ['결제', '결제', '제는', '어떻', '떻게', '하나', '나요', 'api', 'limit']
        >>> tokenize("연차는 며칠인가요?", topic=True)
        ['연차', '연차']
    """
    tokens, topics = _analysed(text, bigrams, topic)
    return topics if topic else tokens


def _analysed(text: str, bigrams: bool, topic: bool) -> tuple[list[str], list[str]]:
    """``(tokens, topic tokens)`` of ``text`` from one pass of the analyzers (`tokenize`); the topic tokens are
    left empty unless ``topic``: a question needs both, a page only the first."""
    text = _BROADCAST.sub(lambda m: f" {_BROADCAST_WORDS[(m.group(1) or m.group(2)).lower()]} ",
                          unicodedata.normalize("NFKC", text))
    if not _HAS_CJK.search(text):
        english = _english(text)
        return english, list(english) if topic else []
    tokens: list[str] = []
    topics: list[str] = []
    before = ""
    for script, zone in script_runs(text):
        if script != "other":
            chars = _SCRIPT_CHARS[script].findall
            glued = _GLUED.search(before)
            words = _korean(zone, glued.group() if glued else "") if script == "ko" else _japanese(zone)
            tokens.extend(form for form, _ in words)
            if bigrams:
                tokens.extend(_bigrams(chars(zone)))
            if topic:  # a topic's bigrams stay inside its words: "차는" of "연차는" is no topic
                named = [(form, surface) for form, surface in words if not _asks(form, script)]
                topics.extend(form for form, _ in named)
                if bigrams:
                    topics.extend(_bigrams([r for _, surface in named for r in chars(surface)]))
            zone = _SCRIPT_CHARS[script].sub(" ", zone)  # the zone's Latin words and digits, as in English text
        english = _english(zone)
        tokens.extend(english)
        if topic:
            topics.extend(english)
        before = zone
    return tokens, topics


def question_tokens(text: str) -> list[str]:
    """The BM25 tokens of a question without `QUESTION_WORDS_EN`: what retrieval scores. A question made of
    nothing else (``"what now?"``) keeps all its tokens. Remembered with its `topic_tokens` for the last 256
    questions, both from one pass of the analyzers: a search and the answer's term weights read the same question
    (issue 24)."""
    return list(_question_tokens(text)[0])


def topic_tokens(text: str) -> list[str]:
    """What names a question's topic: `question_tokens` with the Korean and Japanese bigrams only inside its
    content words and no interrogative in any language; what coverage counts (`knowledge.scoring
    .lexical_coverage`). Kiwi cuts "연차는 며칠인가요?" ("how many days of annual leave?") into 연차 + 는 and
    며칠 + 이 + ㄴ가요, and the bigrams across those cuts (차는, 칠인, 인가, 가요) are on no page: with 며칠 they
    weighed 85 % of the question, and the page that answers it covered 0.12 (refused). BM25 keeps every
    bigram: the ones across a cut rank better (`python benchmarks/tokenizer_variants.py`: nDCG@10 on KorQuAD
    0.9644 with them in the question, 0.9609 without; JSQuAD 0.9495 and 0.9420)."""
    return list(_question_tokens(text)[1])


@lru_cache(maxsize=256)
def _question_tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(question tokens, topic tokens)``, each without the question words (all kept when nothing else is)."""
    def content(tokens: list[str]) -> tuple[str, ...]:
        return tuple([t for t in tokens if t not in question_stems()] or tokens)

    tokens, topics = _analysed(text, True, True)
    return content(tokens), content(topics)


@lru_cache(maxsize=256)
def compound_words(text: str) -> dict[str, list[str]]:
    """Each camelCase or PascalCase word of ``text`` as its token → the tokens of its words:
    ``"CPUThrottlingHigh"`` → ``{"cputhrottlinghigh": ["cpu", "throttl", "high"]}``. A word with a one-letter
    part (iPhone) is no compound."""
    out = {}
    for match in CAMEL_WORD.finditer(unicodedata.normalize("NFKC", text)):
        parts = camel_parts(match.group())
        if parts:
            whole = _english(match.group())
            words = _english(" ".join(parts))
            if len(whole) == 1 and len(words) > 1:
                out[whole[0]] = words
    return out


#: A camelCase or PascalCase word: a lower-case letter followed by a capital somewhere inside it.
CAMEL_WORD = regex.compile(r"\b(?=\w*\p{Ll}\p{Lu})\p{L}[\p{L}\d]*\b")
_CAMEL_PART = regex.compile(r"\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\d+")


def camel_parts(word: str) -> list[str]:
    """The words of a camelCase ``word`` (``"KubeHpaMaxedOut"`` → ``["Kube", "Hpa", "Maxed", "Out"]``), or []
    when a part is a single letter (``"iPhone"``: a name, not words)."""
    parts = _CAMEL_PART.findall(word)
    return [] if any(len(p) < 2 and not p.isdigit() for p in parts) else parts


@lru_cache(maxsize=1)
def question_stems() -> frozenset[str]:
    """`QUESTION_WORDS_EN` as tokens (Snowball stems), e.g. ``"doe"`` for "does"."""
    return frozenset(_stemmer().stemWords(QUESTION_WORDS_EN))


def load_analyzers() -> None:
    """Load the Korean and Japanese analyzers now (~3 s) rather than on the first text that needs them, and
    analyse one short text with each: kiwipiepy builds its model on its first analysis, which otherwise
    added ~1 s to the first Korean question after loading (benchmarks/crosslingual.py)."""
    _kiwi()
    _sudachi()
    tokenize("준비 準備")


def script_runs(text: str) -> list[tuple[str, str]]:
    """``text`` cut into ``(script, zone)`` pairs in order; script is ``"ko"``, ``"ja"`` or ``"other"``.

    A Korean or Japanese zone reaches from a character of its script to the last one before a character
    of the other CJK script, taking in the spaces, Latin words and digits between:
    ``"API 키를 rotate 하려면? 返金"`` → ``[("other", "API "), ("ko", "키를 rotate 하려면"), ("other", "? "),
    ("ja", "返金")]``.
    """
    runs: list[list[str]] = []
    for match in _RUNS.finditer(text):
        script, run = match.lastgroup, match.group()
        if len(runs) >= 2 and script != "other" and runs[-1][0] == "other" and runs[-2][0] == script:
            runs[-2][1] += runs.pop()[1] + run
        elif runs and runs[-1][0] == script:
            runs[-1][1] += run
        else:
            runs.append([script, run])
    return [(script, run) for script, run in runs]


#: The Latin word or number a run ends with, written against what follows it ("VPN" of "VPN은").
_GLUED = regex.compile(r"[\p{Latin}\d]+$")


def _english(text: str) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]
    return _stemmer().stemWords(words)


def _bigrams(runs: list[str]) -> list[str]:
    """Overlapping character bigrams of each run; a one-character run gives none (the analyzer has it)."""
    return [run[i:i + 2] for run in runs for i in range(len(run) - 1)]


def _korean(zone: str, glued: str = "") -> list[tuple[str, str]]:
    """``(form, surface)`` of each content morpheme of a Korean zone; ``glued``: the Latin word or number written
    against its start ("VPN" of "VPN은"), read with it so that the particle after it is read as one: alone,
    kiwipiepy reads "은 어떻게" as the noun 은 (silver), "를" as the verb stem 르 and "는요" as 늘."""
    kiwi, lock = _kiwi()
    with lock:
        morphemes = kiwi.tokenize(glued + zone)
    out = []
    for m in morphemes:
        tag = m.tag.split("-", 1)[0]  # VV-R / VA-I: regular/irregular conjugation marks
        start = m.start - len(glued)
        if start >= 0 and tag in KOREAN_TAGS and m.form not in KOREAN_STOP_STEMS:
            out.append((m.form, zone[start:start + m.len]))
    return out


def _japanese(zone: str) -> list[tuple[str, str]]:
    """``(normalized form, surface)`` of each content word of a Japanese zone."""
    tokenizer, lock = _sudachi()
    has_ja = _SCRIPT_CHARS["ja"].search
    out = []
    for start in range(0, len(zone), _SUDACHI_MAX_CHARS):
        with lock:
            morphemes = tokenizer.tokenize(zone[start:start + _SUDACHI_MAX_CHARS])
            parsed = [(m.part_of_speech()[0], m.normalized_form(), m.surface()) for m in morphemes]
        out.extend((form, surface) for pos, form, surface in parsed
                   if pos in JAPANESE_POS and form not in JAPANESE_STOP_FORMS and has_ja(surface))
    return out


def _asks(form: str, script: str) -> bool:
    """Whether a Korean or Japanese content word is an interrogative (`KOREAN_QUESTION_WORDS`,
    `JAPANESE_QUESTION_WORDS`, or 何/幾 with a counter)."""
    if script == "ko":
        return form in KOREAN_QUESTION_WORDS
    return form in JAPANESE_QUESTION_WORDS or (len(form) > 1 and form[0] in "何幾")


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _kiwi():
    """The kiwipiepy analyzer (loaded once per process) and the lock serialising calls to it."""
    from kiwipiepy import Kiwi

    try:
        kiwi = Kiwi(load_typo_dict=False, load_multi_dict=False)  # ~300 MB instead of ~1 GB (notes/retrieval.md)
    except TypeError:  # older kiwipiepy without those switches
        kiwi = Kiwi()
    return kiwi, threading.Lock()


@lru_cache(maxsize=1)
def _sudachi():
    """A Sudachi tokenizer (core dictionary, mode B; loaded once per process) and its lock."""
    from sudachipy import Dictionary, SplitMode

    return Dictionary(dict="core").tokenizer(mode=SplitMode.B), threading.Lock()
