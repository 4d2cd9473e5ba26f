# tries: write far outside any allocation on the GPU (poisons the CUDA context)
# expect: runtime_error
# backend: cuda
# preamble: relu_ext
# message: illegal memory access

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.wild_write(x)
