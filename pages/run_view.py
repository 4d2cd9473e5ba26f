"""One run: round timeline with code, diff, verdict, correctness, timings, profile, recommendation, gate."""

import difflib
import io

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kforge_core import artifacts as A
from kforge_core.agents.parsing import Recommendation
from kforge_core.evaluation import EvalResult
from kforge_core.report import attribution_summary, build_summary, error_model_summary, status_label, verdict_table
from kforge_core.run_record import GateDecision
from pages.shared.common import manager
from profiler_adapters.screenshots import ImageRejected, normalise_screenshot

mgr = manager()
store = mgr.store
runs = store.runs()
st.title("Run")
if not runs:
    st.info("No runs yet. Start one on the New run page (the scripted demo needs no API key).")
    st.stop()
ids = [r["id"] for r in runs]
current = st.session_state.get("run_id") if st.session_state.get("run_id") in ids else ids[0]
run_id = st.selectbox("Run", ids, index=ids.index(current), key="view_run",
                      format_func=lambda i: next(f"{r['id']} · {r['problem']} · {r['backend']}"
                                                 for r in runs if r["id"] == i))
st.session_state["run_id"] = run_id


def speed_chart(rounds: list[dict]) -> go.Figure:
    fig = go.Figure()
    xs = [r["idx"] for r in rounds]
    fig.add_trace(go.Scatter(x=xs, y=[r["speedup"] for r in rounds], mode="lines+markers", name="speedup vs eager",
                             text=[r["verdict"] for r in rounds]))
    fig.add_hline(y=1.0, line_dash="dot", annotation_text="eager")
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="round", xaxis_dtick=1,
                      yaxis_title="speedup (correct rounds)", title="Speedup per round")
    return fig


def show_recommendation(rec: Recommendation) -> None:
    st.text(f"Recommendation: {rec.title}" + ("  (edited by the user)" if rec.edited_by_user else ""))
    st.text(f"Change: {rec.change}")
    if rec.rationale:
        st.text(f"Why: {rec.rationale}")
    if rec.metrics:
        st.text(f"Metrics cited: {', '.join(rec.metrics)}")
    if rec.expected_effect:
        st.text(f"Expected effect: {rec.expected_effect}")


def show_profile(idx: int) -> None:
    prof = store.read_json(run_id, idx, A.PROFILE)
    if not prof:
        return
    st.markdown(f"**Profile** ({prof['tool']})")
    metrics = pd.DataFrame(prof["metrics"])
    if not metrics.empty:
        st.dataframe(metrics, hide_index=True, width="stretch")
        pct = metrics[(metrics["unit"] == "%") & metrics["value"].map(lambda v: isinstance(v, (int, float)))]
        if not pct.empty:
            fig = go.Figure(go.Bar(x=pct["value"], y=pct["name"], orientation="h"))
            fig.update_layout(height=60 + 28 * len(pct), margin=dict(l=10, r=10, t=10, b=10),
                              xaxis=dict(range=[0, 100], title="% of peak"))
            st.plotly_chart(fig, width="stretch", key=f"sol_{idx}")
    if prof.get("kernels"):
        st.dataframe(pd.DataFrame(prof["kernels"]), hide_index=True, width="stretch")
    for f in prof.get("findings", [])[:8]:
        st.text(f"• {f}")
    for n in prof.get("notes", []):
        st.caption(n)


def show_round(r: dict, prev_code: str | None, latest: bool) -> str | None:
    idx = r["idx"]
    code = store.read_text(run_id, idx, A.PROGRAM)
    gen = store.read_json(run_id, idx, A.GENERATION) or {}
    ev = store.read_json(run_id, idx, A.EVAL)
    speed = f" · {r['speedup']:.2f}x" if r["speedup"] else ""
    with st.expander(f"Round {idx}: {r['verdict'] or r['phase']}{speed}", expanded=latest):
        if gen.get("failure"):
            st.error(f"Generation failure: {gen['failure']}")
        if gen.get("notes"):
            st.caption("Answer parsing: " + "; ".join(gen["notes"]))
        if gen.get("provider", "").startswith("scripted"):
            st.caption("Scripted answer (no model was called).")
        tabs = st.tabs(["Verdict", "Code", "Diff", "Profile", "Prompt and answer"])
        with tabs[0]:
            if ev:
                result = EvalResult.from_dict(ev)
                headline = f"{result.verdict.value}: {result.messages[0] if result.messages else ''}"
                if result.correct:
                    st.success(headline)
                elif not result.verdict.candidates_fault:  # harness_error, does_not_fit
                    st.warning("Not the candidate's fault — " + headline)
                    for extra in result.messages[1:]:
                        st.code(extra, language="text")
                else:
                    st.error(headline)
                if build_summary(result):
                    st.caption(build_summary(result))
                if result.memory:
                    st.caption("Device memory (MiB): " + ", ".join(f"{k.replace('_mb', '').replace('_', ' ')} "
                                                                    f"{v:,.0f}" for k, v in result.memory.items()))
                if result.own_kernel_share is not None:
                    st.caption(f"Own-kernel share of the candidate's time: {result.own_kernel_share:.0%} "
                               "(kernels its source defines, vs library and PyTorch kernels)")
                for line in (attribution_summary(result), error_model_summary(result)):
                    if line:
                        st.caption(line[0].upper() + line[1:])
                for flag in result.flags:
                    st.warning(f"Flagged for review: {flag}")
                if result.flags and result.timings:
                    st.caption("While flagged, this round's speedup is shown but not counted (run best, fast_p).")
                if result.trials:
                    st.dataframe(pd.DataFrame([vars(t) for t in result.trials]), hide_index=True)
                if result.timings:
                    st.dataframe(pd.DataFrame({k: vars(v) for k, v in result.timings.items()}).T)
                st.code(verdict_table(result), language="text")
                if result.build_log:
                    st.code(result.build_log, language="text")
            else:
                st.info(f"In progress: {r['phase']}…")
        with tabs[1]:
            if code:
                st.code(code, language="python", line_numbers=True)
        with tabs[2]:
            if code and prev_code:
                diff = "\n".join(difflib.unified_diff(prev_code.splitlines(), code.splitlines(),
                                                      f"round {idx - 1}", f"round {idx}", lineterm=""))
                st.code(diff or "(no change)", language="diff")
            else:
                st.caption("No previous round to compare with.")
        with tabs[3]:
            show_profile(idx)
            for img in store.images(run_id, idx):
                st.image(str(img), caption=img.stem)
            rec = store.read_json(run_id, idx, A.RECOMMENDATION)
            if rec:
                show_recommendation(Recommendation.from_dict(rec))
            ana = store.read_json(run_id, idx, A.ANALYSIS) or {}
            if ana.get("error"):
                st.warning(f"Analysis: {ana['error']}")
        with tabs[4]:
            prompt = store.read_json(run_id, idx, A.GENERATION_PROMPT)
            if prompt:
                st.code(prompt[-1]["text"], language="markdown")
            answer = store.read_text(run_id, idx, A.GENERATION_ANSWER)
            if answer:
                st.code(answer, language="markdown")
            if gen.get("recommendation_used"):
                st.caption("Recommendation sent with this prompt" +
                           (" (edited by the user)" if gen["recommendation_used"].get("edited_by_user") else "") +
                           f": {gen['recommendation_used'].get('title', '')}")
            calls = [c for c in mgr.record(run_id).model_calls() if c["round"] == idx]
            if calls:
                st.dataframe(pd.DataFrame(calls), hide_index=True)
    return code or prev_code


def gate(idx: int) -> None:
    st.subheader(f"Your call after round {idx}")
    session = mgr.record(run_id)
    rec = session.recommendation(idx)
    if rec:
        show_recommendation(rec)
    else:
        st.info("No recommendation this round (the program was not correct, or the analysis failed).")
    c1, c2, c3 = st.columns(3)
    if c1.button("Accept and continue", type="primary", key=f"accept_{idx}"):
        session.decide(idx, GateDecision("accept"))
        mgr.start(run_id)
        st.rerun()
    if c2.button("Continue without profiling", key=f"skip_{idx}"):
        session.decide(idx, GateDecision("skip_profiling"))
        mgr.start(run_id)
        st.rerun()
    if c3.button("Stop the run", key=f"stop_{idx}"):
        session.decide(idx, GateDecision("stop"))
        st.rerun()
    with st.form(f"edit_rec_{idx}"):
        st.markdown("**Edit the recommendation**")
        title = st.text_input("Title", rec.title if rec else "", key=f"rec_title_{idx}")
        change = st.text_area("Concrete change", rec.change if rec else "", key=f"rec_change_{idx}")
        if st.form_submit_button("Continue with my recommendation"):
            session.decide(idx, GateDecision("edit_recommendation", recommendation={
                "title": title, "change": change, "rationale": rec.rationale if rec else "",
                "metrics": rec.metrics if rec else [], "expected_effect": rec.expected_effect if rec else ""}))
            mgr.start(run_id)
            st.rerun()
    with st.form(f"edit_code_{idx}"):
        st.markdown("**Edit the code** (it is evaluated as the next round's program)")
        code = st.text_area("Program", store.read_text(run_id, idx, A.PROGRAM) or "", height=300,
                            key=f"code_{idx}")
        if st.form_submit_button("Evaluate my code next"):
            session.decide(idx, GateDecision("edit_code", code=code))
            mgr.start(run_id)
            st.rerun()
    uploads = st.file_uploader("Nsight / Instruments screenshots for the analysis agent (PNG or JPEG)",
                               type=["png", "jpg", "jpeg"], accept_multiple_files=True, key=f"shots_{idx}")
    errors = st.session_state.setdefault(f"upload_errors_{run_id}", [])
    if uploads and st.button("Re-analyse with these screenshots", key=f"reanalyse_{idx}"):
        images = []
        for up in uploads:
            try:
                images.append(normalise_screenshot(up.getvalue(), up.name))
            except ImageRejected as e:
                errors.append(str(e))
        if images:
            mgr.reanalyse(run_id, idx, images)  # in the background: a rerun of this page cannot cut it short
            st.rerun()
    for message in errors:  # kept until dismissed, whatever refreshes the page
        st.error(message)
    if errors and st.button("Dismiss", key=f"dismiss_upload_errors_{idx}"):
        errors.clear()
        st.rerun()


def manual_answers() -> None:
    """Paste-in provider: show the waiting prompt and take the answer."""
    for role in ("generation", "analysis"):
        folder = store.round_dir(run_id, None) / A.manual_dir(role)
        for prompt in sorted(folder.glob("*_prompt.md")):
            answer = prompt.with_name(prompt.name.replace("_prompt.md", "_answer.md"))
            if answer.exists():
                continue
            st.subheader(f"Waiting for your {role} answer")
            st.caption("Copy this prompt into any chat UI and paste the model's answer below.")
            st.code(prompt.read_text(), language="markdown")
            text = st.text_area("The model's answer", key=f"manual_{role}_{prompt.name}", height=200)
            if st.button("Submit answer", key=f"manual_submit_{role}_{prompt.name}") and text.strip():
                answer.write_text(text)
                st.rerun()


def header(active: bool) -> None:
    run = store.run(run_id)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Status", status_label(run["status"]))
    c2.metric("Rounds done", run["rounds_done"])
    best = store.best_label(run_id)
    c3.metric("Best speedup vs eager", best.split(" ", 1)[0])
    if " " in best:  # a best that was measured but not counted: say why beside the figure
        c3.caption(best.split(" ", 1)[1])
    c4.metric("Provider", run["provider"])
    st.caption(f"{run['problem']} on {run['backend']} · {run['mode']} mode" + (f" · {run['note']}" if run["note"] else ""))
    calls = mgr.record(run_id).model_calls()
    if calls:
        cost = [c["cost_usd"] for c in calls if c.get("cost_usd") is not None]
        st.caption(f"{len(calls)} model call(s): {sum(c['input_tokens'] or 0 for c in calls):,} tokens in, "
                   f"{sum(c['output_tokens'] or 0 for c in calls):,} out, {sum(c['seconds'] or 0 for c in calls):.1f} s, "
                   f"{sum(c['attempts'] or 1 for c in calls) - len(calls)} retries, "
                   + (f"{sum(cost):.4f} USD" if cost else "cost n/a"))
    b1, b2, b3, b4 = st.columns(4)
    if mgr.is_active(run_id) and b1.button("Stop", key="stop_run"):
        mgr.stop(run_id)
        st.rerun()
    if not active and run["status"] in ("interrupted", "stopped", "failed") and b1.button("Resume", key="resume_run"):
        mgr.start(run_id)
        st.rerun()
    best = store.best_kernel_source(run_id)  # from the store: no providers built on every poll
    if best:
        b2.download_button("Export best kernel", best, file_name=f"kforge_{run_id}_best.py", key="export_best")
    # a zip of every artifact (prompts, answers, code, results, images; none of it secret), built on request
    if not active and b3.button("Export run (zip)", key="export_zip_build"):
        buf = io.BytesIO()
        store.export_zip(run_id, buf)
        st.session_state[f"zip_{run_id}"] = buf.getvalue()
    if not active and st.session_state.get(f"zip_{run_id}"):
        b4.download_button("Download the zip", st.session_state[f"zip_{run_id}"], file_name=f"kforge_{run_id}.zip",
                           key="export_zip")


def running() -> bool:
    """Driven by this app, or by another process (the CLI) that marks it running in the store."""
    return mgr.is_active(run_id) or store.run(run_id)["status"] == "running"


ACTIVE_AT_LOAD = running()


# Only a run in progress refreshes (every 2 s, this fragment alone); an idle page costs nothing and keeps
# what the person typed, uploaded or was told.
@st.fragment(run_every=2.0 if ACTIVE_AT_LOAD else None)
def live():
    active = running()
    if ACTIVE_AT_LOAD and not active:
        st.rerun()  # the run stopped or reached a gate: redraw once, then stop polling
    header(active)
    rounds = store.rounds(run_id)
    status = store.run(run_id)["status"]
    if active:
        idx = rounds[-1]["idx"] if rounds else 1
        st.info(f"Working on round {idx}: {mgr.record(run_id).progress(idx)}…")
    if any(r["speedup"] for r in rounds):
        st.plotly_chart(speed_chart(rounds), width="stretch", key="speed_chart")
    prev = None
    for r in rounds:
        prev = show_round(r, prev, latest=r is rounds[-1])
    manual_answers()
    if status == "awaiting_gate":
        idx = mgr.record(run_id).awaiting_gate()
        if idx:
            gate(idx)


live()
