# tries: reach os.system through __import__ with a computed name
# expect: static_rejected
# preamble: relu_ext
# message: __import__

class ModelNew(nn.Module):
    def forward(self, x):
        __import__("o" + "s").system("true")
        return ext.relu(x)
