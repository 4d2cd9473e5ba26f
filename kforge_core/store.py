"""Runs and rounds on disk: a folder per run with a file per artifact, and an SQLite index.

Every artifact is written (atomically) the moment it exists, so killing the process loses at most the
round in flight. Secrets never reach the store: provider configs hold no keys.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
import uuid
import zipfile
from pathlib import Path

from kforge_core import artifacts as A

# Migrations run in order on open; PRAGMA user_version records how many have run. Stores written before
# versions existed have user_version 0 and the tables of the first migration (CREATE ... IF NOT EXISTS).
# Append new steps; never edit one that has shipped.
MIGRATIONS = [
    """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, created REAL, updated REAL, problem TEXT, backend TEXT, provider TEXT, mode TEXT,
    status TEXT, best_speedup REAL, best_round INTEGER, rounds_done INTEGER, note TEXT, config TEXT);
CREATE TABLE IF NOT EXISTS rounds (
    run_id TEXT, idx INTEGER, phase TEXT, verdict TEXT, speedup REAL, updated REAL, PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS benches (
    id TEXT PRIMARY KEY, created REAL, updated REAL, name TEXT, status TEXT, note TEXT, spec TEXT);
CREATE TABLE IF NOT EXISTS bench_items (
    bench_id TEXT, problem TEXT, sample INTEGER, run_id TEXT, PRIMARY KEY (bench_id, problem, sample));
""",
    # when the round began, and what it is doing now ("correctness trial 2/3"): progress without reading files
    "ALTER TABLE rounds ADD COLUMN started REAL; ALTER TABLE rounds ADD COLUMN detail TEXT;",
    # provider labels were "kind:model" ("scripted:" with no model): now provider_label()'s "kind · model"
    """UPDATE runs SET provider = CASE WHEN substr(provider, -1) = ':' THEN substr(provider, 1, length(provider) - 1)
       ELSE substr(provider, 1, instr(provider, ':') - 1) || ' · ' || substr(provider, instr(provider, ':') + 1) END
       WHERE instr(provider, ':') > 0""",
]
SCHEMA_VERSION = len(MIGRATIONS)


def default_home() -> Path:
    return Path(os.environ.get("KFORGE_HOME", Path.home() / ".kforge"))


def provider_label(provider: dict) -> str:
    """"openai · gpt-4o", "scripted" (no empty model after a colon)."""
    model = provider.get("model") or ""
    return f"{provider['kind']} · {model}" if model else provider["kind"]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def flag_reason(flag: str) -> str:
    """A flag's opening words ("unstable timing", "speedup unverified"): what a table has room for."""
    return re.split(r"[:(]", flag, maxsplit=1)[0].strip()


class Store:
    def __init__(self, home: str | Path | None = None):
        self.home = Path(home) if home else default_home()
        self.runs_dir = self.home / "runs"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.migrate()

    def migrate(self) -> None:
        """Run the migrations this store has not had, one transaction each (two processes opening an old
        store at once: the second sees the first's version under the write lock and skips the step)."""
        db = self._db()
        while True:
            db.execute("BEGIN IMMEDIATE")
            try:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise RuntimeError(f"{self.home}: store schema {version} is newer than this KForge "
                                       f"({SCHEMA_VERSION}); upgrade KForge to open it")
                if version == SCHEMA_VERSION:
                    db.execute("COMMIT")
                    return
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        return self._db().execute("PRAGMA user_version").fetchone()[0]

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.home / "index.sqlite", timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    # -- runs ---------------------------------------------------------------------------------------------
    def create_run(self, config: dict) -> str:
        run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.write_json(run_id, None, A.CONFIG, config)
        now = time.time()
        self._insert("runs", id=run_id, created=now, updated=now, problem=config["problem"]["name"],
                     backend=config["backend"], provider=provider_label(config["provider"]),
                     mode=config.get("mode", "auto"), status="created", rounds_done=0, note="",
                     config=json.dumps(config))
        return run_id

    def _insert(self, table: str, **row) -> None:
        with self._db() as db:
            db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                       tuple(row.values()))

    def update_run(self, run_id: str, **fields) -> None:
        fields["updated"] = time.time()
        cols = ", ".join(f"{k}=?" for k in fields)
        with self._db() as db:
            db.execute(f"UPDATE runs SET {cols} WHERE id=?", (*fields.values(), run_id))

    def run(self, run_id: str) -> dict | None:
        row = self._db().execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        return dict(row) if row else None

    def runs(self, problem: str | None = None, status: str | None = None) -> list[dict]:
        q, args = "SELECT * FROM runs", []
        where = [(c, v) for c, v in (("problem", problem), ("status", status)) if v]
        if where:
            q += " WHERE " + " AND ".join(f"{c}=?" for c, _ in where)
            args = [v for _, v in where]
        return [dict(r) for r in self._db().execute(q + " ORDER BY created DESC", args).fetchall()]

    def config(self, run_id: str) -> dict:
        return self.read_json(run_id, None, A.CONFIG)

    # -- benches: a problem set x samples, each item a run --------------------------------------------------
    def create_bench(self, name: str, spec: dict) -> str:
        bench_id = "bench-" + time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        _atomic_write(self.home / "benches" / bench_id / A.BENCH_SPEC,
                      json.dumps(A.stamped(spec), indent=1).encode())
        now = time.time()
        self._insert("benches", id=bench_id, created=now, updated=now, name=name, status="created", note="",
                     spec=json.dumps(spec))
        return bench_id

    def add_bench_item(self, bench_id: str, problem: str, sample: int, run_id: str) -> None:
        self._insert("bench_items", bench_id=bench_id, problem=problem, sample=sample, run_id=run_id)

    def update_bench(self, bench_id: str, **fields) -> None:
        fields["updated"] = time.time()
        cols = ", ".join(f"{k}=?" for k in fields)
        with self._db() as db:
            db.execute(f"UPDATE benches SET {cols} WHERE id=?", (*fields.values(), bench_id))

    def bench(self, bench_id: str) -> dict | None:
        row = self._db().execute("SELECT * FROM benches WHERE id=?", (bench_id,)).fetchone()
        return {**dict(row), "spec": json.loads(row["spec"])} if row else None

    def benches(self) -> list[dict]:
        rows = self._db().execute("SELECT * FROM benches ORDER BY created DESC").fetchall()
        return [{**dict(r), "spec": json.loads(r["spec"])} for r in rows]

    def bench_items(self, bench_id: str) -> list[dict]:
        """Each item with its run's state (status, rounds done, best speedup)."""
        rows = self._db().execute(
            "SELECT i.problem, i.sample, i.run_id, r.status, r.rounds_done, r.best_speedup, r.best_round, r.note "
            "FROM bench_items i JOIN runs r ON r.id = i.run_id WHERE i.bench_id=? ORDER BY i.problem, i.sample",
            (bench_id,)).fetchall()
        return [dict(r) for r in rows]

    # -- rounds -------------------------------------------------------------------------------------------
    def round_dir(self, run_id: str, idx: int | None) -> Path:
        d = self.runs_dir / run_id
        return d if idx is None else d / f"round_{idx:03d}"

    def set_round(self, run_id: str, idx: int, phase: str, verdict: str | None = None,
                  speedup: float | None = None, detail: str = "") -> None:
        now = time.time()
        with self._db() as db:
            db.execute("INSERT INTO rounds (run_id, idx, phase, verdict, speedup, updated, started, detail) "
                       "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(run_id, idx) DO UPDATE SET "
                       "phase=excluded.phase, verdict=COALESCE(excluded.verdict, verdict), "
                       "speedup=COALESCE(excluded.speedup, speedup), updated=excluded.updated, "
                       "detail=excluded.detail",
                       (run_id, idx, phase, verdict, speedup, now, now, detail))

    def set_round_detail(self, run_id: str, idx: int, detail: str) -> None:
        with self._db() as db:
            db.execute("UPDATE rounds SET detail=?, updated=? WHERE run_id=? AND idx=?",
                       (detail, time.time(), run_id, idx))

    def rounds(self, run_id: str) -> list[dict]:
        return [dict(r) for r in self._db().execute("SELECT * FROM rounds WHERE run_id=? ORDER BY idx",
                                                    (run_id,)).fetchall()]

    def write_text(self, run_id: str, idx: int | None, name: str, text: str) -> Path:
        p = self.round_dir(run_id, idx) / name
        _atomic_write(p, text.encode())
        return p

    def write_bytes(self, run_id: str, idx: int | None, name: str, data: bytes) -> Path:
        p = self.round_dir(run_id, idx) / name
        _atomic_write(p, data)
        return p

    def write_json(self, run_id: str, idx: int | None, name: str, obj) -> Path:
        return self.write_text(run_id, idx, name, json.dumps(A.stamped(obj), indent=1, default=str))

    def read_text(self, run_id: str, idx: int | None, name: str) -> str | None:
        p = self.round_dir(run_id, idx) / name
        return p.read_text() if p.exists() else None

    def read_json(self, run_id: str, idx: int | None, name: str):
        t = self.read_text(run_id, idx, name)
        return A.unstamped(json.loads(t)) if t is not None else None

    def exists(self, run_id: str, idx: int | None, name: str) -> bool:
        return (self.round_dir(run_id, idx) / name).exists()

    def move(self, run_id: str, idx: int | None, name: str, dest: str) -> None:
        """Rename an artifact within the run's folder (a re-analysis keeps the analysis it replaces)."""
        src, to = self.round_dir(run_id, idx) / name, self.round_dir(run_id, idx) / dest
        if src.exists():
            to.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, to)

    def images(self, run_id: str, idx: int) -> list[Path]:
        return sorted((self.round_dir(run_id, idx) / A.IMAGES_DIR).glob("*.png"))

    # -- export -------------------------------------------------------------------------------------------
    def best_measured(self, run_id: str) -> dict | None:
        """The fastest correct round whatever its flags: {round, speedup, flags}. A run whose every correct
        round was flagged (a loaded laptop flags nearly every CPU timing) has no counted best, but it has this."""
        best = None
        for r in self.rounds(run_id):
            ev = self.read_json(run_id, r["idx"], A.EVAL) or {}
            t = ev.get("timings") or {}
            if ev.get("verdict") != "correct" or "candidate" not in t or "eager" not in t:
                continue
            cand = t["candidate"].get("median_ms") or 0
            speedup = t["eager"]["median_ms"] / cand if cand > 0 else None
            if speedup is not None and (best is None or speedup > best["speedup"]):
                best = {"round": r["idx"], "speedup": speedup, "flags": list(ev.get("flags") or [])}
        return best

    def best_kernel_source(self, run_id: str) -> str | None:
        """The best correct round's program as a standalone file, with where it came from on top: the best
        counted round, else the fastest correct one with the flags that kept it from counting."""
        run = self.run(run_id)
        if not run:
            return None
        idx, measured = run["best_round"], None
        if idx is None:
            measured = self.best_measured(run_id)
            if measured is None:
                return None
            idx = measured["round"]
        code = self.read_text(run_id, idx, A.PROGRAM)
        if code is None:  # the program file is missing: say so rather than fail the page that asked
            return None
        speedup = run["best_speedup"] if measured is None else measured["speedup"]
        head = (f"# KForge best kernel: run {run_id}, round {idx}, problem {run['problem']}, "
                f"backend {run['backend']}, {speedup:.2f}x vs PyTorch eager")
        if measured is not None and measured["flags"]:
            head += " (measured, not counted: " + "; ".join(map(flag_reason, measured["flags"])) + ")"
        return head + "\n" + code

    def best_label(self, run_id: str) -> str:
        """The run's best as a person should read it: the counted best, else the best measured and why it is
        not counted, else "-"."""
        run = self.run(run_id) or {}
        if run.get("best_speedup"):
            return f"{run['best_speedup']:.2f}x"
        measured = self.best_measured(run_id)
        if not measured:
            return "-"
        why = "; ".join(map(flag_reason, measured["flags"])) or "not counted"
        return f"{measured['speedup']:.2f}x measured, not counted: {why}"

    def export_zip(self, run_id: str, dest):
        """Write every artifact of a run into a zip at `dest` (a path or a binary file object)."""
        root = self.round_dir(run_id, None)
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*")):
                if f.is_file() and not f.name.startswith("."):
                    z.write(f, f"{run_id}/{f.relative_to(root)}")
        return dest
