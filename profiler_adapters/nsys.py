"""Nsight Systems: import a user's `nsys stats` CSV export (e.g. `nsys stats --report cuda_gpu_kern_sum
--format csv report.nsys-rep > kernels.csv`). Several reports in one file (blank-line separated, each
with its own header) are accepted; older column spellings (`Time(%)`, `gpukernsum`) too."""

from __future__ import annotations

import csv
import io
import re

from kforge_core.profile import Metric, ProfileReport

MAX_BYTES = 5 << 20


class NsysImportError(ValueError):
    pass


def _norm(h: str) -> str:
    return re.sub(r"[^a-z%]", "", h.lower())


def _float(v: str) -> float | None:
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


def _tables(text: str) -> list[list[dict]]:
    tables, block = [], []
    for line in text.splitlines() + [""]:
        if line.strip():
            block.append(line)
        elif block:
            rows = [r for r in csv.DictReader(io.StringIO("\n".join(block)))]
            if rows and len(rows[0]) > 1:
                tables.append(rows)
            block = []
    return tables


def parse_stats_csv(data: bytes | str) -> ProfileReport:
    if isinstance(data, bytes):
        if len(data) > MAX_BYTES:
            raise NsysImportError(f"the file is {len(data) >> 20} MB; nsys stats exports are expected under "
                                  f"{MAX_BYTES >> 20} MB")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise NsysImportError("not a text file: expected the CSV printed by `nsys stats --format csv`") from None
    kernels, apis, mem = [], [], []
    for rows in _tables(data):
        cols = {_norm(k): k for k in rows[0]}
        name_col = cols.get("name") or cols.get("operation")
        if not name_col or "totaltimens" not in cols:
            continue
        names = [str(r[name_col]) for r in rows]
        # cuda_gpu_mem_time_sum names its rows by Operation; cuda_api_sum rows are cuda* calls
        target = mem if "operation" in cols else apis if all(n.startswith("cuda") for n in names) else kernels
        count_col = cols.get("instances") or cols.get("count") or cols.get("numcalls")
        for r in rows:
            total = _float(r[cols["totaltimens"]])
            if total is None:
                continue
            target.append({"name": str(r[name_col]), "total_ns": total,
                           "instances": int(_float(r[count_col]) or 0) if count_col else 0,
                           "avg_ns": _float(r[cols["avgns"]]) or 0.0 if "avgns" in cols else 0.0})
    if not (kernels or apis or mem):
        raise NsysImportError("no nsys stats table found: expected a header with `Total Time (ns)` and `Name` "
                              "(e.g. the cuda_gpu_kern_sum report as CSV)")
    metrics, rows = [], []
    if kernels:
        total = sum(k["total_ns"] for k in kernels)
        metrics += [Metric("GPU kernel time (total)", total / 1e3, "us"), Metric("distinct kernels", str(len(kernels)))]
        for k in sorted(kernels, key=lambda k: k["total_ns"], reverse=True)[:12]:
            rows.append({"kernel": k["name"][:80], "total_us": round(k["total_ns"] / 1e3, 2),
                         "instances": k["instances"], "avg_us": round(k["avg_ns"] / 1e3, 2),
                         "share": f"{k['total_ns'] / total:.0%}" if total else ""})
    if mem:
        metrics.append(Metric("GPU memory operation time (total)", sum(m["total_ns"] for m in mem) / 1e3, "us"))
    if apis:
        top = max(apis, key=lambda a: a["total_ns"])
        metrics.append(Metric("CUDA API time (total)", sum(a["total_ns"] for a in apis) / 1e3, "us",
                              f"most in {top['name']}"))
    return ProfileReport("nsys stats", metrics=metrics, kernels=rows)
