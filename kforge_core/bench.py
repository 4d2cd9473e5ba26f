"""Batch mode: a problem set x backend x provider, K samples of R rounds each, run unattended.

Every (problem, sample) item is an ordinary run in the store, created up front, so a bench resumes by
running the items whose runs are not finished yet (a run itself resumes from its last completed round).
Sessions run concurrently on driver threads (their model calls share one RateLimiter); their evaluations
go to an executor (local process pool or Ray) that places builds on CPU workers and evaluations on GPUs.
"""

from __future__ import annotations

import threading
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from kforge_core.executors import Executor
from kforge_core.llm.ratelimit import RateLimiter
from kforge_core.metrics import ProblemOutcome
from kforge_core.problems import Problem, ProblemError, builtin_problems, load_problem_folder
from kforge_core.runner import ProviderFactory
from kforge_core import artifacts as A
from kforge_core.evaluation import Verdict
from kforge_core.session import RunConfig, Session
from kforge_core.store import Store

FINAL_STATUSES = ("finished", "stopped", "failed")


@dataclass
class BenchSpec:
    name: str
    backend: str
    provider: dict  # ProviderConfig dict; a scripted provider's path may be a folder of <problem>.json files
    problem_set: str  # where the problems came from, for the record ("built-in", "folder .../level1", ...)
    samples: int = 1
    rounds: int = 3
    profiler: str = "auto"
    target_speedup: float | None = None
    eval_settings: dict = field(default_factory=dict)
    analysis_provider: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def problem_set(source: str = "builtin", level: int | None = None, only: list[str] | None = None,
                limit: int | None = None) -> tuple[list[Problem], list[ProblemError], str]:
    """The built-in suite or a KernelBench-format folder, optionally one level of it, some names, the first N.
    Broken files come back as errors beside the problems that loaded."""
    if source == "builtin":
        problems, errors, desc = builtin_problems(), [], "built-in suite"
    else:
        root = Path(source)
        if level is not None and (root / f"level{level}").is_dir():
            root = root / f"level{level}"
            level = None
        problems, errors = load_problem_folder(root)
        if root != Path(source):  # names relative to the folder given, e.g. level1/1_ReLU
            problems = [Problem.from_dict({**p.to_dict(), "name": f"{root.name}/{p.name}"}) for p in problems]
        desc = f"folder {root}"
    if level is not None:
        problems = [p for p in problems if p.level == level or p.name.startswith(f"level{level}/")]
        desc += f", level {level}"
    if only:
        wanted = set(only)
        problems = [p for p in problems if p.name in wanted or p.name.split("/")[-1] in wanted]
        missing = wanted - {p.name for p in problems} - {p.name.split("/")[-1] for p in problems}
        errors += [ProblemError(f"{m}: not in the problem set") for m in sorted(missing)]
        desc += f", {len(problems)} chosen"
    if limit:
        problems = problems[:limit]
        desc += f", first {limit}"
    return problems, errors, desc


def provider_for(provider: dict, problem: Problem, role: str) -> dict:
    """A scripted provider given a folder answers each problem from FOLDER/<problem name>.json."""
    cfg = dict(provider)
    path = cfg.get("scripted_path")
    if cfg.get("kind") == "scripted" and path and Path(path).is_dir():
        cfg["scripted_path"] = str(Path(path) / f"{problem.name}.json")
        cfg["scripted_role"] = role
    return cfg


def create_bench(store: Store, spec: BenchSpec, problems: list[Problem]) -> str:
    """Record the bench and one run per (problem, sample); nothing runs yet."""
    if not problems:
        raise ValueError("the problem set is empty")
    bench_id = store.create_bench(spec.name, {**spec.to_dict(), "problems": [p.name for p in problems]})
    for p in problems:
        analysis = spec.analysis_provider or (spec.provider if spec.provider.get("kind") == "scripted" else None)
        for k in range(spec.samples):
            cfg = RunConfig(problem=p.to_dict(), backend=spec.backend,
                            provider=provider_for(spec.provider, p, "generation"),
                            analysis_provider=provider_for(analysis, p, "analysis") if analysis else None,
                            max_rounds=spec.rounds, target_speedup=spec.target_speedup, mode="auto",
                            eval_settings=spec.eval_settings, profiler=spec.profiler)
            store.add_bench_item(bench_id, p.name, k, Session.create(store, cfg))
    return bench_id


@dataclass
class Progress:
    done: int
    total: int
    item: dict  # the bench item that just ended (problem, sample, run_id, status, best_speedup, ...)


class BenchRunner:
    def __init__(self, store: Store, bench_id: str, executor: Executor, providers: ProviderFactory,
                 concurrency: int = 4, limiter: RateLimiter | None = None,
                 on_progress: Callable[[Progress], None] | None = None):
        self.store, self.bench_id, self.executor, self.providers = store, bench_id, executor, providers
        self.concurrency, self.limiter, self.on_progress = max(1, concurrency), limiter, on_progress
        self.stop_requested = threading.Event()
        self._sessions: dict[str, Session] = {}

    def pending(self, retry_failed: bool = False) -> list[dict]:
        final = ("finished", "stopped") if retry_failed else FINAL_STATUSES
        return [i for i in self.store.bench_items(self.bench_id) if i["status"] not in final]

    def run(self, retry_failed: bool = False) -> str:
        items = self.store.bench_items(self.bench_id)
        todo = self.pending(retry_failed)
        done = len(items) - len(todo)
        self.store.update_bench(self.bench_id, status="running", note=f"{self.executor.describe()}")
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="kforge-bench") as pool:
            futures = [pool.submit(self._run_item, i["run_id"]) for i in todo]
            for f in as_completed(futures):
                done += 1
                if self.on_progress:
                    self.on_progress(Progress(done, len(items), f.result()))
        status = "stopped" if self.stop_requested.is_set() else "finished"
        self.store.update_bench(self.bench_id, status=status)
        return status

    def stop(self) -> None:
        self.stop_requested.set()
        for s in list(self._sessions.values()):
            s.stop_requested.set()

    def _run_item(self, run_id: str) -> dict:
        store = self.store
        try:
            if not self.stop_requested.is_set():
                gen, ana = self.providers(store.config(run_id), run_id)
                for p in {id(gen): gen, id(ana): ana}.values():
                    p.limiter = self.limiter
                session = Session(store, run_id, gen, ana, executor=self.executor)
                self._sessions[run_id] = session
                session.stop_requested = self.stop_requested  # one stop for the whole bench
                if session.run() == "stopped" and self.stop_requested.is_set():
                    store.update_run(run_id, status="interrupted", note="the bench was stopped; resume it")
        except Exception as e:  # one item failing (API error, broken pool) must not sink the bench
            store.update_run(run_id, status="failed", note=f"{type(e).__name__}: {e}")
            store.write_text(run_id, None, A.RUN_ERROR, traceback.format_exc())
        finally:
            self._sessions.pop(run_id, None)
        return next(i for i in store.bench_items(self.bench_id) if i["run_id"] == run_id)


# -- results -----------------------------------------------------------------------------------------------
def run_outcome(store: Store, item: dict) -> ProblemOutcome:
    """A run's result as one outcome: its best correct round's speedups, and the tokens / cost of all rounds."""
    run_id = item["run_id"]
    rounds = store.rounds(run_id)
    correct = any(r["verdict"] == "correct" for r in rounds)
    eager = compiled = share = None
    best = item.get("best_round")
    if best is not None:
        ev = store.read_json(run_id, best, A.EVAL) or {}
        eager, compiled = _speedup(ev, "eager"), _speedup(ev, "compiled")
    for r in ([{"idx": best}] if best is not None else []) + list(reversed(rounds)):
        share = (store.read_json(run_id, r["idx"], A.EVAL) or {}).get("own_kernel_share")
        if share is not None:
            break
    tokens, cost, priced = 0, 0.0, False
    for r in rounds:
        for name in (A.GENERATION, A.ANALYSIS):
            u = (store.read_json(run_id, r["idx"], name) or {}).get("usage") or {}
            tokens += int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0)
            if u.get("cost_usd") is not None:
                cost, priced = cost + u["cost_usd"], True
    verdicts = [r["verdict"] for r in rounds if r["verdict"]]
    reason = ""
    if not correct:
        last = next((ev for r in reversed(rounds) if (ev := store.read_json(run_id, r["idx"], A.EVAL))), None)
        reason = ((last or {}).get("messages") or [""])[0] or (store.run(run_id) or {}).get("note") or ""
    return ProblemOutcome(item["problem"], correct, eager, compiled, cost if priced else None, tokens,
                          sample=item["sample"], status=item["status"],
                          verdict=("correct" if correct else (verdicts[-1] if verdicts else item["status"])),
                          rounds=len(rounds), harness_faults=sum(not Verdict(v).candidates_fault for v in verdicts),
                          reason=reason[:300], own_kernel_share=share,
                          not_counted=store.best_label(run_id) if correct and best is None else "")


def _speedup(ev: dict, baseline: str) -> float | None:
    t = ev.get("timings") or {}
    cand, base = (t.get("candidate") or {}).get("median_ms"), (t.get(baseline) or {}).get("median_ms")
    return base / cand if cand and base else None


def bench_outcomes(store: Store, bench_id: str) -> list[ProblemOutcome]:
    return [run_outcome(store, i) for i in store.bench_items(bench_id)]


def best_of_samples(outcomes: list[ProblemOutcome]) -> list[ProblemOutcome]:
    """Per problem, the best of its K samples (correct first, then the eager speedup): fast_p@K."""
    best: dict[str, ProblemOutcome] = {}
    for o in outcomes:
        b = best.get(o.problem)
        key = (o.correct, o.speedup_eager or 0.0)
        if b is None or key > (b.correct, b.speedup_eager or 0.0):
            best[o.problem] = o
    return [best[p] for p in sorted(best)]


def bench_report(store: Store, bench_id: str) -> tuple[str, str]:
    """(Markdown report: fast_p, speedups, per problem; per-problem CSV) of a bench, as it stands."""
    from kforge_core.metrics import fast_p_table, per_problem_csv, per_problem_table, speedup_table

    b = store.bench(bench_id)
    outcomes = bench_outcomes(store, bench_id)
    spec, prov = b["spec"], b["spec"]["provider"]
    parts = [f"# {b['name']} ({bench_id})", "",
             f"{spec['problem_set']}; backend {spec['backend']}; provider {prov['kind']}"
             f"{' · ' + prov['model'] if prov.get('model') else ''}; {spec['samples']} sample(s) x "
             f"{spec['rounds']} round(s); status {b['status']}; {b['note']}", "",
             "## fast_p (each sample's best round)", "", fast_p_table(outcomes), "",
             "## Speedups and cost", "", speedup_table(outcomes), ""]
    if spec["samples"] > 1:
        parts += [f"## fast_p, best of {spec['samples']} samples per problem", "",
                  fast_p_table(best_of_samples(outcomes)), ""]
    faults = [o for o in outcomes if o.harness_faults]
    if faults:
        parts += ["## Rounds the harness could not judge", "",
                  f"{sum(o.harness_faults for o in faults)} round(s) in {len(faults)} sample(s) ended in harness_error "
                  "or does_not_fit: KForge's own failure or a problem too large for this device, not the candidate's. "
                  "They count as not correct above; see each round's message.", ""]
    parts += ["## Per problem", "", per_problem_table(outcomes), ""]
    return "\n".join(parts), per_problem_csv(outcomes)


def write_bench_report(store: Store, bench_id: str, out: str | Path | None = None) -> str:
    """Write summary.md and per_problem.csv beside the bench (and into `out`); return the Markdown."""
    md, csv_text = bench_report(store, bench_id)
    for d in [store.home / "benches" / bench_id] + ([Path(out)] if out else []):
        d.mkdir(parents=True, exist_ok=True)
        (d / A.REPORT_SUMMARY).write_text(md)
        (d / A.REPORT_TABLE).write_text(csv_text)
    return md


def make_executor(backend: str, ray: str | None = None, gpus: int | None = None,
                  build_workers: int | None = None) -> Executor:
    """The local process pool, or Ray when `ray` is given ("auto", "local" or a cluster address)."""
    if ray:
        from kforge_core.ray_executor import RayExecutor

        return RayExecutor(ray, backend)
    from kforge_core.executors import PoolExecutor

    return PoolExecutor.for_backend(backend, gpus, build_workers)


class BenchManager:
    """Benches running in background threads of this process (the app); the page polls the store."""

    def __init__(self, store: Store, providers: ProviderFactory):
        self.store, self.providers = store, providers
        self._threads: dict[str, threading.Thread] = {}
        self._runners: dict[str, BenchRunner] = {}
        for b in store.benches():  # benches left running by a process that died
            if b["status"] == "running":
                store.update_bench(b["id"], status="interrupted")

    def is_active(self, bench_id: str) -> bool:
        t = self._threads.get(bench_id)
        return t is not None and t.is_alive()

    def start(self, bench_id: str, ray: str | None = None, concurrency: int = 4,
              per_minute: float | None = None) -> bool:
        if self.is_active(bench_id):
            return False
        self.store.update_bench(bench_id, status="running")
        t = threading.Thread(target=self._work, args=(bench_id, ray, concurrency, per_minute), daemon=True,
                             name=f"kforge-bench-{bench_id}")
        self._threads[bench_id] = t
        t.start()
        return True

    def stop(self, bench_id: str) -> None:
        r = self._runners.get(bench_id)
        if r:
            r.stop()

    def wait(self, bench_id: str, timeout: float | None = None) -> None:
        t = self._threads.get(bench_id)
        if t:
            t.join(timeout)

    def _work(self, bench_id: str, ray: str | None, concurrency: int, per_minute: float | None) -> None:
        executor = None
        try:
            executor = make_executor(self.store.bench(bench_id)["spec"]["backend"], ray)
            runner = BenchRunner(self.store, bench_id, executor, self.providers, concurrency,
                                 RateLimiter(per_minute, 8))
            self._runners[bench_id] = runner
            runner.run()
            write_bench_report(self.store, bench_id)
        except Exception as e:  # e.g. Ray missing or a cluster unreachable: say so on the bench
            self.store.update_bench(bench_id, status="failed", note=f"{type(e).__name__}: {e}")
        finally:
            self._runners.pop(bench_id, None)
            if executor:
                executor.close()
