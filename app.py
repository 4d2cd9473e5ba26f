"""KForge Streamlit app: `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="KForge", page_icon=":material/construction:", layout="wide")

pages = [
    st.Page("pages/new_run.py", title="New run", icon=":material/rocket_launch:", default=True),
    st.Page("pages/run_view.py", title="Run", icon=":material/monitoring:"),
    st.Page("pages/runs.py", title="Runs", icon=":material/history:"),
    st.Page("pages/bench.py", title="Bench", icon=":material/leaderboard:"),
    st.Page("pages/evaluate.py", title="Evaluate a kernel", icon=":material/science:"),
    st.Page("pages/problems.py", title="Problems", icon=":material/menu_book:"),
    st.Page("pages/settings.py", title="Settings", icon=":material/settings:"),
]
nav = st.navigation(pages)
with st.sidebar:
    st.caption("KForge: LLM agents that write fast kernels for AI accelerators.")
nav.run()
