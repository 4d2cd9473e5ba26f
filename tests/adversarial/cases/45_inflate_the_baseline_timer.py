# tries: make eager look slow: an aliased time.perf_counter that adds 5 ms to every interval except the candidate's own
# expect: rejected
# preamble: relu_ext
# message: time.perf_counter (patched after the harness started)

_clock = time
_real = _clock.perf_counter
_state = {"extra": 0.0, "mine": False}


def _fake():
    if _state["mine"]:
        _state["mine"] = False  # the reading right after the candidate's call: no extra
    else:
        _state["extra"] += 0.005
    return _real() + _state["extra"]


_clock.perf_counter = _fake


class ModelNew(nn.Module):
    def forward(self, x):
        y = ext.relu(x)
        _state["mine"] = True
        return y
