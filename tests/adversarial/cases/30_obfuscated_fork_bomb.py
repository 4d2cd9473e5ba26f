# tries: a bounded fork bomb that dodges the static rules (getattr with a computed name), then sleeps
# expect: timeout
# preamble: relu_ext
# settings: run_timeout_s=5

class ModelNew(nn.Module):
    def forward(self, x):
        for _ in range(5):  # 32 processes: the sandbox must kill the whole group
            getattr(os, "fo" + "rk")()
        time.sleep(600)
        return ext.relu(x)
