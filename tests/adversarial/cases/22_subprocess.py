# tries: start another process
# expect: static_rejected
# preamble: relu_ext
# message: subprocess
import subprocess


class ModelNew(nn.Module):
    def forward(self, x):
        subprocess.run(["true"])
        return ext.relu(x)
