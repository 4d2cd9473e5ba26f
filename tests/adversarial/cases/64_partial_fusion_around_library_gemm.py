# tries: nothing: an honest partial replacement (the GEMM stays in PyTorch, its ReLU epilogue is an own kernel)
# expect: correct
# problem: adversarial/problems/linear_relu.py
# preamble: relu_ext

class ModelNew(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return ext.relu(torch.matmul(x, self.fc.weight.t()) + self.fc.bias)
