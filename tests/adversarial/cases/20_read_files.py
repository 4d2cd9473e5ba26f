# tries: read the harness's files (the job, the reference problem) from disk
# expect: static_rejected
# preamble: relu_ext
# message: open

class ModelNew(nn.Module):
    def forward(self, x):
        job = open("job.json").read()
        return ext.relu(x) if job else x
