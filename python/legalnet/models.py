"""The four architectures of lib/nn/models.h as torch modules with the same parameter names, so
that a model.pt written by ``train`` loads here, and scriptable with ``torch.jit.script``.
Each maps inputs float32 [B, C, 8, 8] to logits [B, 4096] in the inputs' frame."""
import json
import math
from typing import Optional

import torch
from torch import nn

from .inputs import input_kind
from .moves import GEOMETRIC, MOVE_TYPES

FIXED_OFF_LOGIT = -20.0  # sigmoid(-20) = 2e-9: the indices that are never a move


def _geometric_source():
    """Compact output j feeds move index geometric[j]; the others take the fixed-off logit."""
    source = torch.full((4096,), int(GEOMETRIC.sum()), dtype=torch.long)
    source[torch.from_numpy(GEOMETRIC)] = torch.arange(int(GEOMETRIC.sum()))
    return source


def _move_type_source():
    """Policy output [B, type, from] flattened (type * 64 + from) feeds each geometric index."""
    source = torch.full((4096,), 4096, dtype=torch.long)
    for i in range(4096):
        if GEOMETRIC[i]:
            source[i] = int(MOVE_TYPES[i]) * 64 + i // 64
    return source


class IndexHead(nn.Module):
    """Scatters compact logits into the 4096 move indices; impossible ones get a fixed value."""

    def __init__(self, source):
        super().__init__()
        self.register_buffer("source", source)
        self.register_buffer("fixed_off", torch.full((1, 1), FIXED_OFF_LOGIT))

    def forward(self, compact):
        padded = torch.cat([compact, self.fixed_off.to(compact.dtype).expand(compact.shape[0], 1)], 1)
        return padded.index_select(1, self.source)


class _Dense(nn.Module):
    """The fully connected end of mlp and conv: hidden -> ReLU -> the compact or 4096-wide layer."""

    def __init__(self, c, in_features):
        super().__init__()
        width = int(GEOMETRIC.sum()) if c["geometric_head"] else 4096
        self.hidden = nn.Linear(in_features, c["hidden"])
        self.out = nn.Linear(c["hidden"], width)
        self.head = IndexHead(_geometric_source()) if c["geometric_head"] else None

    def _dense(self, features):
        y = self.out(torch.relu(self.hidden(features)))
        if self.head is not None:  # on the attribute: TorchScript drops the branch when it is None
            return self.head(y)
        return y


class Mlp(_Dense):
    def __init__(self, c, planes):
        super().__init__(c, planes * 64)

    def forward(self, x):
        return self._dense(x.flatten(1))


class ConvNet(_Dense):
    def __init__(self, c, planes):
        super().__init__(c, c["channels"] * 64)
        layers, c_in = [], planes
        for _ in range(c["blocks"]):
            layers += [nn.Conv2d(c_in, c["channels"], 3, padding=1), nn.BatchNorm2d(c["channels"]), nn.ReLU()]
            c_in = c["channels"]
        self.tower = nn.Sequential(*layers)

    def forward(self, x):
        return self._dense(self.tower(x).flatten(1))


class ResidualBlock(nn.Module):
    def __init__(self, channels, squeeze_excitation):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        reduced = max(channels // 4, 4)
        self.se_reduce = nn.Linear(channels, reduced) if squeeze_excitation else None
        self.se_expand = nn.Linear(reduced, channels) if squeeze_excitation else None

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        # Tested on the attributes themselves: TorchScript drops the branch when they are None.
        if self.se_reduce is not None and self.se_expand is not None:
            s = torch.sigmoid(self.se_expand(torch.relu(self.se_reduce(y.mean((2, 3))))))
            y = y * s.unsqueeze(2).unsqueeze(3)
        return torch.relu(x + y)


class ResNet(nn.Module):
    def __init__(self, c, planes):
        super().__init__()
        self.stem = nn.Conv2d(planes, c["channels"], 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(c["channels"])
        self.tower = nn.Sequential(*[ResidualBlock(c["channels"], c["squeeze_excitation"]) for _ in range(c["blocks"])])
        self.policy = nn.Conv2d(c["channels"], 64, 1)
        self.head = IndexHead(_move_type_source())

    def forward(self, x):
        return self.head(self.policy(self.tower(torch.relu(self.stem_bn(self.stem(x))))).flatten(1))


class EncoderLayer(nn.Module):
    def __init__(self, width, heads, feed_forward):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.ff_in = nn.Linear(width, feed_forward)
        self.ff_out = nn.Linear(feed_forward, width)

    def forward(self, x):
        b, s, w = x.shape
        head_width = w // self.heads
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, head_width).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(qkv[0], qkv[1].transpose(-2, -1)) / math.sqrt(head_width)
        mixed = torch.matmul(torch.softmax(scores, -1), qkv[2])
        x = x + self.proj(mixed.transpose(1, 2).reshape(b, s, w))
        return x + self.ff_out(nn.functional.gelu(self.ff_in(self.norm2(x))))


class AttentionNet(nn.Module):
    def __init__(self, c, planes):
        super().__init__()
        d = c["channels"]
        self.embed = nn.Linear(planes, d)
        self.square_embedding = nn.Parameter(torch.randn(64, d) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(d, c["heads"], c["hidden"]) for _ in range(c["blocks"])])
        self.norm = nn.LayerNorm(d)
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.move_bias = nn.Parameter(torch.zeros(4096))
        self.register_buffer("impossible", torch.from_numpy(~GEOMETRIC))

    def forward(self, planes):
        x = self.embed(planes.flatten(2).transpose(1, 2)) + self.square_embedding
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        scores = torch.matmul(self.query(x), self.key(x).transpose(1, 2)) / math.sqrt(x.shape[2])
        return (scores.flatten(1) + self.move_bias).masked_fill(self.impossible, -20.0)  # FIXED_OFF_LOGIT


ARCHITECTURES = {"mlp": Mlp, "conv": ConvNet, "resnet": ResNet, "attention": AttentionNet}


class LegalNet(nn.Module):
    """A legalnet model: ``forward(x)`` maps inputs [B, C, 8, 8] of kind ``inputs`` to logits
    [B, 4096] in the inputs' frame (legalnet.to_board_order maps them to board indices)."""

    inputs: str
    config_json: str

    def __init__(self, config):
        super().__init__()
        config = dict(config)
        config.setdefault("inputs", "planes")  # files written before the input kinds
        config.setdefault("heads", 0)
        self.config = config
        self.inputs = config["inputs"]
        self.config_json = json.dumps(config)
        kind = config["kind"]
        if kind not in ARCHITECTURES:
            raise ValueError(f"unknown model kind {kind!r} (expected {' | '.join(ARCHITECTURES)})")
        self.net = ARCHITECTURES[kind](config, input_kind(self.inputs).planes)

    def forward(self, x):
        return self.net(x)


def load_model(path, device="cpu"):
    """The model of a model.pt written by ``train``, in eval mode on ``device``; ``.inputs`` names
    its input kind and ``.config`` its architecture."""
    archive = torch.jit.load(str(path), map_location="cpu")
    try:
        config = json.loads(archive.legalnet_config)
    except AttributeError:
        raise ValueError(f"{path}: not a legalnet model (no legalnet_config)") from None
    model = LegalNet(config)
    state = archive.state_dict()
    try:
        model.net.load_state_dict(state)
    except RuntimeError as e:
        raise ValueError(f"{path}: the weights do not match the architecture {config}: {e}") from None
    return model.to(device).eval()
