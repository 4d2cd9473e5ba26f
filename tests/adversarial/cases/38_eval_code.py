# tries: run code built at run time with eval
# expect: static_rejected
# preamble: relu_ext
# message: eval

class ModelNew(nn.Module):
    def forward(self, x):
        return eval("ext.relu")(x)
