import streamlit as st

from kforge_core.problems import ProblemError, builtin_problems

st.title("Problems")
st.caption("The built-in suite, in KernelBench format (Model, get_inputs, get_init_inputs).")
try:
    problems = builtin_problems()
except ProblemError as e:
    st.error(f"The built-in suite failed to load: {e}")
    st.stop()

levels = sorted({p.level for p in problems})
level = st.radio("Level", levels, horizontal=True, format_func=lambda l: f"Level {l}")
for p in [p for p in problems if p.level == level]:
    with st.expander(f"{p.name} — {p.description}"):
        st.code(p.source, language="python")
