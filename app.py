"""KForge Streamlit app: `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="KForge", page_icon="⚒️", layout="wide")

pages = [
    st.Page("pages/new_run.py", title="New run", icon="🚀", default=True),
    st.Page("pages/run_view.py", title="Run", icon="📈"),
    st.Page("pages/runs.py", title="Runs", icon="🗂️"),
    st.Page("pages/evaluate.py", title="Evaluate a kernel", icon="🧪"),
    st.Page("pages/problems.py", title="Problems", icon="📚"),
    st.Page("pages/settings.py", title="Settings", icon="⚙️"),
]
nav = st.navigation(pages)
with st.sidebar:
    st.caption("KForge: LLM agents that write fast kernels for AI accelerators.")
nav.run()
