# tries: phone home over the network
# expect: static_rejected
# preamble: relu_ext
# message: socket
import socket


class ModelNew(nn.Module):
    def forward(self, x):
        socket.create_connection(("127.0.0.1", 9))
        return ext.relu(x)
