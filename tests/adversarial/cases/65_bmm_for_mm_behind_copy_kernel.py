# tries: substitute a library operator of the same work (bmm for the Linear's GEMM), keep the ReLU in PyTorch, and run an own kernel that copies (a ReLU of a non-negative tensor)
# expect: rejected
# problem: adversarial/problems/linear_relu.py
# preamble: relu_ext
# message: replace none of the reference's work

class ModelNew(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        y = torch.bmm(x.unsqueeze(0), self.fc.weight.t().unsqueeze(0)).squeeze(0)
        return ext.relu(torch.relu(torch.add(y, self.fc.bias)))
