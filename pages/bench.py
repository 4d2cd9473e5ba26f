"""Batch mode: start a problem-set bench, follow it live, read its fast_p tables and charts."""

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kforge_core import ASSETS_DIR
from kforge_core.backends import all_backends
from kforge_core.bench import BenchSpec, bench_outcomes, bench_report, create_bench, problem_set
from kforge_core.metrics import BASELINES, fast_p_curve, fast_p_table, speedup_table
from pages.shared.common import bench_manager

mgr = bench_manager()
store = mgr.store
st.title("Bench")
st.caption("Run a whole problem set unattended: K samples of R rounds per problem, evaluated on a local process "
           "pool or a Ray cluster; fast_p against PyTorch eager and torch.compile.")

SMOKE = ASSETS_DIR / "bench" / "cpu_smoke"

with st.expander("Start a bench", expanded=not store.benches()):
    c1, c2 = st.columns(2)
    source = c1.text_input("Problem set", "builtin", help="'builtin' or a KernelBench-format folder on this machine")
    level = c2.selectbox("Level", ["all", 1, 2, 3, 4], key="bench_level")
    try:
        problems, errors, desc = problem_set(source.strip() or "builtin", None if level == "all" else int(level))
    except Exception as e:  # a folder that does not exist, unreadable files
        problems, errors, desc = [], [], ""
        st.error(f"Cannot load the problem set: {e}")
    for e in errors[:5]:
        st.warning(str(e))
    default = [p.name for p in problems if (SMOKE / f"{p.name}.json").exists()] or [p.name for p in problems][:4]
    chosen = st.multiselect("Problems", [p.name for p in problems], default=default, key="bench_problems")
    c1, c2, c3 = st.columns(3)
    backends = [b.name for b in all_backends() if b.available().ok]
    backend = c1.selectbox("Backend", backends, key="bench_backend")
    kind = c2.selectbox("Provider", ["scripted", "openai", "anthropic"], key="bench_provider",
                        help="scripted replays answer files (no API key); it is labelled scripted everywhere")
    if kind == "scripted":
        scripted = c3.text_input("Answer folder", str(SMOKE), help="a <problem name>.json per problem")
        model, base_url = "", None
    else:
        scripted = None
        model = c3.text_input("Model", "gpt-4o" if kind == "openai" else "claude-sonnet-4-6")
        base_url = st.text_input("Base URL (optional: an OpenAI-compatible server)", "") or None
    c1, c2, c3, c4 = st.columns(4)
    samples = c1.number_input("Samples per problem (K)", 1, 20, 1)
    rounds = c2.number_input("Rounds per sample (R)", 1, 20, 2)
    concurrency = c3.number_input("Runs in flight", 1, 64, 4)
    rpm = c4.number_input("Model requests / minute (0: no limit)", 0, 10000, 0)
    c1, c2 = st.columns(2)
    placement = c1.selectbox("Executor", ["local process pool", "Ray (auto: a running cluster, else local)"],
                             key="bench_exec")
    no_compile = c2.checkbox("Skip the torch.compile baseline", value=backend == "cpu",
                             help="torch.compile takes tens of seconds per evaluation on a CPU")
    if st.button("Start bench", type="primary", disabled=not chosen, key="bench_start"):
        spec = BenchSpec(name=f"{backend} x {kind}", backend=backend,
                         provider={"kind": kind, "model": model, "base_url": base_url, "scripted_path": scripted},
                         problem_set=f"{desc}, {len(chosen)} chosen", samples=int(samples), rounds=int(rounds),
                         eval_settings={"compile_reference": not no_compile})
        try:
            bench_id = create_bench(store, spec, [p for p in problems if p.name in chosen])
        except ValueError as e:
            st.error(str(e))
        else:
            mgr.start(bench_id, "auto" if placement.startswith("Ray") else None, int(concurrency), rpm or None)
            st.session_state["bench_id"] = bench_id
            st.rerun()

benches = store.benches()
if not benches:
    st.info("No benches yet. The defaults above run four built-in problems on the CPU with scripted answers.")
    st.stop()
ids = [b["id"] for b in benches]
current = st.session_state.get("bench_id")
pick = st.selectbox("Bench", ids, index=ids.index(current) if current in ids else 0,
                    format_func=lambda i: f"{i} · {store.bench(i)['name']}",  # no status: labels must not change
                    key="bench_pick")
st.session_state["bench_id"] = pick


@st.fragment(run_every=2.0)
def live(bench_id: str) -> None:
    b = store.bench(bench_id)
    items = store.bench_items(bench_id)
    done = sum(i["status"] in ("finished", "stopped", "failed") for i in items)
    st.progress(done / len(items) if items else 0.0,
                text=f"{b['status']}: {done}/{len(items)} runs done · {b['note']}")
    if b["status"] == "running" and not mgr.is_active(bench_id):
        st.caption("Running in another process (the CLI?); this page follows the store.")
    c1, c2 = st.columns(2)
    if c1.button("Stop", disabled=not mgr.is_active(bench_id), key=f"stop_{bench_id}"):
        mgr.stop(bench_id)
    if c2.button("Resume", disabled=mgr.is_active(bench_id) or done == len(items), key=f"resume_{bench_id}",
                 help="Run what is not finished yet; finished runs are kept"):
        mgr.start(bench_id)
    outcomes = bench_outcomes(store, bench_id)
    st.subheader("fast_p")
    if not any(o.verdict and o.status in ("finished", "stopped", "failed") for o in outcomes):
        st.markdown("— (no run has finished yet: fast_p, speedups, tokens and cost appear with the first result)")
        per_problem(outcomes)
        return
    st.markdown(fast_p_table(outcomes))
    st.markdown(speedup_table(outcomes))
    fig = go.Figure()
    for base in BASELINES:
        if any(o.speedup(base) is not None for o in outcomes):
            ps, ys = fast_p_curve(outcomes, base)
            fig.add_trace(go.Scatter(x=ps, y=ys, mode="lines", name=f"vs {base}", line_shape="hv"))
    fig.update_layout(height=320, xaxis_title="p (speedup threshold)", yaxis_title="fast_p", yaxis_tickformat=".0%",
                      title="fast_p over p")
    c1, c2 = st.columns(2)
    c1.plotly_chart(fig, width="stretch", key=f"fastp_{bench_id}")
    speedups = [o.speedup_eager for o in outcomes if o.speedup_eager]
    hist = go.Figure(go.Histogram(x=speedups, nbinsx=20, name="vs eager"))
    hist.update_layout(height=320, xaxis_title="speedup vs eager (correct kernels)", yaxis_title="runs",
                       title="Speedup distribution")
    hist.add_vline(x=1.0, line_dash="dot")
    c2.plotly_chart(hist, width="stretch", key=f"hist_{bench_id}")
    per_problem(outcomes)


def per_problem(outcomes) -> None:
    st.subheader("Per problem")

    def cell(x, fmt="{:.2f}x"):
        return "—" if x is None else fmt.format(x)

    rows = [{"problem": o.problem, "sample": o.sample, "status": o.status, "verdict": o.verdict or "—",
             "rounds": o.rounds, "vs eager": cell(o.speedup_eager), "vs torch.compile": cell(o.speedup_compiled),
             "own-kernel share": cell(o.own_kernel_share and 100 * o.own_kernel_share, "{:.0f} %"),
             "tokens": o.tokens if o.rounds else None, "cost USD": cell(o.cost_usd, "{:.4f}"),
             "why not correct": o.reason or ("—" if o.correct or not o.verdict else ""),
             "speedup not counted": o.not_counted or "—"} for o in outcomes]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"verdict": st.column_config.TextColumn(width="medium"),
                                "why not correct": st.column_config.TextColumn(width="large")})


live(pick)
md, csv_text = bench_report(store, pick)
c1, c2 = st.columns(2)
c1.download_button("Report (Markdown)", md, file_name=f"{pick}.md", key="bench_md")
c2.download_button("Per problem (CSV)", csv_text, file_name=f"{pick}.csv", key="bench_csv")
st.caption(f"Each run of this bench is also on the Runs page; files in {Path(store.home) / 'runs'}.")
