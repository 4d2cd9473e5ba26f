"""`kforge` command line: headless use of the engine."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kforge_core.backends import UnknownBackend, all_backends, get_backend
from kforge_core.evaluation import EvalSettings, evaluate
from kforge_core.problems import ProblemError, builtin_problems, load_problem_folder, resolve_problem
from kforge_core.report import verdict_table


def _cmd_problems(args) -> int:
    if args.folder:
        problems, errors = load_problem_folder(args.folder)
    else:
        problems, errors = builtin_problems(), []
    for p in problems:
        print(f"{p.name:<45} {p.description[:70]}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    print(f"{len(problems)} problem(s), {len(errors)} broken", file=sys.stderr)
    return 1 if errors else 0


def _cmd_backends(args) -> int:
    for b in all_backends():
        a = b.available()
        print(f"{b.name:<8} {'available' if a.ok else 'unavailable: ' + a.reason}   {b.language}")
    return 0


def _cmd_check(args) -> int:
    from kforge_core import problem_check as PC
    from kforge_core.problems import load_problem_folder

    errors: list[ProblemError] = []
    if Path(args.problem).is_dir():
        problems, errors = load_problem_folder(args.problem)
        if args.level is not None:
            problems = [p for p in problems if p.level == args.level]
    else:
        problems = [resolve_problem(args.problem)]
    baseline = PC.load_baseline(args.baseline) if args.baseline else None
    settings = EvalSettings(timing=not args.no_timing, compile_reference=not args.no_compile,
                            memory_limit_mb=args.memory_mb)
    rows = [PC.CheckRow(Path(e.args[0].split(":")[0]).stem, "problem_error", str(e)) for e in errors]
    for problem in problems:
        row = PC.check_one(problem, args.backend, settings, baseline)
        rows.append(row)
        extra = "".join(f", {k} {v:.4g}" for k, v in (("peak MiB", row.peak_mb), ("eager ms", row.eager_ms),
                                                       ("compiled ms", row.compiled_ms),
                                                       ("eager/baseline", row.eager_vs_baseline)) if v is not None)
        print(f"{problem.name}: {row.status}{extra}" + (f" ({row.message})" if row.message else ""), flush=True)
    if args.out:
        PC.write_reports(rows, args.out, f"kforge check {args.problem} on {args.backend}")
        print(f"wrote {Path(args.out) / PC.CHECK_CSV} and {PC.CHECK_MD}")
    return 0 if all(r.status == "ok" for r in rows) else 1


def _cmd_eval(args) -> int:
    problem = resolve_problem(args.problem)
    backend = get_backend(args.backend)
    try:
        source = Path(args.candidate).read_text()
    except (OSError, UnicodeDecodeError) as e:
        print(f"error: cannot read candidate {args.candidate}: {e}", file=sys.stderr)
        return 2
    settings = EvalSettings(n_trials=args.trials, timing=not args.no_timing, compile_reference=not args.no_compile,
                            build_timeout_s=args.build_timeout, run_timeout_s=args.run_timeout,
                            memory_limit_mb=args.memory_mb)
    if args.watch is not None:
        return _watch(args, problem, backend, settings, source)
    return 0 if _eval_and_print(args, problem, backend, settings, source).correct else 1


def _eval_and_print(args, problem, backend, settings, source: str):
    result = evaluate(problem, source, backend, settings)
    print(verdict_table(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2))
        print(f"wrote {args.json}", flush=True)
    return result


def _watch(args, problem, backend, settings, source: str) -> int:
    """A verdict each time the candidate file changes. Between saves the next worker does its imports (a
    spare, sandbox.py), so a new verdict does not wait for Python, torch and the GPU context to start."""
    import time

    done, last = 0, None
    try:
        while args.watch == 0 or done < args.watch:
            if source is not None and source != last:
                result = _eval_and_print(args, problem, backend, settings, source)
                done, last = done + 1, source
                print(f"-- verdict {done}: {result.verdict.value} in {result.duration_s:.1f} s. Watching "
                      f"{args.candidate}: save it for a new verdict, Ctrl-C to stop.", flush=True)
                if args.watch and done >= args.watch:
                    break
            time.sleep(0.3)
            try:
                source = Path(args.candidate).read_text()
            except (OSError, UnicodeDecodeError):
                source = None  # being replaced by an editor: read it again on the next tick
    except KeyboardInterrupt:
        pass
    return 0


def _cmd_profile(args) -> int:
    problem = resolve_problem(args.problem)
    source = Path(args.candidate).read_text()
    if args.tool == "ncu":
        from profiler_adapters.ncu import NcuUnavailable, profile

        try:
            report, _ = profile(problem, source, args.backend, out_dir=Path(args.out) if args.out else None)
        except NcuUnavailable as e:
            print(f"ncu unavailable: {e}; falling back to torch.profiler", file=sys.stderr)
            args.tool = "torch"
    if args.tool == "torch":
        from profiler_adapters.torch_profiler import ProfileFailed, profile as torch_profile

        try:
            report = torch_profile(problem, source, args.backend)
        except ProfileFailed as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    print(report.render_text())
    return 0


def _cmd_run(args) -> int:
    from kforge_core.llm import LLMError, ProviderConfig
    from kforge_core.runner import default_providers
    from kforge_core.session import GateDecision, RunConfig, Session
    from kforge_core.store import Store

    problem = resolve_problem(args.problem)
    provider = ProviderConfig(kind=args.provider, model=args.model or "", base_url=args.base_url,
                              scripted_path=args.scripted, reasoning_effort=args.reasoning_effort)
    analysis = (ProviderConfig(kind="scripted", scripted_path=args.analysis_scripted).to_dict()
                if args.analysis_scripted else None)
    reference = ({"backend": args.reference_backend, "code": Path(args.reference).read_text()}
                 if args.reference else None)
    cfg = RunConfig(problem=problem.to_dict(), backend=args.backend, provider=provider.to_dict(),
                    analysis_provider=analysis, max_rounds=args.rounds, target_speedup=args.target,
                    mode="gated" if args.gated else "auto", reference_kernel=reference, profiler=args.profiler,
                    eval_settings={"compile_reference": not args.no_compile})
    store = Store(args.home)
    run_id = Session.create(store, cfg)
    print(f"run {run_id} in {store.round_dir(run_id, None)}")
    try:
        gen, ana = default_providers(store)(cfg.to_dict(), run_id)
    except LLMError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    session = Session(store, run_id, gen, ana)
    printed: set[int] = set()
    while True:
        status = session.run()
        for r in store.rounds(run_id):
            if r["idx"] not in printed:
                printed.add(r["idx"])
                sp = f", {r['speedup']:.2f}x vs eager" if r["speedup"] else ""
                rec = session.recommendation(r["idx"])
                print(f"round {r['idx']}: {r['verdict']}{sp}" + (f"; next: {rec.title}" if rec else ""))
        if status != "awaiting_gate":
            break
        idx = session.awaiting_gate()
        answer = input("[a]ccept recommendation, [s]kip profiling, [q]uit? ").strip().lower()[:1]
        session.decide(idx, GateDecision({"a": "accept", "s": "skip_profiling"}.get(answer, "stop")))
    run = store.run(run_id)
    best = f"{run['best_speedup']:.2f}x in round {run['best_round']}" if run["best_speedup"] else "no correct kernel"
    print(f"{status}: best {best}")
    best_source = session.best_kernel_source()
    if args.export and best_source:
        Path(args.export).write_text(best_source)
        print(f"wrote {args.export}")
    return 0 if run["best_speedup"] else 1


def _cmd_bench(args) -> int:
    from tqdm import tqdm

    from kforge_core.bench import BenchRunner, BenchSpec, create_bench, make_executor, problem_set, write_bench_report
    from kforge_core.llm import ProviderConfig
    from kforge_core.llm.ratelimit import RateLimiter
    from kforge_core.runner import default_providers
    from kforge_core.store import Store

    store = Store(args.home)
    if args.report:
        if not store.bench(args.report):
            print(f"error: no bench {args.report} in {store.home}", file=sys.stderr)
            return 2
        print(write_bench_report(store, args.report, args.out))
        return 0
    if args.resume:
        bench = store.bench(args.resume)
        if not bench:
            print(f"error: no bench {args.resume} in {store.home}", file=sys.stderr)
            return 2
        bench_id, backend = args.resume, bench["spec"]["backend"]
    else:
        problems, errors, desc = problem_set(args.problems, args.level, args.only.split(",") if args.only else None,
                                             args.limit)
        for e in errors:
            print(f"warning: {e}", file=sys.stderr)
        provider = ProviderConfig(kind=args.provider, model=args.model or "", base_url=args.base_url,
                                  scripted_path=args.scripted, reasoning_effort=args.reasoning_effort)
        spec = BenchSpec(name=args.name or f"{args.backend} x {args.provider}", backend=args.backend,
                         provider=provider.to_dict(), problem_set=desc, samples=args.samples, rounds=args.rounds,
                         profiler=args.profiler, target_speedup=args.target,
                         eval_settings={"compile_reference": not args.no_compile})
        get_backend(args.backend)
        try:
            bench_id = create_bench(store, spec, problems)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        backend = args.backend
    items = store.bench_items(bench_id)
    print(f"bench {bench_id}: {len(items)} item(s) in {store.home}", file=sys.stderr)
    try:
        executor = make_executor(backend, args.ray, args.gpus, args.build_workers)
    except Exception as e:  # Ray missing, a cluster address that does not answer
        print(f"error: cannot start the executor: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    print(f"executor: {executor.describe()}", file=sys.stderr)
    limiter = RateLimiter(args.rpm, args.max_requests)
    bar = tqdm(total=len(items), initial=len(items) - len([i for i in items if i["status"] not in
                                                                  ("finished", "stopped", "failed")]),
               unit="run", file=sys.stderr, dynamic_ncols=True)

    def progress(p):
        i = p.item
        sp = f" {i['best_speedup']:.2f}x" if i["best_speedup"] else ""
        bar.set_postfix_str(f"{i['problem']}#{i['sample']} {i['status']}{sp}"[:60])
        bar.update(1)

    runner = BenchRunner(store, bench_id, executor, default_providers(store), args.concurrency, limiter, progress)
    try:
        status = runner.run(retry_failed=args.retry_failed)
    except KeyboardInterrupt:
        runner.stop()
        status = "stopped"
        print(f"\nstopped; resume with: kforge bench --resume {bench_id}", file=sys.stderr)
    finally:
        bar.close()
        executor.close()
    store.update_bench(bench_id, status=status)
    print(write_bench_report(store, bench_id, args.out))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kforge", description="KForge: LLM agents that write fast kernels.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("problems", help="list built-in problems, or those of a KernelBench-format folder")
    p.add_argument("--folder")
    p.set_defaults(fn=_cmd_problems)

    p = sub.add_parser("backends", help="list backends and whether this machine can run them")
    p.set_defaults(fn=_cmd_backends)

    p = sub.add_parser("check", help="run references (a problem or a folder) on a backend: runs?, peak memory, "
                                     "eager and torch.compile time, ratio to a published baseline")
    p.add_argument("problem", help="built-in name, a .py file, or a folder (e.g. KernelBench/level1)")
    p.add_argument("--backend", default="cpu", help="cpu (default), cuda, triton, metal")
    p.add_argument("--baseline", help="published timings, KernelBench's baseline_time_torch_H100.json format")
    p.add_argument("--level", type=int, help="only problems of this level (folders)")
    p.add_argument("--out", help="folder for check.csv and check.md")
    p.add_argument("--no-timing", action="store_true", help="only whether each reference runs")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile timing")
    p.add_argument("--memory-mb", type=int, default=EvalSettings().memory_limit_mb)
    p.set_defaults(fn=_cmd_check)

    p = sub.add_parser("eval", help="evaluate a candidate ModelNew program against a problem")
    p.add_argument("--problem", required=True, help="built-in name (e.g. level1/1_ReLU) or a .py file")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--candidate", required=True, help="file defining ModelNew")
    p.add_argument("--json", help="also write the full result as JSON to this file")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--no-timing", action="store_true")
    p.add_argument("--no-compile", action="store_true", help="skip timing the torch.compile reference")
    p.add_argument("--build-timeout", type=float, default=600.0)
    p.add_argument("--run-timeout", type=float, default=120.0)
    p.add_argument("--memory-mb", type=int, default=EvalSettings().memory_limit_mb)
    p.add_argument("--watch", nargs="?", type=int, const=0, metavar="N",
                   help="evaluate again each time the candidate file changes, with a worker ready between saves "
                        "(N: stop after N verdicts)")
    p.set_defaults(fn=_cmd_eval)
    p = sub.add_parser("run", help="run the agents for N rounds on one problem (headless session)")
    p.add_argument("--problem", required=True)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--provider", default="scripted", choices=["openai", "anthropic", "manual", "scripted"])
    p.add_argument("--model")
    p.add_argument("--base-url", help="OpenAI-compatible server (vLLM, SGLang, Ollama, LM Studio, llama.cpp)")
    p.add_argument("--reasoning-effort", choices=["low", "medium", "high"])
    p.add_argument("--scripted", help="JSON file of generation answers (scripted provider)")
    p.add_argument("--analysis-scripted", help="JSON file of analysis answers (scripted provider)")
    p.add_argument("--reference", help="a working program for another backend, to transfer from")
    p.add_argument("--reference-backend", default="cuda")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--target", type=float, help="stop once this speedup vs eager is reached")
    p.add_argument("--gated", action="store_true", help="ask before each next round")
    p.add_argument("--profiler", default="auto", choices=["auto", "torch", "ncu", "timings", "none"])
    p.add_argument("--no-compile", action="store_true", help="skip timing the torch.compile reference")
    p.add_argument("--home", help="where runs are stored (default $KFORGE_HOME or ~/.kforge)")
    p.add_argument("--export", help="write the best kernel to this file")
    p.set_defaults(fn=_cmd_run)

    p = sub.add_parser("bench", help="run a problem set unattended (K samples x R rounds each) and report fast_p")
    p.add_argument("--problems", default="builtin", help="'builtin' or a KernelBench-format folder")
    p.add_argument("--level", type=int, help="only this level")
    p.add_argument("--only", help="comma-separated problem names")
    p.add_argument("--limit", type=int, help="the first N problems")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--provider", default="scripted", choices=["openai", "anthropic", "scripted"])
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--reasoning-effort", choices=["low", "medium", "high"])
    p.add_argument("--scripted", help="scripted provider: a folder of <problem name>.json answer files")
    p.add_argument("--samples", type=int, default=1, help="independent runs per problem (K)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per run (R)")
    p.add_argument("--target", type=float, help="stop a run once this speedup vs eager is reached")
    p.add_argument("--profiler", default="auto", choices=["auto", "torch", "ncu", "timings", "none"])
    p.add_argument("--no-compile", action="store_true", help="skip timing the torch.compile reference")
    p.add_argument("--concurrency", type=int, default=4, help="runs in flight (their model calls overlap)")
    p.add_argument("--rpm", type=float, help="model requests per minute, across all runs")
    p.add_argument("--max-requests", type=int, default=8, help="model requests in flight at once")
    p.add_argument("--gpus", type=int, help="local pool: GPUs to use (default: all)")
    p.add_argument("--build-workers", type=int, help="local pool: build processes (default: half the cores)")
    p.add_argument("--ray", nargs="?", const="auto",
                   help="run on Ray: 'auto' (a running cluster, else a local instance), 'local', or an address")
    p.add_argument("--resume", metavar="BENCH_ID", help="continue a bench; finished runs are skipped")
    p.add_argument("--retry-failed", action="store_true", help="with --resume: run failed items again")
    p.add_argument("--report", metavar="BENCH_ID", help="print (and write) a bench's report, run nothing")
    p.add_argument("--name")
    p.add_argument("--home", help="where runs are stored (default $KFORGE_HOME or ~/.kforge)")
    p.add_argument("--out", help="also write summary.md and per_problem.csv into this folder")
    p.set_defaults(fn=_cmd_bench)

    p = sub.add_parser("profile", help="profile a candidate: torch.profiler (everywhere) or Nsight Compute")
    p.add_argument("--problem", required=True)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--candidate", required=True)
    p.add_argument("--tool", choices=["torch", "ncu"], default="torch")
    p.add_argument("--out", help="folder for ncu's raw CSV and log")
    p.set_defaults(fn=_cmd_profile)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except (ProblemError, UnknownBackend) as e:
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
