"""KForge Streamlit app: `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="KForge", page_icon="⚒️", layout="wide")

pages = [
    st.Page("pages/evaluate.py", title="Evaluate a kernel", icon="🧪", default=True),
    st.Page("pages/problems.py", title="Problems", icon="📚"),
]
nav = st.navigation(pages)
with st.sidebar:
    st.caption("KForge: LLM agents that write fast kernels for AI accelerators.")
nav.run()
