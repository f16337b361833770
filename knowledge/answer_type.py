"""The kind of value a question asks for, and whether a text states one (issue 9: near-topic questions).

A question that asks for an amount ("what's the lodging per diem in Denver?"), a percentage, a point in
time, a duration or a number is answered only by a text that states one. Retrieval finds the page about the
subject (the travel FAQ on per diem, the runbook of the alert) whether or not it holds the value, so such
a question scored as high as a right answer: the page is on topic, the value is not on it. This is the
expected answer type of question answering (Li & Roth, "Learning question classifiers", COLING 2002;
TREC QA systems checked a candidate answer against it), reduced to the five value types a knowledge base's
policies and runbooks state, and matched with patterns rather than a trained classifier.

Patterns are narrow on purpose: a question matches only when it clearly asks for a value ("when should I
escalate?" asks for a condition, not a date, and matches nothing), so a question of no type is answered as
before. English, with the Korean and Japanese question words for the same asks; the answer text is read
in any language the corpus uses, digits and units included.

Measured in ``benchmarks/fit_confidence.py`` (kb-dev, the sample set and benchmarks/data/near_topic_dev.jsonl).
"""

from __future__ import annotations

import regex

#: Value types, each with the question pattern that asks for it; checked in this order, first match wins.
_ASKS: dict[str, regex.Pattern] = {
    "percent": regex.compile(r"\bwhat (percent|percentage)\b|\bwhat %|\bhow many percent\b|몇 ?(퍼센트|%)|何(パーセント|%)", regex.I),
    "money": regex.compile(
        r"\bhow much (does|do|did|is|are|will|would|can|should)\b[^?.!]*\b(cost|pay|charge|price|fee|worth|reimburs)\w*"
        r"|\bhow much money\b"
        r"|\bhow much [^?.!]{0,30}\b(budget|subsidy|stipend|allowance|per diem|salary|payout|reimbursement)\b"
        r"|\bwhat(?:'s|s| is| are)? the [^?.!]{0,40}\b(price|cost|fee|fare|per diem|stipend|subsidy amount|allowance|"
        r"payout|salary|mileage rate|per[- ]mile rate|lodging rate|reimbursement rate)\b"
        r"|얼마(예요|에요|인가요|입니까|나|야)|금액|いくら|金額", regex.I),
    "time": regex.compile(
        r"\bwhat time\b|\bwhat date\b|\bwhich (day|date|month|year)\b|\bby when\b"
        r"|\bwhen (is|are|was|will|does|do)\b[^?.!]*\b(com\w* out|releas\w*|ship\w*|launch\w*|due|open\w*|clos\w*|start\w*|end\w*)\b"
        r"|\bany idea when\b|언제|いつ|何時|何日", regex.I),
    "duration": regex.compile(
        r"\bhow (long|soon)\b|\bhow far (ahead|in advance)\b|\bhow often\b|얼마나 (오래|걸|자주)|며칠|몇 ?(시간|일|주|개월)|"
        r"どのくらい(の期間|かか)|何(時間|週間|か月|ヶ月)", regex.I),
    "number": regex.compile(
        r"\bhow (many|much)\b"
        r"|\bwhat(?:'s|s| is)? the [^?.!]{0,30}\b(max|maximum|min|minimum|limit|threshold|cap)\b|\bthreshold\b"
        r"|\bat what (level|point|value|number|size)\b|몇 ?(명|번|개|회|건)|何(人|回|件|個|台)", regex.I),
}

_NUMBER_WORDS = (r"(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                 r"hundred|thousand|million)(-(one|two|three|four|five|six|seven|eight|nine))?|half|a dozen|a couple")
_MONTHS = (r"jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sept?(ember)?|oct(ober)?|"
           r"nov(ember)?|dec(ember)?")
_UNITS = r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|years?|yrs?|business days?|[smhdw]\b"
#: What states each type. Citation markers ([1]) and version names (v3, Python 3.9) are removed first.
_STATES: dict[str, regex.Pattern] = {
    "percent": regex.compile(r"\d\s?%|\bper ?cent\b|퍼센트|パーセント", regex.I),
    "money": regex.compile(r"[$€£¥₩]\s?\d|\d[\d,.]*\s?(usd|dollars?|cents?|원|円)|\bfree\b|\bno (cost|charge|fee)\b|무료|無料", regex.I),
    "time": regex.compile(
        rf"\b(19|20)\d\d\b|\b({_MONTHS})\b|\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|\d{{1,2}}(:\d\d)?\s?(am|pm)\b|"
        rf"\b\d{{1,2}}/\d{{1,2}}\b|\b(noon|midnight|today|tomorrow|tonight|weekly|daily|monthly|annually)\b|"
        rf"\bend of (the )?(day|week|month|quarter|year|pay period)\b|\bclose of business\b|\beod\b|\bq[1-4]\b|"
        rf"\b(each|every) (day|week|month|year|morning|evening|pay period)\b|\d+\s?({_UNITS})|\b({_NUMBER_WORDS})\s+({_UNITS})",
        regex.I),
    "duration": regex.compile(
        rf"\d+(\.\d+)?\s?(-|to|–)?\s?(\d+\s?)?(\w+\s)?({_UNITS})|\b({_NUMBER_WORDS}|a|an|one)\s+(\w+\s)?({_UNITS})\b|"
        rf"\bin (seconds|minutes|hours|days)\b|"
        rf"\b(immediately|daily|weekly|monthly|annually|yearly|hourly|overnight|same day)\b|\bevery \w+|"
        rf"\d+\s?(초|분|시간|일|주|개월|년)|\d+\s?(秒|分|時間|日|週間|か月|ヶ月|年)", regex.I),
    "number": regex.compile(rf"\d|\b({_NUMBER_WORDS})\b|\bno (limit|cap|maximum|minimum)\b|\bunlimited\b", regex.I),
}
_NOT_VALUES = regex.compile(r"\[\d+\]|\bv\d+(\.\d+)*\b|\bpython \d(\.\d+)*|\bgs-\d+\b|\bh[1-6]\b", regex.I)

#: Shown instead of an answer when no passage states the kind of value asked for.
MISSING_VALUE = {
    "percent": "percentage", "money": "amount", "time": "date or time", "duration": "length of time",
    "number": "number",
}


def asked_value(question: str) -> str | None:
    """The kind of value ``question`` asks for: ``"percent"``, ``"money"``, ``"time"``, ``"duration"``,
    ``"number"``, or None (it asks for something else: steps, a yes/no, a name, a condition)."""
    for kind, pattern in _ASKS.items():
        if pattern.search(question):
            return kind
    return None


def states_value(text: str, kind: str) -> bool:
    """Whether ``text`` states a value of ``kind`` (see `asked_value`); citation markers and version names
    do not count. Raises KeyError for an unknown kind."""
    return bool(_STATES[kind].search(_NOT_VALUES.sub(" ", text)))


#: Questions that ask what to do: "how do I resize it?", "what should I do when X fires?", "what now?",
#: "how do we stop that", Korean 어떻게 (해야|하나요|대응…), 대응, 하려면, 방법, Japanese どうすれば, 対応, 方法, 手順.
#: "How does X work?" and "how long/many/much" ask for other things and do not match.
_ASKS_ACTION = regex.compile(
    r"\bhow (do|can|should|would|could) (i|we|you|they|one)\b(?! (know|tell)\b)|\bhow to\b|"
    r"\bwhat (do|should|can|must) (i|we|you) (do|check|try|run|look at)\b|\bwhat now\b|\bwhat to do\b|\bsteps? to\b|\bwhat are the steps\b|"
    r"\bhow do i\b|\bhow should\b|\bwhere (do|can|should) (i|we|you) (see|find|look|check|go|get|start)\b|"
    r"어떻게 ?(해야|하나요|하면|해요|하죠|대응|처리|바꿔|변경|신청|요청)|대응|조치|하려면|방법|"
    r"どうすれば|どうしたら|どうやって|対応|対処|方法|手順", regex.I)
#: Verbs that start an instruction ("Run `kubectl get nodes`", "Call AdTrav at …", "Fill out the form"): the
#: imperatives of the handbook's, the runbooks' and the API docs' how-to steps. A sentence may lead with a
#: purpose or condition first ("To check X, run …", "If your card has not arrived, call …").
_IMPERATIVE_VERBS = (
    "add|apply|ask|book|call|cancel|change|check|choose|click|complete|configure|confirm|contact|cordon|create|"
    "decrease|delete|describe|disable|drain|edit|email|e-mail|enable|enroll|ensure|fill|find|follow|get|go|"
    "increase|inspect|install|investigate|look|log|make|message|migrate|monitor|move|navigate|notify|open|page|"
    "pick|ping|post|raise|reach|rebook|register|reduce|reinstall|remove|replace|request|reset|resize|restart|"
    "restore|review|roll|run|scale|schedule|select|send|set|sign|silence|start|stop|submit|switch|tell|try|"
    "turn|update|upgrade|upload|use|validate|verify|visit|wait|write")
_ACTION_UNIT = regex.compile(
    rf"^\W*(?:\d{{1,3}}[.)]\s*)?(?:(?:note|tip|important|reminder)\W*:\W*)?(?:(?:and|first|then|next|finally|otherwise|instead|also|alternatively),?\s+)?"
    rf"(?:(?:to|if|when|once|after|before|for)\b[^,.;:]{{1,120}},\s*)?(?:please\s+|simply\s+|just\s+)?"
    rf"(?:{_IMPERATIVE_VERBS})\b"
    rf"|\b(?:you|we|they|employees|maintainers|users|staff)\s+(?:can|should|must|need to|have to|may|will need to)\s+"
    rf"(?:{_IMPERATIVE_VERBS})\b"
    rf"|\b(?:kubectl|oc|etcdctl|amtool|promtool|curl|helm|git|pip)\s+[a-z-]+"
    rf"|^\W*to\s[^,.;:]{{1,120}}\s(?:run|use|execute|type|enter|call)\s*:\s*$"  # "To resize the volume run:"
    rf"|\b(?:your|the) (?:best|first) (?:starting point|place to (?:look|start)|bet|option|step) is\b",  # advice
    regex.I)


def asks_action(question: str) -> bool:
    """Whether ``question`` asks what to do (steps, a command, whom to call), not what something is."""
    return bool(_ASKS_ACTION.search(question))


def states_action(text: str) -> bool:
    """Whether ``text`` (one unit: a sentence, list item or table row) tells the reader what to do: an
    instruction ("Call AdTrav at …", "To check X, run …"), what someone "can/should/must" do, or a command
    line (`kubectl …`)."""
    return bool(_ACTION_UNIT.search(text))


#: Kinds of section a structured page (a runbook: Meaning, Impact, Diagnosis, Mitigation; a how-to: Overview,
#: Steps) is split into, each with the headings that name it; "action" is what to do.
_SECTION_HEADINGS: dict[str, regex.Pattern] = {
    "action": regex.compile(r"\b(diagnos\w*|mitigat\w*|resolv\w*|resolution|remed\w*|fix\w*|solutions?|steps?|"
                            r"procedures?|how to|troubleshoot\w*|workarounds?|instructions?|what to do)\b", regex.I),
    "impact": regex.compile(r"^\W*(impact|effects?|consequences?)\W*$", regex.I),
    "meaning": regex.compile(r"^\W*(meaning|overview|background|summary|about|introduction|description|definition|"
                             r"what is\b[^?]*)\W*$", regex.I),
}
#: What asks for the meaning or the impact of something (the action kind is `asks_action`).
_ASKS_SECTION: dict[str, regex.Pattern] = {
    "meaning": regex.compile(r"\bwhat (does|do) [^?.!]{1,80}\bmean\b|\bmeaning\b|\bwhat is (this|that|it)\b|"
                             r"무슨 뜻|뜻이|의미|意味|とは", regex.I),
    "impact": regex.compile(r"\bimpact\b|\baffect|\beffects? (on|of)\b|\bconsequence|\bwhat happens\b|\bhow bad\b|"
                            r"영향|影響|どうなる", regex.I),
}


def section_kind(heading: str) -> str | None:
    """The kind of section a ``heading`` names: ``"action"`` ("Diagnosis", "Mitigation", "Steps"),
    ``"impact"`` ("Impact"), ``"meaning"`` ("Meaning", "Overview"), or None (it names none)."""
    for kind, pattern in _SECTION_HEADINGS.items():
        if pattern.search(heading):
            return kind
    return None


def path_kind(headings: "tuple[str, ...] | list[str]") -> str | None:
    """The kind (`section_kind`) of the nearest heading of ``headings`` (outermost first) that names one:
    "Mitigation › Defrag" is an action section."""
    for heading in reversed(headings):
        kind = section_kind(heading)
        if kind is not None:
            return kind
    return None


def asked_sections(question: str) -> frozenset[str]:
    """The kinds of section (`section_kind`) ``question`` asks for: "what does it mean and how do I fix it"
    → ``{"meaning", "action"}``; "どんな影響がありますか" → ``{"impact"}``; empty when it asks for none."""
    kinds = {kind for kind, pattern in _ASKS_SECTION.items() if pattern.search(question)}
    if asks_action(question):
        kinds.add("action")
    return frozenset(kinds)
