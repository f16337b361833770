"""The fake Slack Web API, driven by the real slack_sdk AsyncWebClient."""

from __future__ import annotations

import json
import time

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.fakes.fixtures import fake_slack, signed_request_headers  # noqa: F401  (fixture)
from tests.fakes.slack_api import FakeSlack


def client_for(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=fake.url)


async def test_post_message_is_recorded_and_answered_like_slack(fake_slack: FakeSlack) -> None:
    client = client_for(fake_slack)
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]

    first = await client.chat_postMessage(channel="C1", text="hi", thread_ts="1.000001", blocks=blocks)
    second = await client.chat_postMessage(channel="C1", text="again")

    assert first["ok"] and first["channel"] == "C1"
    assert first["message"]["text"] == "hi" and first["message"]["thread_ts"] == "1.000001"
    assert float(second["ts"]) > float(first["ts"])  # fresh, increasing ts
    (call, _) = fake_slack.calls_to("chat.postMessage")
    assert call["body"] == {"channel": "C1", "text": "hi", "thread_ts": "1.000001", "blocks": blocks}
    assert call["headers"]["Authorization"] == "Bearer xoxb-test"


async def test_a_post_to_a_user_names_their_dm_channel_and_each_answer_is_recorded(fake_slack: FakeSlack) -> None:
    fake_slack.dm_channels["U1"] = "D0U1"
    fake_slack.fail_next("chat.postMessage", error="not_in_channel", when=lambda body: body["channel"] == "C9")
    client = client_for(fake_slack)

    dm = await client.chat_postMessage(channel="U1", text="hi")
    other = await client.chat_postMessage(channel="U2", text="hi")
    with pytest.raises(SlackApiError):
        await client.chat_postMessage(channel="C9", text="hi")

    assert (dm["channel"], other["channel"]) == ("D0U1", "U2")  # a user not listed is echoed
    responses = [c["response"] for c in fake_slack.calls_to("chat.postMessage")]
    assert [(r["ok"], r.get("channel"), r.get("ts")) for r in responses[:2]] == [
        (True, "D0U1", dm["ts"]), (True, "U2", other["ts"])]
    assert responses[2] == {"ok": False, "error": "not_in_channel"}


async def test_auth_test_reports_the_bot_identity(fake_slack: FakeSlack) -> None:
    response = await client_for(fake_slack).auth_test()
    assert (response["user_id"], response["bot_id"], response["team_id"]) == ("UBOT", "BBOT", "T1")


async def test_form_encoded_and_get_calls_are_parsed(fake_slack: FakeSlack) -> None:
    client = client_for(fake_slack)
    await client.reactions_add(channel="C1", timestamp="1.000001", name="eyes")  # form-encoded POST
    info = await client.conversations_info(channel="C1")  # GET with query string

    (reaction,) = fake_slack.calls_to("reactions.add")
    assert reaction["body"] == {"channel": "C1", "timestamp": "1.000001", "name": "eyes"}
    assert fake_slack.calls_to("conversations.info")[0]["body"] == {"channel": "C1"}
    assert info["channel"]["id"] == "C1" and info["channel"]["is_member"] is True


async def test_other_methods_answer_ok(fake_slack: FakeSlack) -> None:
    client = client_for(fake_slack)
    ephemeral = await client.chat_postEphemeral(channel="C1", user="U1", text="thanks for the vote")
    updated = await client.chat_update(channel="C1", ts="1.000001", text="edited")
    home = await client.views_publish(user_id="U1", view={"type": "home", "blocks": []})
    anything = await client.api_call("bookmarks.list", params={"channel_id": "C1"})

    assert ephemeral["message_ts"]
    assert updated["ts"] == "1.000001" and updated["text"] == "edited"
    assert home["view"]["type"] == "home"
    assert anything["ok"] is True
    methods = [c["method"] for c in fake_slack.calls]
    assert methods == ["chat.postEphemeral", "chat.update", "views.publish", "bookmarks.list"]


async def test_file_upload_v2_round_trip(fake_slack: FakeSlack) -> None:
    response = await client_for(fake_slack).files_upload_v2(
        channel="C1", content="doc,citations\nhr:leave.md,3\n", filename="digest.csv", title="Digest"
    )
    assert response["ok"]
    (upload,) = fake_slack.calls_to("file_upload")
    assert upload["body"]["size"] == len("doc,citations\nhr:leave.md,3\n")
    (complete,) = fake_slack.calls_to("files.completeUploadExternal")
    assert json.loads(complete["body"]["files"])[0]["id"] == upload["body"]["file_id"]


async def test_rate_limited_call_is_retried_after_retry_after(fake_slack: FakeSlack) -> None:
    client = client_for(fake_slack)
    client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=1))
    fake_slack.fail_next("chat.postMessage", status=429, retry_after=1)

    started = time.monotonic()
    response = await client.chat_postMessage(channel="C1", text="digest")

    assert response["ok"] and response["ts"]
    assert len(fake_slack.calls_to("chat.postMessage")) == 2  # the 429, then the retry
    # The handler sleeps Retry-After plus up to 1 s of jitter (slack_sdk builtin_async_handlers).
    assert 1.0 <= time.monotonic() - started < 5.0


async def test_rate_limit_response_carries_retry_after_header(fake_slack: FakeSlack) -> None:
    fake_slack.fail_next("chat.postMessage", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as raised:
        await client_for(fake_slack).chat_postMessage(channel="C1", text="x")  # no retry handler
    assert raised.value.response.status_code == 429
    assert raised.value.response.headers["Retry-After"] == "7"


async def test_error_response_raises_slack_api_error(fake_slack: FakeSlack) -> None:
    fake_slack.fail_next("chat.postMessage", error="not_in_channel")
    client = client_for(fake_slack)

    with pytest.raises(SlackApiError) as raised:
        await client.chat_postMessage(channel="C9", text="digest")
    assert raised.value.response["error"] == "not_in_channel"
    assert (await client.chat_postMessage(channel="C9", text="digest"))["ok"]  # only the next call failed


async def test_fail_next_times(fake_slack: FakeSlack) -> None:
    fake_slack.fail_next("auth.test", error="invalid_auth", times=2)
    client = client_for(fake_slack)
    for _ in range(2):
        with pytest.raises(SlackApiError):
            await client.auth_test()
    assert (await client.auth_test())["ok"]


def test_fail_next_rejects_a_failure_that_would_succeed() -> None:
    with pytest.raises(ValueError):
        FakeSlack().fail_next("chat.postMessage")


async def test_call_without_token_is_not_authed(fake_slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as raised:
        await AsyncWebClient(base_url=fake_slack.url).chat_postMessage(channel="C1", text="x")
    assert raised.value.response["error"] == "not_authed"


async def test_response_url_posts_are_recorded(fake_slack: FakeSlack) -> None:
    webhook = AsyncWebhookClient(fake_slack.response_url("cmd-1"))
    response = await webhook.send(text="Here is the answer", response_type="ephemeral")

    assert response.status_code == 200
    (call,) = await fake_slack.wait_for("response_url")
    assert call["body"] == {"text": "Here is the answer", "response_type": "ephemeral"}
    assert call["path"] == "/response/cmd-1"


async def test_wait_for_times_out_with_a_clear_message(fake_slack: FakeSlack) -> None:
    await client_for(fake_slack).auth_test()
    with pytest.raises(TimeoutError, match=r"chat\.postMessage.*\['auth\.test'\]"):
        await fake_slack.wait_for("chat.postMessage", timeout=0.05)


async def test_stop_is_idempotent() -> None:
    async with FakeSlack() as fake:
        assert fake.url.startswith("http://127.0.0.1:") and fake.url.endswith("/api/")
    await fake.stop()


def test_signed_request_headers_verify() -> None:
    body = b'{"type":"event_callback","event_id":"Ev1"}'
    headers = signed_request_headers("s3cret", body)
    assert headers["Content-Type"] == "application/json"
    assert SignatureVerifier("s3cret").is_valid_request(body, headers)
    assert not SignatureVerifier("other").is_valid_request(body, headers)
    form = signed_request_headers("s3cret", b"payload=%7B%7D", timestamp=int(time.time()) - 600)
    assert form["Content-Type"] == "application/x-www-form-urlencoded"
    assert not SignatureVerifier("s3cret").is_valid_request(b"payload=%7B%7D", form)  # too old


async def test_socket_mode_hands_out_a_websocket_that_sends_hello_envelopes_and_records_acks(fake_slack: FakeSlack) -> None:
    import aiohttp

    bot_client = AsyncWebClient(token="xoxb-test", base_url=fake_slack.url)
    with pytest.raises(SlackApiError) as refused:
        await bot_client.apps_connections_open(app_token="xoxb-test")
    assert refused.value.response["error"] == "not_allowed_token_type"
    url = (await bot_client.apps_connections_open(app_token="xapp-1-test"))["url"]
    assert url.startswith("ws://127.0.0.1:")

    envelope_id = fake_slack.socket.send("events_api", {"type": "event_callback", "event": {"type": "app_mention"}})
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        assert (await ws.receive_json())["type"] == "hello"
        envelope = await ws.receive_json()
        assert envelope["envelope_id"] == envelope_id and envelope["type"] == "events_api"
        assert envelope["payload"]["event"]["type"] == "app_mention" and envelope["retry_attempt"] == 0
        await ws.send_json({"envelope_id": envelope_id})
        ack = await fake_slack.socket.wait_for_ack(envelope_id)
        assert ack["envelope_id"] == envelope_id and 0 <= ack["at"] < 1
        await fake_slack.socket.disconnect("refresh_requested")
        assert (await ws.receive_json()) == {"type": "disconnect", "reason": "refresh_requested",
                                             "debug_info": {"host": "fake-slack"}}
