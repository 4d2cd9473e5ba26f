"""Providers, keys (never shown in full), local model servers, backends and where runs are stored."""

import streamlit as st

from kforge_core.backends import all_backends
from kforge_core.llm import api_key, mask
from kforge_core.llm.discovery import discover
from kforge_core.store import default_home
from pages.shared.common import secrets

st.title("Settings")

st.subheader("API keys")
st.caption("Keys are read from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY) or .streamlit/secrets.toml. "
           "They are never written to run records.")
for kind, var in (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")):
    st.text(f"{var}: {mask(api_key(kind, secrets()))}")

st.subheader("Local OpenAI-compatible servers")
st.caption("vLLM (8000), SGLang (30000), Ollama (11434), LM Studio (1234), llama.cpp server (8080) on this machine.")
if st.button("Detect servers", key="detect"):
    found = discover()
    if not found:
        st.info("No server answered on the usual ports.")
    for f in found:
        st.success(f"{f['server']} at {f['base_url']}: {', '.join(f['models']) or '(no models listed)'}")

st.subheader("Backends on this machine")
for b in all_backends():
    a = b.available()
    st.text(f"{b.name:<7} {'available' if a.ok else 'unavailable'}  {a.reason}")

st.subheader("Storage")
st.text(f"Runs are stored in {default_home()} (set KFORGE_HOME to change it).")
