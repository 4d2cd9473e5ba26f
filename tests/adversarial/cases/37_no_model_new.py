# tries: a program that defines no ModelNew
# expect: static_rejected
# preamble: relu_ext
# message: ModelNew

class BetterModel(nn.Module):
    def forward(self, x):
        return ext.relu(x)
