"""The 👎 reason prompt: valid Block Kit, one button per stored reason, values that parse back."""

from __future__ import annotations

import pytest
from slack_sdk.models.blocks import Block

from bot.slack.vote_reasons import REASON_LABELS, VOTE_REASON_PATTERN, parse_reason_value, reason_blocks
from feedback import VOTE_REASONS

ANSWER_ID = "0123456789abcdef0123456789abcdef"


def test_reason_blocks_are_valid_block_kit_with_one_button_per_reason() -> None:
    blocks = reason_blocks(ANSWER_ID, "Thanks for the 👎 — recorded.")
    for block in blocks:
        Block.parse(block).validate_json()  # slack_sdk's per-field limits
    buttons = blocks[1]["elements"]
    assert [parse_reason_value(b["value"]) for b in buttons] == [(r, ANSWER_ID) for r in VOTE_REASONS]
    assert all(VOTE_REASON_PATTERN.match(b["action_id"]) for b in buttons)
    assert [b["text"]["text"] for b in buttons] == ["Outdated", "Wrong", "Incomplete", "Not what I asked"]
    assert tuple(REASON_LABELS) == VOTE_REASONS


@pytest.mark.parametrize("value", ["", "outdated", "outdated:", "boring:abc", "up:abc", None])
def test_malformed_reason_values_are_rejected(value) -> None:
    with pytest.raises(ValueError):
        parse_reason_value(value)
