"""What kind of section a question asks for, and whether a text is an instruction (issue 9).

A troubleshooting question ("how do I fix it?", "what do I check?") asks for a runbook's Diagnosis or
Mitigation, not its Meaning; "what is the impact?" asks for Impact. These are features of the answer reader
(`knowledge.reader`: ``section_asked``, ``section_other``, ``instruction_asked``), which weighs them on labelled
questions instead of adding hand-set bonuses. English, with the Korean and Japanese question words for the
same asks.
"""

from __future__ import annotations

import regex

#: Questions that ask what to do: "how do I resize it?", "what should I do when X fires?", "what now?",
#: "how do we stop that", Korean 어떻게 (해결)하나요, 대응, 해결, 하려면, 방법, 뭘 확인해야, Japanese どうすれば, 対応,
#: 方法, 手順, 解決, 直す, 何を確認すれば.
#: "How does X work?" and "how long/many/much" ask for other things and do not match.
_ASKS_ACTION = regex.compile(
    r"\bhow (do|can|should|would|could) (i|we|you|they|one)\b(?! (know|tell)\b)|\bhow to\b|"
    r"\bwhat (do|should|can|must) (i|we|you) (do|check|try|run|look at)\b|\bwhat now\b|\bwhat to do\b|\bsteps? to\b|\bwhat are the steps\b|"
    r"\bhow do i\b|\bhow should\b|\bwhere (do|can|should) (i|we|you) (see|find|look|check|go|get|start)\b|"
    r"어떻게 ?(\S+ ?)?(해야|하나요|하면|해요|하죠|할까요|합니까|대응|처리|바꿔|변경|신청|요청)|대응|조치|해결|하려면|방법|"
    r"(뭘|무엇을|뭐를?) ?(해야|하면|확인|봐야|보면)|"
    r"どうすれば|どうしたら|どうやって|対応|対処|方法|手順|解決|直(す|せ|し)|何を(すれば|したら|確認|見れば)", regex.I)
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


#: What kind of value a question asks for (`asked_value_kind`), in order of precedence: "how many days" is a
#: duration, "how many devices" a count, "how much does it cost" money. The kinds are `knowledge.values.Value`'s.
_ASKS_VALUE: tuple[tuple[str, regex.Pattern], ...] = (
    ("duration", regex.compile(
        r"\bhow (long|soon|often)\b|\bhow many (\w+ ){0,2}(seconds|minutes|hours|days|weeks|months|years|nights)\b|"
        r"며칠|몇 ?(초|분|시간|일|주|개월|달|년)|얼마나 (오래|걸)|何(秒|分|時間|日|週間|ヶ月|か月|年)|どのくらい(の期間|かか)",
        regex.I)),
    ("percent", regex.compile(r"\bwhat percent|\bpercentage\b|\bhow many percent|몇 ?(퍼센트|%)|何(パーセント|%)", regex.I)),
    ("money", regex.compile(
        r"\bhow much\b|\b(price|prices|cost|costs|fee|fees|budget|allowance|stipend|per diem)\b|"
        r"얼마|가격|요금|비용|수당|いくら|料金|価格|費用|手当", regex.I)),
    ("count", regex.compile(r"\bhow many\b|\bnumber of\b|몇 ?(개|명|대|번|회)|何(人|回|台|個|件|名)", regex.I)),
)


def asked_value_kind(question: str) -> str | None:
    """The kind of value (`knowledge.values.Value.kind`: ``"duration"``, ``"percent"``, ``"money"``,
    ``"count"``) ``question`` asks for, or None: "how many vacation days do I get?" → duration, "how much is the
    Team plan?" → money, "how many devices can I register?" → count. The expected answer type of
    question-answering systems (Moldovan et al., ACL 2000): a unit stating a value of that kind is likelier the
    answer than one stating another number."""
    return next((kind for kind, pattern in _ASKS_VALUE if pattern.search(question)), None)
