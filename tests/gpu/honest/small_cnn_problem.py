import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """A LeNet-sized classifier (the shape of KernelBench's MNIST few-shot example): two convolutions, two
    linear layers, ReLUs and max-pooling between them."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(64 * 12 * 12, 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def get_inputs():
    return [torch.randn(64, 1, 28, 28)]


def get_init_inputs():
    return [10]
