"""What every page shares: one Store and RunManager per app process (not a page of its own)."""

from __future__ import annotations

import streamlit as st

from kforge_core.bench import BenchManager
from kforge_core.runner import RunManager, default_providers
from kforge_core.store import Store, default_home


def secrets():
    try:
        return dict(st.secrets)
    except Exception:  # no secrets.toml: keys come from the environment
        return {}


@st.cache_resource
def _manager(home: str) -> RunManager:
    store = Store(home)
    return RunManager(store, default_providers(store, secrets()))


@st.cache_resource
def _bench_manager(home: str) -> BenchManager:
    store = Store(home)
    return BenchManager(store, default_providers(store, secrets()))


def bench_manager() -> BenchManager:
    return _bench_manager(str(default_home()))


def manager() -> RunManager:
    return _manager(str(default_home()))  # keyed by KFORGE_HOME, so each store gets its own manager


def open_run(run_id: str) -> None:
    st.session_state["run_id"] = run_id
    st.switch_page("pages/run_view.py")
