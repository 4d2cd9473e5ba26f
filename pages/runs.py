"""Run history: filter, compare two runs, reopen and resume."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.shared.common import manager, open_run

mgr = manager()
store = mgr.store
st.title("Runs")
runs = store.runs()
if not runs:
    st.info("No runs yet. Start one on the New run page (the scripted demo needs no API key).")
    st.stop()

c1, c2 = st.columns(2)
problem = c1.selectbox("Problem", ["(all)"] + sorted({r["problem"] for r in runs}), key="runs_problem")
status = c2.selectbox("Status", ["(all)"] + sorted({r["status"] for r in runs}), key="runs_status")
shown = [r for r in runs if problem in ("(all)", r["problem"]) and status in ("(all)", r["status"])]
table = pd.DataFrame([{"run": r["id"], "problem": r["problem"], "backend": r["backend"], "provider": r["provider"],
                       "mode": r["mode"], "status": r["status"], "rounds": r["rounds_done"],
                       "best speedup": store.best_label(r["id"])} for r in shown])
st.dataframe(table, hide_index=True, width="stretch")

st.subheader("Reopen or resume")
pick = st.selectbox("Run", [r["id"] for r in shown], key="runs_pick")
row = store.run(pick)
st.caption(f"Run {pick}: {row['status']}, {row['rounds_done']} completed round(s)" +
           (f" · {row['note']}" if row["note"] else ""))
b1, b2 = st.columns(2)
if b1.button("Open", key="runs_open"):
    open_run(pick)
can_resume = row["status"] in ("interrupted", "stopped", "failed") and not mgr.is_active(pick)
if b2.button("Resume", disabled=not can_resume, key="runs_resume",
             help="Continue from the last completed round (a round in flight when the app died is redone)"):
    mgr.start(pick)
    open_run(pick)

st.subheader("Compare two runs")
if len(shown) >= 2:
    a, b = st.columns(2)
    ra = a.selectbox("First", [r["id"] for r in shown], key="cmp_a")
    rb = b.selectbox("Second", [r["id"] for r in shown], index=1, key="cmp_b")
    fig = go.Figure()
    rows = []
    for rid in (ra, rb):
        rounds = store.rounds(rid)
        fig.add_trace(go.Scatter(x=[r["idx"] for r in rounds], y=[r["speedup"] for r in rounds],
                                 mode="lines+markers", name=rid))
        rows += [{"run": rid, "round": r["idx"], "verdict": r["verdict"], "speedup": r["speedup"]} for r in rounds]
    fig.update_layout(height=300, xaxis_title="round", yaxis_title="speedup vs eager")
    st.plotly_chart(fig, width="stretch", key="cmp_chart")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
else:
    st.caption("Two runs are needed to compare.")
