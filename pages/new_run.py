"""Start a run: problem, backend, provider/model, rounds, target, reference kernel, auto or gated."""

import streamlit as st
from pages.shared.common import manager, open_run

from kforge_core import ASSETS_DIR
from kforge_core.backends import all_backends, get_backend
from kforge_core.llm import ProviderConfig, api_key
from kforge_core.problems import ProblemError, builtin_problems, problem_from_source
from kforge_core.session import PROFILERS, RunConfig, Session

DEMO_GEN = str(ASSETS_DIR / "demo/new_gelu_cpu_generation.json")
DEMO_ANA = str(ASSETS_DIR / "demo/new_gelu_cpu_analysis.json")
DEMO_PROBLEM = "level1/8_NewGELU"

st.title("New run")
mgr = manager()

with st.container(border=True):
    st.markdown("**No API key? Try the scripted demo.** It runs the real loop (CPU C++ kernels, isolated "
                "evaluation, profiling) on `" + DEMO_PROBLEM + "`, with answers read from a file. "
                "It is labelled *scripted* everywhere: no model is called.")
    demo_gated = st.checkbox("Stop at the human gate after each round", value=True, key="demo_gated")
    if st.button("Start the scripted demo", type="primary", key="start_demo"):
        problem = next(p for p in builtin_problems() if p.name == DEMO_PROBLEM)
        cfg = RunConfig(problem=problem.to_dict(), backend="cpu",
                        provider=ProviderConfig(kind="scripted", model="demo", scripted_path=DEMO_GEN).to_dict(),
                        analysis_provider=ProviderConfig(kind="scripted", model="demo", scripted_path=DEMO_ANA).to_dict(),
                        max_rounds=3, mode="gated" if demo_gated else "auto", profiler="torch",
                        eval_settings={"compile_reference": False})
        run_id = Session.create(mgr.store, cfg)
        mgr.start(run_id)
        open_run(run_id)

st.subheader("Problem")
source_kind = st.radio("Source", ["Built-in suite", "Upload a file", "Paste"], horizontal=True, key="problem_source")
problem, problem_error = None, None
if source_kind == "Built-in suite":
    problems = builtin_problems()
    names = [p.name for p in problems]
    # the default matches the scripted demo's answer files pre-filled below (they are for this problem)
    name = st.selectbox("Problem", names, key="new_problem",
                        index=names.index(DEMO_PROBLEM) if DEMO_PROBLEM in names else 0)
    problem = next(p for p in problems if p.name == name)
elif source_kind == "Upload a file":
    up = st.file_uploader("KernelBench-format .py file", type=["py"], key="problem_upload")
    if up is not None:
        if up.size > 1_000_000:
            problem_error = f"{up.name}: {up.size // 1024} KiB is too large for a problem file"
        else:
            try:
                problem = problem_from_source(up.getvalue().decode("utf-8"), name=up.name.removesuffix(".py"),
                                              path=up.name)
            except UnicodeDecodeError:
                problem_error = f"{up.name}: not a UTF-8 text file"
            except ProblemError as e:
                problem_error = str(e)
else:
    text = st.text_area("Problem source (Model, get_inputs, get_init_inputs)", height=220, key="problem_paste")
    if text.strip():
        try:
            problem = problem_from_source(text, name="pasted_problem", path="<pasted>")
        except ProblemError as e:
            problem_error = str(e)
if problem_error:
    st.error(problem_error)
if problem:
    with st.expander(f"Reference program: {problem.name}"):
        st.code(problem.source, language="python")

st.subheader("Target and agents")
c1, c2 = st.columns(2)
backends = all_backends()
reasons = {b.name: b.available() for b in backends}
backend_name = c1.selectbox("Backend", [b.name for b in backends], key="new_backend",
                            format_func=lambda n: n if reasons[n].ok else f"{n} — unavailable: {reasons[n].reason}")
if reasons[backend_name].ok and reasons[backend_name].reason:
    c1.caption(reasons[backend_name].reason)
kind = c2.selectbox("Provider", ["scripted", "manual", "openai", "anthropic"], key="new_provider",
                    format_func={"scripted": "Scripted answers from a file (offline)",
                                 "manual": "Manual paste-in (use any chat UI)", "openai": "OpenAI or compatible server",
                                 "anthropic": "Anthropic"}.get)
model = base_url = scripted_path = analysis_path = reasoning = None
if kind == "openai":
    model = c2.text_input("Model", "gpt-4o", key="new_model")
    base_url = c2.text_input("Base URL (blank: api.openai.com; e.g. http://127.0.0.1:8000/v1 for vLLM)", "",
                             key="new_base_url") or None
    reasoning = c2.selectbox("Reasoning effort (o-series, gpt-5)", [None, "low", "medium", "high"], key="new_effort")
    if not api_key("openai") and not base_url:
        c2.warning("OPENAI_API_KEY is not set (see Settings); a local server needs no key.")
elif kind == "anthropic":
    model = c2.text_input("Model", "claude-sonnet-4-6", key="new_model_a")
    if not api_key("anthropic"):
        c2.warning("ANTHROPIC_API_KEY is not set (see Settings).")
elif kind == "scripted":
    scripted_path = c2.text_input("Generation answers (JSON)", DEMO_GEN, key="new_scripted")
    analysis_path = c2.text_input("Analysis answers (JSON)", DEMO_ANA, key="new_scripted_ana")
    if scripted_path == DEMO_GEN and (problem is None or problem.name != DEMO_PROBLEM or backend_name != "cpu"):
        c2.warning(f"These answer files are the demo's, written for {DEMO_PROBLEM} on cpu: for another problem or "
                   "backend, give answers written for it.")

c3, c4, c5 = st.columns(3)
rounds = c3.number_input("Rounds", 1, 50, 3, key="new_rounds")
target = c4.number_input("Target speedup vs eager (0: none)", 0.0, 100.0, 0.0, step=0.5, key="new_target")
gated = c5.toggle("Gated (review each round)", value=True, key="new_gated")
profiler = c5.selectbox("Profiler", PROFILERS, key="new_profiler",
                        help="auto: Nsight Compute on CUDA (torch.profiler if ncu is unavailable), torch.profiler elsewhere")

with st.expander("Reference kernel from another platform (cross-platform transfer)"):
    ref_kind = st.radio("Reference", ["None", "Shipped example", "Paste"], horizontal=True, key="new_ref_kind")
    reference = None
    if ref_kind == "Shipped example" and problem:
        options = [b.name for b in backends if b.name != backend_name and b.example_for(problem.name)]
        if options:
            ref_backend = st.selectbox("From backend", options, key="new_ref_backend")
            reference = {"backend": ref_backend, "code": get_backend(ref_backend).example_for(problem.name).read_text()}
            st.code(reference["code"], language="python")
        else:
            st.info("No other backend ships an example for this problem.")
    elif ref_kind == "Paste":
        ref_backend = st.selectbox("It targets", [b.name for b in backends if b.name != backend_name],
                                   key="new_ref_backend_p")
        code = st.text_area("Working program for that backend", height=200, key="new_ref_code")
        reference = {"backend": ref_backend, "code": code} if code.strip() else None

ready = problem is not None and reasons[backend_name].ok
if st.button("Start run", type="primary", disabled=not ready, key="start_run"):
    provider = ProviderConfig(kind=kind, model=model or "", base_url=base_url, scripted_path=scripted_path,
                              reasoning_effort=reasoning)
    analysis = ProviderConfig(kind="scripted", model="", scripted_path=analysis_path) if analysis_path else None
    cfg = RunConfig(problem=problem.to_dict(), backend=backend_name, provider=provider.to_dict(),
                    analysis_provider=analysis.to_dict() if analysis else None, max_rounds=int(rounds),
                    target_speedup=float(target) or None, mode="gated" if gated else "auto",
                    reference_kernel=reference, profiler=profiler)
    run_id = Session.create(mgr.store, cfg)
    mgr.start(run_id)
    open_run(run_id)
