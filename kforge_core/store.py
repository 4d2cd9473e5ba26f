"""Runs and rounds on disk: a folder per run with a file per artifact, and an SQLite index.

Every artifact is written (atomically) the moment it exists, so killing the process loses at most the
round in flight. Secrets never reach the store: provider configs hold no keys.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
import zipfile
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, created REAL, updated REAL, problem TEXT, backend TEXT, provider TEXT, mode TEXT,
    status TEXT, best_speedup REAL, best_round INTEGER, rounds_done INTEGER, note TEXT, config TEXT);
CREATE TABLE IF NOT EXISTS rounds (
    run_id TEXT, idx INTEGER, phase TEXT, verdict TEXT, speedup REAL, updated REAL, PRIMARY KEY (run_id, idx));
CREATE TABLE IF NOT EXISTS benches (
    id TEXT PRIMARY KEY, created REAL, updated REAL, name TEXT, status TEXT, note TEXT, spec TEXT);
CREATE TABLE IF NOT EXISTS bench_items (
    bench_id TEXT, problem TEXT, sample INTEGER, run_id TEXT, PRIMARY KEY (bench_id, problem, sample));
"""


def default_home() -> Path:
    return Path(os.environ.get("KFORGE_HOME", Path.home() / ".kforge"))


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Store:
    def __init__(self, home: str | Path | None = None):
        self.home = Path(home) if home else default_home()
        self.runs_dir = self.home / "runs"
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._db() as db:
            db.executescript(SCHEMA)

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
        self.write_json(run_id, None, "config.json", config)
        now = time.time()
        with self._db() as db:
            db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       (run_id, now, now, config["problem"]["name"], config["backend"],
                        f"{config['provider']['kind']}:{config['provider'].get('model', '')}", config.get("mode", "auto"),
                        "created", None, None, 0, "", json.dumps(config)))
        return run_id

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
        return self.read_json(run_id, None, "config.json")

    # -- benches: a problem set x samples, each item a run --------------------------------------------------
    def create_bench(self, name: str, spec: dict) -> str:
        bench_id = "bench-" + time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        _atomic_write(self.home / "benches" / bench_id / "spec.json", json.dumps(spec, indent=1).encode())
        now = time.time()
        with self._db() as db:
            db.execute("INSERT INTO benches VALUES (?,?,?,?,?,?,?)",
                       (bench_id, now, now, name, "created", "", json.dumps(spec)))
        return bench_id

    def add_bench_item(self, bench_id: str, problem: str, sample: int, run_id: str) -> None:
        with self._db() as db:
            db.execute("INSERT INTO bench_items VALUES (?,?,?,?)", (bench_id, problem, sample, run_id))

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
                  speedup: float | None = None) -> None:
        with self._db() as db:
            db.execute("INSERT INTO rounds VALUES (?,?,?,?,?,?) ON CONFLICT(run_id, idx) DO UPDATE SET "
                       "phase=excluded.phase, verdict=COALESCE(excluded.verdict, verdict), "
                       "speedup=COALESCE(excluded.speedup, speedup), updated=excluded.updated",
                       (run_id, idx, phase, verdict, speedup, time.time()))

    def rounds(self, run_id: str) -> list[dict]:
        return [dict(r) for r in self._db().execute("SELECT * FROM rounds WHERE run_id=? ORDER BY idx",
                                                    (run_id,)).fetchall()]

    def discard_incomplete_rounds(self, run_id: str) -> None:
        """A round that was in flight when its process died is removed, to be redone from scratch."""
        import shutil

        for r in self.rounds(run_id):
            if r["phase"] not in ("done", "gate"):
                shutil.rmtree(self.round_dir(run_id, r["idx"]), ignore_errors=True)
                with self._db() as db:
                    db.execute("DELETE FROM rounds WHERE run_id=? AND idx=?", (run_id, r["idx"]))

    def write_text(self, run_id: str, idx: int | None, name: str, text: str) -> Path:
        p = self.round_dir(run_id, idx) / name
        _atomic_write(p, text.encode())
        return p

    def write_bytes(self, run_id: str, idx: int | None, name: str, data: bytes) -> Path:
        p = self.round_dir(run_id, idx) / name
        _atomic_write(p, data)
        return p

    def write_json(self, run_id: str, idx: int | None, name: str, obj) -> Path:
        return self.write_text(run_id, idx, name, json.dumps(obj, indent=1, default=str))

    def read_text(self, run_id: str, idx: int | None, name: str) -> str | None:
        p = self.round_dir(run_id, idx) / name
        return p.read_text() if p.exists() else None

    def read_json(self, run_id: str, idx: int | None, name: str):
        t = self.read_text(run_id, idx, name)
        return json.loads(t) if t is not None else None

    def images(self, run_id: str, idx: int) -> list[Path]:
        return sorted((self.round_dir(run_id, idx) / "images").glob("*.png"))

    # -- export -------------------------------------------------------------------------------------------
    def best_kernel_source(self, run_id: str) -> str | None:
        """The best correct round's program as a standalone file, with where it came from on top."""
        run = self.run(run_id)
        if not run or run["best_round"] is None:
            return None
        code = self.read_text(run_id, run["best_round"], "program.py")
        head = (f"# KForge best kernel: run {run_id}, round {run['best_round']}, problem {run['problem']}, "
                f"backend {run['backend']}, {run['best_speedup']:.2f}x vs PyTorch eager\n")
        return head + code

    def export_zip(self, run_id: str, dest):
        """Write every artifact of a run into a zip at `dest` (a path or a binary file object)."""
        root = self.round_dir(run_id, None)
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*")):
                if f.is_file() and not f.name.startswith("."):
                    z.write(f, f"{run_id}/{f.relative_to(root)}")
        return dest
