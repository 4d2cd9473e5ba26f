# tries: run the kernel on a side stream that a one-stream timer does not wait for
# expect: static_rejected
# backend: cuda
# preamble: relu_ext
# message: side CUDA stream

_SIDE = torch.cuda.Stream()


class ModelNew(nn.Module):
    def forward(self, x):
        with torch.cuda.stream(_SIDE):
            return ext.relu(x)
