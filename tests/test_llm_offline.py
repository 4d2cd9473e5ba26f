import json
import threading
import time

import pytest

from kforge_core.llm import ImageData, LLMError, Message, ProviderConfig, make_provider
from kforge_core.llm.offline import ManualProvider, ScriptedProvider

MSGS = [Message("system", "sys text"), Message("user", "user text", images=[ImageData(b"png", label="shot")])]


def test_scripted_from_file_in_order_and_exhaustion(tmp_path):
    f = tmp_path / "answers.json"
    f.write_text(json.dumps({"answers": ["one", "two"]}))
    p = make_provider(ProviderConfig(kind="scripted", scripted_path=str(f)))
    assert p.name == "scripted" and p.label.startswith("scripted:")
    assert [p.complete(MSGS).text for _ in range(2)] == ["one", "two"]
    with pytest.raises(LLMError, match="no answer left"):
        p.complete(MSGS)
    assert len(p.calls) == 3


def test_scripted_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(LLMError, match="cannot read scripted answers"):
        ScriptedProvider.from_file(bad)
    bad.write_text(json.dumps({"answers": [1, 2]}))
    with pytest.raises(LLMError, match="JSON list of answer strings"):
        ScriptedProvider.from_file(bad)


def test_manual_provider_with_callback_sees_the_transcript():
    seen = []
    p = ManualProvider(answer_fn=lambda prompt: seen.append(prompt) or "pasted answer")
    c = p.complete(MSGS)
    assert c.text == "pasted answer" and c.provider == "manual" and c.usage.cost_usd is None
    assert "### SYSTEM" in seen[0] and "user text" in seen[0] and "[image attached: shot" in seen[0]


def test_manual_provider_file_exchange(tmp_path):
    p = ManualProvider(prompt_dir=tmp_path, wait_s=10, poll_s=0.05)

    def answer_later():
        while not (tmp_path / "001_prompt.md").exists():
            time.sleep(0.02)
        (tmp_path / "001_answer.md").write_text("answer from a chat UI")

    threading.Thread(target=answer_later, daemon=True).start()
    assert p.complete(MSGS).text == "answer from a chat UI"
    assert "user text" in (tmp_path / "001_prompt.md").read_text()


def test_manual_provider_gives_up_and_refuses_empty(tmp_path):
    with pytest.raises(LLMError, match="no answer"):
        ManualProvider(prompt_dir=tmp_path, wait_s=0.2, poll_s=0.05).complete(MSGS)
    with pytest.raises(LLMError, match="empty"):
        ManualProvider(answer_fn=lambda _: "  ").complete(MSGS)


def test_unknown_kind():
    with pytest.raises(LLMError, match="unknown provider kind"):
        make_provider(ProviderConfig(kind="bard"))
