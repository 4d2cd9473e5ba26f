"""Writes a folder laid out like KernelBench (level1..level4, 270 numbered files) with the shapes of
file those levels hold: single ops, fusions with module-level constants, multi-class networks, and
level-4 files that import HuggingFace `transformers` at top level (not installed here)."""

from pathlib import Path

LEVEL_COUNTS = {1: 100, 2: 100, 3: 50, 4: 20}

LEVEL1 = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs {op} on a tensor.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies {op}.
        """
        return torch.{op}(x)

batch_size = 16
dim = {dim}

def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''

LEVEL2 = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Model that performs a convolution, applies {act}, and adds a bias term.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.conv(x)
        x = torch.{act}(x)
        x = x + self.bias
        return x

batch_size = 128
in_channels = 3
out_channels = {out}
height, width = 32, 32
kernel_size = 3
bias_shape = (out_channels, 1, 1)

def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
'''

LEVEL3 = '''import torch
import torch.nn as nn
import torch.nn.functional as F

class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x))) + x

class Model(nn.Module):
    def __init__(self, num_classes={classes}):
        """
        :param num_classes: The number of output classes
        """
        super(Model, self).__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(16) for _ in range({depth})])
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)

# Test code
batch_size = 10
num_classes = {classes}

def get_inputs():
    return [torch.randn(batch_size, 3, 32, 32)]

def get_init_inputs():
    return [num_classes]
'''

LEVEL4 = '''import torch
from transformers import AutoConfig, AutoModelForCausalLM

class Model(torch.nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        self.config = config
        self.model = AutoModelForCausalLM.from_pretrained(self.model_name, config=self.config)

    def forward(self, x):
        return self.model(x).logits

model_name = "{model}"
config = AutoConfig.from_pretrained(model_name)
vocab_size = config.vocab_size
sequence_length = 256
batch_size = {batch}

def get_inputs():
    inputs = torch.randint(0, vocab_size, (batch_size, sequence_length))
    return [inputs]

def get_init_inputs():
    return [model_name, config]
'''

OPS = ["relu", "sigmoid", "tanh", "exp", "abs"]


def write_kernelbench_folder(root: Path) -> int:
    n = 0
    for level, count in LEVEL_COUNTS.items():
        d = root / f"level{level}"
        d.mkdir(parents=True)
        for i in range(1, count + 1):
            op = OPS[i % len(OPS)]
            if level == 1:
                text, title = LEVEL1.format(op=op, dim=1024 + i), f"{op.capitalize()}_{i}"
            elif level == 2:
                text, title = LEVEL2.format(act=op, out=8 + i), f"Conv2d_{op.capitalize()}_BiasAdd"
            elif level == 3:
                text, title = LEVEL3.format(classes=10 + i, depth=1 + i % 4), f"ResNetLike{i}"
            else:
                text, title = LEVEL4.format(model=f"org/model-{i}", batch=1 + i % 8), f"model_{i}_bs{1 + i % 8}"
            (d / f"{i}_{title}.py").write_text(text)
            n += 1
    return n
