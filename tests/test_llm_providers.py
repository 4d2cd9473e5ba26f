"""The real openai and anthropic SDKs against a local server speaking their wire protocols."""

import base64

import pytest

from fake_llm_server import FakeLLMServer, error, ok, stall
from kforge_core.llm import (AuthError, ContentFiltered, ContextLengthExceeded, ImageData, LLMError, Message,
                             ModelNotFound, ProviderConfig, RateLimited, RequestTimeout, ServerError,
                             make_provider, mask)
from kforge_core.llm.anthropic_provider import AnthropicProvider
from kforge_core.llm.openai_provider import OpenAIProvider

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
MSGS = [Message("system", "You write kernels."),
        Message("user", "Profile attached.", images=[ImageData(PNG, "image/png", "ncu screenshot")])]


@pytest.fixture
def server():
    with FakeLLMServer() as s:
        yield s


def openai_p(server, **kw):
    kw = {"max_retries": 3, "backoff_s": 0.01, "timeout_s": 5, **kw}
    return OpenAIProvider("gpt-4o", api_key="sk-test-123", base_url=server.url + "/v1", **kw)


def anthropic_p(server, **kw):
    kw = {"max_retries": 3, "backoff_s": 0.01, "timeout_s": 5, **kw}
    return AnthropicProvider("claude-sonnet-4-6", api_key="sk-ant-test", base_url=server.url, **kw)


def test_openai_text_images_usage_and_cost(server):
    server.plan = [ok("hello from openai", 1000, 500)]
    c = openai_p(server).complete(MSGS)
    assert c.text == "hello from openai" and c.provider == "openai" and c.attempts == 1
    assert (c.usage.input_tokens, c.usage.output_tokens) == (1000, 500)
    assert c.usage.cost_usd == pytest.approx((1000 * 2.5 + 500 * 10.0) / 1e6)
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["headers"]["authorization"] == "Bearer sk-test-123"
    user = req["json"]["messages"][1]
    assert user["content"][0] == {"type": "text", "text": "Profile attached."}
    assert user["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert req["json"]["max_tokens"] == 16000


def test_openai_text_only_model_gets_no_images(server):
    server.plan = [ok("fine")]
    openai_p(server, supports_images=False).complete(MSGS)
    assert server.requests[0]["json"]["messages"][1]["content"] == "Profile attached."


def test_openai_reasoning_model_parameters(server):
    server.plan = [ok("thought hard")]
    p = OpenAIProvider("o3-mini", api_key="k", base_url=server.url + "/v1", reasoning_effort="high",
                       temperature=0.2, max_retries=0)
    p.complete(MSGS)
    body = server.requests[0]["json"]
    assert body["max_completion_tokens"] == 16000 and body["reasoning_effort"] == "high"
    assert "max_tokens" not in body and "temperature" not in body


def test_openai_429_then_success(server):
    server.plan = [error(429, "slow down", headers={"retry-after": "0"}), ok("after retry")]
    c = openai_p(server).complete(MSGS)
    assert c.text == "after retry" and c.attempts == 2 and len(server.requests) == 2


def test_openai_500_retried_then_gives_up(server):
    server.plan = [error(500, "boom")] * 4
    with pytest.raises(ServerError, match=r"server error 500: boom \(gave up after 4 attempts\)"):
        openai_p(server).complete(MSGS)
    assert len(server.requests) == 4


def test_openai_401_is_clear_and_not_retried(server):
    server.plan = [error(401, "Incorrect API key provided")]
    with pytest.raises(AuthError, match="refused the API key \\(401\\).*OPENAI_API_KEY"):
        openai_p(server).complete(MSGS)
    assert len(server.requests) == 1


def test_openai_404_and_context_length(server):
    server.plan = [error(404, "The model `gpt-9` does not exist")]
    with pytest.raises(ModelNotFound, match="not found"):
        openai_p(server).complete(MSGS)
    server.plan = [error(400, "This model's maximum context length is 128000 tokens", "context_length_exceeded")]
    with pytest.raises(ContextLengthExceeded, match="too long"):
        openai_p(server).complete(MSGS)


def test_openai_timeout_then_success_and_timeout_exhausted(server):
    server.plan = [stall(2.0), ok("second try")]
    c = openai_p(server, timeout_s=0.5).complete(MSGS)
    assert c.text == "second try" and c.attempts == 2
    server.plan = [stall(2.0)]
    with pytest.raises(RequestTimeout, match="no answer within the timeout"):
        openai_p(server, timeout_s=0.5, max_retries=0).complete(MSGS)


def test_openai_content_filter(server):
    server.plan = [ok("", finish="content_filter")]
    with pytest.raises(ContentFiltered):
        openai_p(server).complete(MSGS)


def test_openai_connection_refused():
    p = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01, timeout_s=2)
    with pytest.raises(ServerError, match="cannot connect to http://127.0.0.1:9/v1"):
        p.complete(MSGS)


def test_anthropic_text_images_system_usage(server):
    server.plan = [ok("hello from claude", 2000, 100)]
    c = anthropic_p(server).complete(MSGS)
    assert c.text == "hello from claude" and c.provider == "anthropic"
    assert c.usage.cost_usd == pytest.approx((2000 * 3.0 + 100 * 15.0) / 1e6)
    req = server.requests[0]
    assert req["path"] == "/v1/messages"
    h = req["headers"]  # SDK versions differ in how they send the key
    assert h.get("x-api-key") == "sk-ant-test" or h.get("authorization") == "Bearer sk-ant-test"
    body = req["json"]
    assert body["system"] == "You write kernels." and [m["role"] for m in body["messages"]] == ["user"]
    img, txt = body["messages"][0]["content"]
    assert img == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                               "data": base64.b64encode(PNG).decode()}}
    assert txt == {"type": "text", "text": "Profile attached."}


def test_anthropic_429_then_success_500_401_timeout(server):
    server.plan = [error(429, "rate limited", headers={"retry-after": "0"}), ok("ok now")]
    assert anthropic_p(server).complete(MSGS).attempts == 2
    server.plan = [error(500, "overloaded")] * 2
    with pytest.raises(ServerError, match="gave up after 2 attempts"):
        anthropic_p(server, max_retries=1).complete(MSGS)
    server.plan = [error(401, "invalid x-api-key")]
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY"):
        anthropic_p(server).complete(MSGS)
    server.plan = [stall(2.0)]
    with pytest.raises(RequestTimeout):
        anthropic_p(server, timeout_s=0.5, max_retries=0).complete(MSGS)
    server.plan = [error(400, "prompt is too long: 250000 tokens > 200000 maximum")]
    with pytest.raises(ContextLengthExceeded):
        anthropic_p(server).complete(MSGS)


def test_anthropic_refusal(server):
    server.plan = [ok("", finish="refusal")]
    with pytest.raises(ContentFiltered):
        anthropic_p(server).complete(MSGS)


def test_keys_come_from_env_or_secrets_and_are_masked(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        make_provider(ProviderConfig(kind="openai", model="gpt-4o"))
    server.plan = [ok("via secrets")]
    p = make_provider(ProviderConfig(kind="openai", model="gpt-4o", base_url=server.url + "/v1"),
                      secrets={"OPENAI_API_KEY": "sk-from-secrets-abcdef"})
    assert p.complete(MSGS).text == "via secrets"
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-from-secrets-abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env-0123456789")
    assert isinstance(make_provider(ProviderConfig(kind="anthropic")), AnthropicProvider)
    assert mask("sk-ant-env-0123456789") == "sk-…6789" and mask(None) == "not set"
    assert "sk-" not in str(ProviderConfig(kind="openai").to_dict())


def test_local_server_needs_no_key(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.plan = [ok("local answer")]
    p = make_provider(ProviderConfig(kind="openai", model="local-model", base_url=server.url + "/v1"))
    assert p.complete(MSGS).text == "local answer"
