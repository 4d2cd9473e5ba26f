"""The one place that names a run's artifacts: file names, folders, and the format of JSON artifacts.

Everything that reads or writes a run's files (session, runner, bench, pages, export) uses these names;
tests/test_repo_hygiene.py checks that no other module spells them out.
"""

from __future__ import annotations

FORMAT = 1  # the "format" field of every JSON artifact; bump with a reader that still takes the old one

# -- the run's folder ------------------------------------------------------------------------------------------
CONFIG = "config.json"
RUN_ERROR = "error.txt"  # traceback of an unexpected failure of the run's driver
MANUAL_DIR = "manual_{role}"  # paste-in provider's prompt/answer exchange, per role

# -- a round's folder --------------------------------------------------------------------------------------------
PROGRAM = "program.py"
GENERATION = "generation.json"  # written last of the generation step: its presence means "generated"
GENERATION_PROMPT = "generation_prompt.json"
GENERATION_ANSWER = "generation_answer.txt"
EVAL = "eval.json"
EVAL_PROGRESS = "eval_progress.json"  # the evaluation in flight: its stage and trial, rewritten as it goes
PROFILE = "profile.json"
NCU_CSV = "ncu/ncu_details.csv"
ANALYSIS = "analysis.json"  # written last of the analysis step: its presence means "analysed"
ANALYSIS_PROMPT = "analysis_prompt.json"
ANALYSIS_ANSWER = "analysis_answer.txt"
RECOMMENDATION = "recommendation.json"
GATE = "gate.json"
IMAGES_DIR = "images"
PREVIOUS_ANALYSES = "previous_analyses"  # a re-analysis moves the earlier analysis here, never deletes it

INTERRUPTED = "interrupted"  # files of a step cut short, set aside before the step is redone

GENERATION_FILES = (GENERATION_PROMPT, GENERATION_ANSWER, PROGRAM, GENERATION)
ANALYSIS_FILES = (ANALYSIS_PROMPT, ANALYSIS_ANSWER, RECOMMENDATION, ANALYSIS)

# -- benches -----------------------------------------------------------------------------------------------------
BENCH_SPEC = "spec.json"
REPORT_SUMMARY = "summary.md"
REPORT_TABLE = "per_problem.csv"


def manual_dir(role: str) -> str:
    return MANUAL_DIR.format(role=role)


def image_name(n: int, label: str) -> str:
    slug = "".join(c if c.isalnum() else "_" for c in label)[:40] or "screenshot"
    return f"{IMAGES_DIR}/{n:02d}_{slug}.png"


def image_label(filename_stem: str) -> str:
    """The label part of an image file's stem ("03_nsight_roofline" -> "nsight_roofline")."""
    return filename_stem[3:]


def stamped(obj):
    """A JSON artifact with its format: dicts get a "format" key, lists are wrapped."""
    if isinstance(obj, dict):
        return {"format": FORMAT, **obj}
    return {"format": FORMAT, "items": obj}


def unstamped(obj):
    """Read back what stamped() wrote, and files written before artifacts had a format (plain dicts/lists)."""
    if isinstance(obj, dict) and "format" in obj:
        if obj["format"] > FORMAT:
            raise ValueError(f"artifact format {obj['format']} is newer than this KForge reads ({FORMAT})")
        if set(obj) == {"format", "items"}:
            return obj["items"]
        return {k: v for k, v in obj.items() if k != "format"}
    return obj
