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

st.subheader("Reference check of a problem set")
st.caption("Run `kforge check FOLDER --backend cuda --baseline baseline_time_torch_H100.json --out RESULTS` on the "
           "machine you will use (whether each reference runs, its peak device memory, eager and torch.compile "
           "time, and the ratio to a published baseline), then open RESULTS here.")
folder = st.text_input("Results folder (holds check.csv)", key="check_folder")
if folder:
    from kforge_core.problem_check import read_report

    rows = read_report(folder)
    if rows is None:
        st.error(f"No check.csv in {folder}: run `kforge check ... --out {folder}` first.")
    else:
        import pandas as pd

        df = pd.DataFrame(rows).replace("", "—")
        ok = int((df["status"] == "ok").sum())
        st.metric("References that run", f"{ok} of {len(df)}")
        st.dataframe(df, hide_index=True, width="stretch")
