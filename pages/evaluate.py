"""Evaluate a pasted ModelNew candidate against a problem, isolated, on an available backend."""

import streamlit as st

from kforge_core import jobs
from kforge_core.backends import all_backends
from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.problems import builtin_problems
from kforge_core.report import build_estimate, build_summary, verdict_table

st.title("Evaluate a kernel")
st.caption("Paste a program that defines `ModelNew` with custom kernels. It is built and run in an isolated "
           "process with time and memory limits, checked against the reference on several input sets, and timed "
           "against PyTorch eager and torch.compile.")

problems = builtin_problems()
names = [p.name for p in problems]
col1, col2 = st.columns([2, 1])
with col1:
    name = st.selectbox("Problem", names, key="eval_problem")
problem = problems[names.index(name)]
backends = all_backends()
with col2:
    labels = {b.name: b.name if b.available().ok else f"{b.name} (unavailable: {b.available().reason})"
              for b in backends}
    backend_name = st.selectbox("Backend", [b.name for b in backends], format_func=labels.get, key="eval_backend")
backend = next(b for b in backends if b.name == backend_name)

with st.expander("Reference program", expanded=False):
    st.code(problem.source, language="python")

example = backend.example_for(problem.name)
if "candidate_src" not in st.session_state or st.session_state.get("candidate_for") != (name, backend_name):
    st.session_state.candidate_src = example.read_text() if example else ""
    st.session_state.candidate_for = (name, backend_name)
if example:
    st.info(f"Pre-filled with the shipped {backend_name} example for this problem; edit it freely.")
source = st.text_area("Candidate program (defines ModelNew)", key="candidate_src", height=380)

c1, c2, c3 = st.columns(3)
trials = c1.number_input("Correctness input sets", 1, 10, 3)
compile_ref = c2.checkbox("Also time torch.compile", value=False,
                          help="Compiling the reference with inductor takes extra time on the CPU.")
run_timeout = c3.number_input("Run time limit (s)", 5, 600, 60)

if st.button("Evaluate", type="primary", disabled=not backend.available().ok):
    settings = EvalSettings(n_trials=int(trials), compile_reference=compile_ref, run_timeout_s=float(run_timeout))
    st.session_state.eval_job = jobs.submit(evaluate, problem, source, backend, settings)


@st.fragment(run_every=1.0)
def show_job():
    job_id = st.session_state.get("eval_job")
    if not job_id:
        return
    state = jobs.state(job_id)
    if state is None:
        st.warning("That evaluation belonged to an earlier app process; run it again.")
    elif not state.done:
        st.info("Building and evaluating in an isolated process… " + build_estimate(jobs.build_seconds(st.session_state.get("eval_backend", ""))))
    elif state.error:
        msg = state.error
        st.error(f"Problem error: {msg}" if "ProblemError" in msg else f"Evaluation failed: {msg}")
    else:
        r = state.result
        (st.success if r.correct else st.error)(f"Verdict: {r.verdict.value} — {r.messages[0] if r.messages else ''}")
        if r.speedup("eager") is not None:
            m1, m2, m3 = st.columns(3)
            m1.metric("Candidate (median)", f"{r.timings['candidate'].median_ms:.4g} ms")
            m2.metric("Speedup vs eager", f"{r.speedup('eager'):.2f}x")
            if r.speedup("compiled") is not None:
                m3.metric("Speedup vs torch.compile", f"{r.speedup('compiled'):.2f}x")
        if build_summary(r):
            st.caption(build_summary(r))
        st.code(verdict_table(r), language="text")
        if r.stderr_tail.strip():
            with st.expander("Worker stderr (tail)"):
                st.code(r.stderr_tail, language="text")


show_job()
