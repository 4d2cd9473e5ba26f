"""Profiler adapters: recorded ncu CSV, torch.profiler on the CPU backend, nsys stats import, screenshots."""

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from kforge_core.backends import get_backend
from kforge_core.problems import resolve_problem
from profiler_adapters import ncu, nsys, screenshots, torch_profiler

DATA = Path(__file__).parent / "data"


# -- Nsight Compute (CSV recorded on the device machine: bench/results/2026-11-22_h100_ncu) ---------------

def test_ncu_details_csv_reduces_to_a_compact_report():
    kernels = ncu.parse_details_csv((DATA / "ncu/layernorm_h100_details.csv").read_text())
    assert len(kernels) == 1 and kernels[0].name.startswith("layernorm_kernel")
    report = ncu.report_from_kernels(kernels)
    m = {x.name: x for x in report.metrics}
    assert m["duration"].value == pytest.approx(12540, rel=0.01) and m["duration"].unit == "ns"
    assert m["SM throughput (% of peak)"].value == pytest.approx(45.99)
    assert m["memory throughput (% of peak)"].value == pytest.approx(36.46)
    assert m["achieved occupancy"].value == pytest.approx(82.29) and m["theoretical occupancy"].value == 100
    assert m["occupancy limiter"].value == "Registers" and m["registers per thread"].value == 29
    assert m["static shared memory per block"].value == 128
    assert m["DRAM bytes (read + write)"].value > 1e6
    assert "L1/TEX hit rate" in m and "L2 hit rate" in m
    stalls = [x for x in report.metrics if x.name.startswith("warp stall:")]
    assert [s.name for s in stalls][0] == "warp stall: long_scoreboard" and len(stalls) == 3
    assert stalls[0].value >= stalls[1].value >= stalls[2].value
    assert any(f.startswith("OPT SOLBottleneck") for f in report.findings)
    assert any("estimated speedup" in f for f in report.findings)
    text = report.render_text()
    assert len(text) < 7000 and "long_scoreboard" in text and "Tool findings" in text


def test_ncu_softmax_csv_and_kernel_table():
    report = ncu.report_from_kernels(ncu.parse_details_csv((DATA / "ncu/softmax_h100_details.csv").read_text()))
    assert report.kernels and report.kernels[0]["kernel"].startswith("softmax_kernel")
    assert report.kernels[0]["share"] == "100%"


def test_ncu_garbage_and_empty_output():
    assert ncu.parse_details_csv("==PROF== Disconnected\nnot,a,csv") == []
    report = ncu.report_from_kernels([])
    assert report.metrics == [] and "no kernel" in report.notes[0]


def test_ncu_missing_gives_clear_message(monkeypatch):
    monkeypatch.setattr(ncu, "ncu_path", lambda: None)
    with pytest.raises(ncu.NcuUnavailable, match="not installed"):
        ncu.profile(resolve_problem("level1/1_ReLU"), "x", "cuda")


# -- torch.profiler on the CPU backend (real compile, sandboxed) ---------------------------------------------

def test_torch_profiler_on_cpu_backend():
    cpu = get_backend("cpu")
    src = cpu.example_for("level1/1_ReLU").read_text()
    report = torch_profiler.profile(resolve_problem("level1/1_ReLU"), src, "cpu")
    sides = {r["side"] for r in report.kernels}
    assert sides == {"candidate", "reference"}
    ref_ops = [r["op"] for r in report.kernels if r["side"] == "reference"]
    assert any("relu" in op for op in ref_ops)
    cand_ops = [r["op"] for r in report.kernels if r["side"] == "candidate"]
    assert not any(op == "aten::relu" for op in cand_ops)  # the candidate's kernel is not a PyTorch op
    assert all(m.value > 0 for m in report.metrics if "wall" in m.name)
    assert any(r["op"].startswith("(custom kernels") for r in report.kernels if r["side"] == "candidate")
    assert "torch.profiler" in report.render_text()


def test_torch_profiler_failure_is_reported():
    bad = get_backend("cpu").example_for("level1/1_ReLU").read_text().replace("relu_forward(x)", "missing(x)")
    with pytest.raises(torch_profiler.ProfileFailed, match="exited"):
        torch_profiler.profile(resolve_problem("level1/1_ReLU"), bad, "cpu")


# -- Nsight Systems stats import -----------------------------------------------------------------------------

KERN_SUM = '''"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"
"72.4","1450112","100","14501.1","14496.0","14304","15072","120.3","softmax_kernel(const float *, float *, int)"
"27.6","552960","100","5529.6","5504.0","5440","5920","80.1","void at::native::vectorized_elementwise_kernel<4>(int)"
'''
MEM_SUM = '''"Time (%)","Total Time (ns)","Count","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Operation"
"100.0","88000","4","22000.0","22000.0","21000","23000","800.0","[CUDA memcpy Host-to-Device]"
'''
API_SUM = '''Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
80.0,900000,200,4500.0,4400.0,4000,9000,300.0,cudaLaunchKernel
20.0,225000,1,225000.0,225000.0,225000,225000,0.0,cudaDeviceSynchronize
'''


def test_nsys_stats_import_several_reports():
    report = nsys.parse_stats_csv((KERN_SUM + "\n" + MEM_SUM + "\n" + API_SUM).encode())
    m = {x.name: x for x in report.metrics}
    assert m["GPU kernel time (total)"].value == pytest.approx(2003.072)
    assert m["distinct kernels"].value == "2"
    assert m["GPU memory operation time (total)"].value == pytest.approx(88.0)
    assert "cudaLaunchKernel" in m["CUDA API time (total)"].note
    assert report.kernels[0]["kernel"].startswith("softmax_kernel") and report.kernels[0]["share"] == "72%"
    assert report.kernels[0]["instances"] == 100


def test_nsys_old_spelling_and_errors():
    old = KERN_SUM.replace('"Time (%)"', '"Time(%)"').replace('"Total Time (ns)"', '"Total Time (ns)"')
    assert nsys.parse_stats_csv(old).kernels
    with pytest.raises(nsys.NsysImportError, match="no nsys stats table"):
        nsys.parse_stats_csv(b"just,some\n1,2\n")
    with pytest.raises(nsys.NsysImportError, match="not a text file"):
        nsys.parse_stats_csv(b"\xff\xfe\x00\x81binary")


# -- screenshots ----------------------------------------------------------------------------------------------

def _png(w, h, color=(200, 30, 30), **info) -> bytes:
    img = Image.new("RGB", (w, h), color)
    buf = io.BytesIO()
    from PIL import PngImagePlugin

    meta = PngImagePlugin.PngInfo()
    for k, v in info.items():
        meta.add_text(k, v)
    img.save(buf, format="PNG", pnginfo=meta)
    return buf.getvalue()


def test_screenshot_is_downscaled_and_stripped():
    data = _png(3000, 1500, Author="secret-user", Comment="exported from Nsight")
    img = screenshots.normalise_screenshot(data, "ncu_details.png", "Nsight Compute details")
    with Image.open(io.BytesIO(img.data)) as out:
        assert out.format == "PNG" and max(out.size) == screenshots.MODEL_LONG_SIDE
        assert out.size == (1568, 784) and not out.text  # no text chunks carried over
    assert img.mime == "image/png" and img.label == "Nsight Compute details"


def test_jpeg_accepted_and_small_image_kept():
    buf = io.BytesIO()
    Image.new("RGB", (640, 480), (0, 90, 200)).save(buf, format="JPEG")
    img = screenshots.normalise_screenshot(buf.getvalue(), "instruments.jpg")
    with Image.open(io.BytesIO(img.data)) as out:
        assert out.size == (640, 480)


def test_truncated_png_is_refused():
    data = _png(800, 600)
    with pytest.raises(screenshots.ImageRejected, match="corrupt or truncated"):
        screenshots.normalise_screenshot(data[: len(data) // 2], "cut.png")


def test_fifty_megapixel_image_is_refused_without_decoding():
    # A valid PNG header claiming 10000 x 5000 pixels (50 MP); the pixel data need not exist.
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    header = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 10000, 5000, 8, 2, 0, 0, 0))
    data = header + chunk(b"IDAT", zlib.compress(b"\x00" * 1000)) + chunk(b"IEND", b"")
    with pytest.raises(screenshots.ImageRejected, match="50 megapixels"):
        screenshots.normalise_screenshot(data, "huge.png")


def test_text_file_renamed_png_and_empty_and_oversized():
    with pytest.raises(screenshots.ImageRejected, match="not an image"):
        screenshots.normalise_screenshot(b"Duration 12.5 us\nSM throughput 46%\n", "notes.png")
    with pytest.raises(screenshots.ImageRejected, match="empty"):
        screenshots.normalise_screenshot(b"", "empty.png")
    with pytest.raises(screenshots.ImageRejected, match="over the 20 MB limit"):
        screenshots.normalise_screenshot(b"\x89PNG" + b"\x00" * (21 << 20), "big.png")


def test_gif_is_refused_by_format():
    buf = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buf, format="GIF")
    with pytest.raises(screenshots.ImageRejected, match="GIF images are not accepted"):
        screenshots.normalise_screenshot(buf.getvalue(), "anim.gif")


# -- device time from a trace: counted once, split into the candidate's kernels and the rest ------------------

def test_own_kernel_names_and_trace_matching():
    from kforge_core.evaluation.judging.device_time import is_own, own_kernel_names

    src = ("template <typename T>\n__global__ void __launch_bounds__(256) relu_kernel(T* x) {}\n"
           "extern \"C\" __global__ void cfn(float* x) {}\n__global__ void nvjet_tst(float* x) {}\n"
           "@triton.jit\ndef _copy(src, dst):\n    pass\n")
    own = own_kernel_names(src)
    assert own == {"relu_kernel", "cfn", "nvjet_tst", "_copy"}
    assert is_own("void relu_kernel<float>(float*)", own) and is_own("_copy", own) and is_own("cfn", own)
    assert is_own("_Z11relu_kernelIfEvPT_", own)
    # library kernels stay library kernels, also when the candidate borrows their names
    assert not is_own("void at::native::vectorized_elementwise_kernel<4, at::native::relu_kernel>(int)", own)
    assert not is_own("nvjet_tst", own) and not is_own("Memcpy DtoD (Device -> Device)", own)


def test_gpu_report_counts_kernels_once_and_keeps_cpu_ops_apart():
    tables = {side: {"kernels": [{"name": "k", "calls": 5, "us": 500.0}], "kernel_us": 500.0,
                     "ops": [{"name": "aten::relu", "calls": 5, "us": 50.0}], "op_us": 50.0}
              for side in ("candidate", "reference")}
    r = torch_profiler.report_from_tables(tables, "cuda", 5, {"candidate": 104.0, "reference": 101.0})
    m = {x.name: x.value for x in r.metrics}
    assert m["candidate: GPU kernel time per forward"] == 100.0
    assert m["reference: CPU operator time per forward"] == 10.0
    assert [k["op"] for k in r.kernels] == ["k", "k"]
