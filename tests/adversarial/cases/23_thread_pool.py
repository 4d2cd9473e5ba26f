# tries: hide work on background threads
# expect: static_rejected
# preamble: relu_ext
# message: concurrent
from concurrent.futures import ThreadPoolExecutor

_POOL = ThreadPoolExecutor(2)


class ModelNew(nn.Module):
    def forward(self, x):
        return _POOL.submit(ext.relu, x).result()
