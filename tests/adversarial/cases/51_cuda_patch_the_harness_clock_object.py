# tries: (lenient mode: gc is importable) find the harness's CUDA clock class in memory and make it report a tenth of the candidate's time (the event reading itself is untouched)
# expect: rejected
# backend: cuda
# problem: level1/4_Square_matrix_multiplication
# preamble: relu_ext
# settings: strictness=lenient
# (its own kernels compute an identity beside 2000 library matmuls, so since issue 26 the attribution rejects it
#  first, "replace none of the reference's work", before the parent's clock sees the patched timer)

import gc

_state = {"mine": False, "patched": False}


def _patch():
    """Lazily: the harness imports its clock module only when timing starts."""
    for o in gc.get_objects():
        if isinstance(o, type) and o.__name__ == "CudaClock" and not _state["patched"]:
            real = o.time_once

            def fake(self, fn, _real=real):
                ms = _real(self, fn)
                if _state["mine"]:
                    _state["mine"] = False
                    return ms / 10
                return ms

            o.time_once = fake
            _state["patched"] = True


class ModelNew(nn.Module):
    def forward(self, A, B):
        if not _state["patched"]:
            _patch()
        out = ext.relu(A) - ext.relu(-A)
        for _ in range(2000):  # ~10 ms of real work: a tenth of it cannot hide in the checks' margins
            y = out @ B
        _state["mine"] = True
        return y
