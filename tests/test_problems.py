import pytest

from kernelbench_format import LEVEL_COUNTS, write_kernelbench_folder
from kforge_core.evaluation import check_problem
from kforge_core.problems import (ProblemError, builtin_problems, load_problem_file, load_problem_folder,
                                  problem_from_source, resolve_problem)


def test_builtin_suite_spans_levels():
    problems = builtin_problems()
    assert len(problems) >= 12
    by_level = {lvl: [p for p in problems if p.level == lvl] for lvl in (1, 2, 3)}
    assert len(by_level[1]) >= 5 and len(by_level[2]) >= 3 and len(by_level[3]) >= 2
    names = " ".join(p.name for p in problems)
    for needle in ("ReLU", "Sum_reduction", "Softmax", "matrix_multiplication", "Conv2d", "Gemm_BiasAdd_ReLU",
                   "Conv2d_BatchNorm_ReLU", "MLP", "TransformerBlock"):
        assert needle in names
    assert all(p.description for p in problems)


def test_every_builtin_reference_runs():
    for p in builtin_problems():
        check_problem(p)  # raises ProblemError on a broken one


def test_kernelbench_format_folder_loads_every_file(tmp_path):
    n = write_kernelbench_folder(tmp_path)
    assert n == sum(LEVEL_COUNTS.values()) == 270
    problems, errors = load_problem_folder(tmp_path)
    assert errors == [] and len(problems) == 270
    assert {p.level for p in problems} == {1, 2, 3, 4}
    names = [p.name for p in problems]
    assert names[:3] == ["level1/1_Sigmoid_1", "level1/2_Tanh_2", "level1/3_Exp_3"]  # natural numeric order
    level4 = [p for p in problems if p.level == 4]
    assert "transformers" in level4[0].source  # loads although transformers is not importable here
    # and the generated files really run: one of each runnable level
    for name in ("level1/1_Sigmoid_1", "level2/7_Conv2d_Tanh_BiasAdd", "level3/2_ResNetLike2"):
        check_problem(next(p for p in problems if p.name == name))


def test_broken_folder_entries_are_reported_not_raised(tmp_path):
    (tmp_path / "good.py").write_text((builtin_problems()[0]).source)
    (tmp_path / "bad.py").write_text("def get_inputs(:\n")
    problems, errors = load_problem_folder(tmp_path)
    assert [p.name for p in problems] == ["good"]
    assert len(errors) == 1 and "bad.py:1: syntax error" in str(errors[0])


@pytest.mark.parametrize("source,needle", [
    ("", "the file is empty"),
    ("import torch\nclass Model(:\n", "syntax error"),
    ("import torch\ndef get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n",
     "missing top-level Model"),
    ("import torch.nn as nn\nclass Model(nn.Module):\n    pass\ndef get_init_inputs():\n    return []\n",
     "missing top-level get_inputs"),
])
def test_static_problem_errors_name_file_and_cause(tmp_path, source, needle):
    f = tmp_path / "broken_problem.py"
    f.write_text(source)
    with pytest.raises(ProblemError) as e:
        load_problem_file(f)
    assert str(f) in str(e.value) and needle in str(e.value)


def test_binary_file_is_refused(tmp_path):
    f = tmp_path / "blob.py"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ProblemError, match="not a UTF-8 text file"):
        load_problem_file(f)


RUNTIME_BROKEN = {
    "get_inputs raising": ("def get_inputs():\n    raise RuntimeError('dataset missing')\n",
                           "get_inputs() raised RuntimeError: dataset missing"),
    "get_inputs not a list": ("def get_inputs():\n    return 3\n", "get_inputs() must return a list, got int"),
    "non-tensor output": ("def get_inputs():\n    return [torch.randn(2)]\n", "returned str at output"),
    "get_init_inputs not a list": ("def get_inputs():\n    return [torch.randn(2)]\ndef get_init_inputs():\n"
                                   "    return None\n", "get_init_inputs() must return a list, got NoneType"),
}


@pytest.mark.parametrize("case", list(RUNTIME_BROKEN))
def test_runtime_problem_errors_name_file_and_cause(tmp_path, case):
    body, needle = RUNTIME_BROKEN[case]
    forward = "return 'not a tensor'" if case == "non-tensor output" else "return x"
    src = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
           f"        {forward}\n{body}")
    if "def get_init_inputs" not in body:
        src += "def get_init_inputs():\n    return []\n"
    f = tmp_path / "runtime_broken.py"
    f.write_text(src)
    with pytest.raises(ProblemError) as e:
        check_problem(load_problem_file(f))
    assert str(f) in str(e.value) and needle in str(e.value), str(e.value)


def test_import_error_in_problem(tmp_path):
    f = tmp_path / "needs_missing_pkg.py"
    f.write_text("import not_a_real_module_xyz\nclass Model: pass\ndef get_inputs(): return []\n"
                 "def get_init_inputs(): return []\n")
    with pytest.raises(ProblemError) as e:
        check_problem(load_problem_file(f))
    assert str(f) in str(e.value) and "ModuleNotFoundError" in str(e.value)


def test_resolve_problem_by_name_suffix_and_path(tmp_path):
    assert resolve_problem("1_ReLU").name == "level1/1_ReLU"
    assert resolve_problem("level2/1_Gemm_BiasAdd_ReLU").level == 2
    f = tmp_path / "mine.py"
    f.write_text(builtin_problems()[0].source)
    assert resolve_problem(str(f)).path == str(f)
    with pytest.raises(ProblemError, match="no such file or built-in problem"):
        resolve_problem("nope")


def test_problem_roundtrip():
    p = builtin_problems()[0]
    assert problem_from_source(p.source, p.name).source_hash == p.source_hash


def test_a_problem_file_that_ends_the_process_at_import_is_the_problems_fault_not_the_harness():
    """os._exit at import kills the worker while it loads the problem: a problem error (the run fails with
    that note, the CLI exits 2), never harness_error, and never charged to the candidate."""
    import pytest

    from kforge_core import ASSETS_DIR
    from kforge_core.evaluation import EvalSettings, evaluate
    from kforge_core.problems import ProblemError, problem_from_source

    source = ("import os\nimport torch\nimport torch.nn as nn\nos._exit(3)\n"
              "class Model(nn.Module):\n    def forward(self, x):\n        return x\n"
              "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n")
    problem = problem_from_source(source, "exits_at_import", "exits_at_import.py")
    candidate = (ASSETS_DIR / "examples" / "cpu" / "level1" / "1_ReLU.py").read_text()
    with pytest.raises(ProblemError, match=r"importing the problem ended the process \(exit code 3\)"):
        evaluate(problem, candidate, "cpu", EvalSettings(timing=False))
