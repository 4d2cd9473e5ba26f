# tries: compute a 1e-7 scalar from half the input (wrong by ~100 %, but far inside any absolute tolerance)
# expect: numerical_mismatch
# problem: adversarial/problems/small_scalar.py
# preamble: relu_ext
# settings: strictness=lenient
# message: float64 reference

class ModelNew(nn.Module):
    def forward(self, x):
        half = x[: x.numel() // 2]
        return (half * 1e-4).mean() + 0.0 * ext.relu(x[:1]).sum()
