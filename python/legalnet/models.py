"""The four architectures of lib/nn/models.h as torch modules with the same parameter names, so
that a model.pt written by ``train`` loads here, and scriptable with ``torch.jit.script``.
Each maps inputs float32 [B, C, 8, 8] to logits [B, 4096] in the inputs' frame."""
import json
import math
from collections import namedtuple
from typing import Optional

import torch
from torch import nn

from .attacks import RAYS
from .inputs import config_input_kind, input_kind
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


def _between_squares():
    """[64, 4096]: 1 where a square lies strictly between the two squares of a geometric move (the
    4096-wide counterpart of ResNetImpl's between_squares, which holds the 1792 geometric moves):
    along each ray from a square (attacks.RAYS), the squares before the one moved to; nothing for
    a knight's jump or a step."""
    m = torch.zeros(64, 4096)
    for a in range(64):
        for ray in RAYS[a]:
            for k in range(1, 7):
                if ray[k] < 0:
                    break
                m[ray[:k].tolist(), a * 64 + int(ray[k])] = 1.0
    return m


VETO_LINES, VETOES_PER_LINE = 5, 2  # nn::VETO_LINES, nn::VETOES_PER_LINE
RULE_LINE_PLANES = 6  # encode::RULE_LINE_PLANES: the rules head's outputs with train --rule-lines


def _veto_index(to_square):
    """[VETOES_PER_LINE * 4096] (the 4096-wide counterpart of ResNetImpl's veto_from and veto_to,
    which hold the 1792 geometric moves; forward masks the others): where veto k of move index i
    reads its value in the flattened [channel][square] output of the vetoes' convolution, the
    from-values' channels first; the line is the move type's direction modulo 4 (file, diagonal,
    rank, antidiagonal), 4 for a knight's jump and for the indices that are never a move."""
    types = torch.from_numpy(MOVE_TYPES.astype("int64"))
    line = torch.where((types >= 0) & (types < 56), (types // 7) % 4, VETO_LINES - 1)
    moves = torch.arange(4096)
    square = moves % 64 if to_square else moves // 64
    first = VETO_LINES * VETOES_PER_LINE if to_square else 0
    return torch.cat([(first + line * VETOES_PER_LINE + k) * 64 + square for k in range(VETOES_PER_LINE)])


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


LINE_TAPS = 4 * 14  # 4 directions x the signed distances -7..7 but 0


def _line_taps():
    """At i * 64 + j: the tap joining squares i and j (row * 8 + column) along a row, a column or
    a diagonal (direction * 14 + distance index), or LINE_TAPS when they share no line."""
    tap = torch.full((64 * 64,), LINE_TAPS, dtype=torch.long)
    for direction, (dr, dc) in enumerate([(0, 1), (1, 0), (1, 1), (1, -1)]):
        for square in range(64):
            for distance in range(-7, 8):
                row, column = square // 8 + distance * dr, square % 8 + distance * dc
                if distance != 0 and 0 <= row < 8 and 0 <= column < 8:
                    tap[square * 64 + row * 8 + column] = direction * 14 + distance + (7 if distance < 0 else 6)
    return tap


class LineMixing(nn.Module):
    """LineMixingImpl of lib/nn/models.h: x plus, for each channel, a learned weighted sum of
    the squares on the rank, file and both diagonals of each square (one [64, 64] matrix per
    channel made from 56 weights)."""

    def __init__(self, channels):
        super().__init__()
        bound = 1 / math.sqrt(LINE_TAPS)
        self.weight = nn.Parameter(torch.empty(channels, LINE_TAPS).uniform_(-bound, bound))
        self.register_buffer("tap_of", _line_taps(), persistent=False)  # a fixed table, not in model files

    def matrices(self):
        c = self.weight.shape[0]
        return nn.functional.pad(self.weight, (0, 1)).index_select(1, self.tap_of).view(c, 64, 64)

    def forward(self, x):
        b, c = x.shape[0], x.shape[1]
        squares = x.permute(0, 2, 3, 1).reshape(b, 64, c)
        mixed = torch.einsum("cij,bjc->bic", self.matrices(), squares)
        return x + mixed.reshape(b, 8, 8, c).permute(0, 3, 1, 2)


RAY_DIRECTIONS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]  # nn::RAY_DIRECTIONS


def _ray_gather(steps, within_direction):
    """Over [8 directions][65 squares] (square 64 a zero pad): each entry's source `steps` squares
    back along its direction, within one board's 65 squares or within its own direction's."""
    index = []
    for d, (dr, df) in enumerate(RAY_DIRECTIONS):
        for s in range(65):
            rank, file = s // 8 - steps * dr, s % 8 - steps * df
            source = rank * 8 + file if s < 64 and 0 <= rank < 8 and 0 <= file < 8 else 64
            index.append((d * 65 if within_direction else 0) + source)
    return torch.tensor(index, dtype=torch.long)


class RayScan(nn.Module):
    """RayScanImpl of lib/nn/models.h: x plus a linear map of what reaches each square along each
    of the 8 directions, h[s][d] = v[s-d] + g[s-d] * h[s-d][d], with values v and gates
    g = sigmoid(.) a linear map of each square's features (R = channels / 4 of each, nn::ray_scan_width)."""

    def __init__(self, channels):
        super().__init__()
        self.rays = max(channels // 4, 1)
        self.project = nn.Linear(channels, 2 * self.rays)
        self.out = nn.Linear(8 * self.rays, channels, bias=False)
        self.register_buffer("first_step", _ray_gather(1, False), persistent=False)
        self.register_buffer("step1", _ray_gather(1, True), persistent=False)
        self.register_buffer("step2", _ray_gather(2, True), persistent=False)
        self.register_buffer("step4", _ray_gather(4, True), persistent=False)

    def scan(self, values, gates):
        """values, gates [B, 64, R] -> h [B, 64, 8, R], in doubling steps of 1, 2 and 4 squares."""
        b, r = values.shape[0], values.shape[2]
        a = nn.functional.pad(values, (0, 0, 0, 1)).index_select(1, self.first_step)
        g = nn.functional.pad(gates, (0, 0, 0, 1)).index_select(1, self.first_step)
        a = a + g * a.index_select(1, self.step1)
        g = g * g.index_select(1, self.step1)
        a = a + g * a.index_select(1, self.step2)
        g = g * g.index_select(1, self.step2)
        a = a + g * a.index_select(1, self.step4)
        return a.view(b, 8, 65, r)[:, :, :64].permute(0, 2, 1, 3)

    def forward(self, x):
        b, c = x.shape[0], x.shape[1]
        both = self.project(x.permute(0, 2, 3, 1).reshape(b, 64, c))
        h = self.scan(both[:, :, :self.rays], torch.sigmoid(both[:, :, self.rays:]))
        mixed = self.out(h.reshape(b, 64, 8 * self.rays))
        return x + mixed.reshape(b, 8, 8, c).permute(0, 3, 1, 2)


class ResidualBlock(nn.Module):
    def __init__(self, channels, squeeze_excitation, mixing="none"):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        reduced = max(channels // 4, 4)
        self.se_reduce = nn.Linear(channels, reduced) if squeeze_excitation else None
        self.se_expand = nn.Linear(reduced, channels) if squeeze_excitation else None
        self.lines = LineMixing(channels) if mixing == "lines" else None
        self.rays = RayScan(channels) if mixing == "rays" else None

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        if self.lines is not None:
            h = self.lines(h)
        if self.rays is not None:
            h = self.rays(h)
        y = self.bn2(self.conv2(h))
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
        mixing = c.get("mixing", "none")  # absent in files written before line mixing
        self.tower = nn.Sequential(*[ResidualBlock(c["channels"], c["squeeze_excitation"], mixing)
                                     for _ in range(c["blocks"])])
        self.policy = nn.Conv2d(c["channels"], 64, 1)
        self.head = IndexHead(_move_type_source())
        # The pairs head (ResNetImpl): a query of the from-square times a key of the to-square.
        pairs = c.get("policy_head", "types") == "pairs"  # absent in files written before it
        self.pairs = nn.Conv2d(c["channels"], 2 * c["channels"], 1, bias=False) if pairs else None
        # The rules head (train --rules-weight): the tower's guess of the 3 attack planes, or with
        # train --rule-lines of the 6 rule lines, which training alone reads; forward() does not run it.
        self.rules = (nn.Conv2d(c["channels"], RULE_LINE_PLANES if c.get("rule_lines", False) else 3, 1)
                      if c.get("rules_head", False) else None)
        # The paths (train --paths): a blocking value per square, subtracted from each move along
        # the squares strictly between its from- and to-square.
        self.paths = nn.Conv2d(c["channels"], 1, 1) if c.get("paths", False) else None
        self.register_buffer("between", _between_squares() if self.paths is not None else torch.zeros(0),
                             persistent=False)
        # The vetoes (train --vetoes): per line of a move, a from-square's value plus a to-square's,
        # through a softplus, subtracted from the move's logit.
        vetoes = c.get("vetoes", False)
        self.vetoes = nn.Conv2d(c["channels"], 2 * VETO_LINES * VETOES_PER_LINE, 1) if vetoes else None
        self.register_buffer("veto_from", _veto_index(False) if vetoes else torch.zeros(0, dtype=torch.long),
                             persistent=False)
        self.register_buffer("veto_to", _veto_index(True) if vetoes else torch.zeros(0, dtype=torch.long),
                             persistent=False)
        self.register_buffer("possible", torch.from_numpy(GEOMETRIC), persistent=False)
        # The input skip (train --input-skip): the input planes' 1x1 convolution added to the
        # tower's output, which every head reads.
        skip = c.get("input_skip", False)
        self.input_skip = nn.Conv2d(planes, c["channels"], 1, bias=False) if skip else None

    def forward(self, x):
        t = self.tower(torch.relu(self.stem_bn(self.stem(x))))
        if self.input_skip is not None:
            t = t + self.input_skip(x)
        logits = self.head(self.policy(t).flatten(1))
        if self.pairs is not None:  # on the attribute: TorchScript drops the branch when it is None
            b, d = t.shape[0], t.shape[1]
            squares = self.pairs(t).permute(0, 2, 3, 1).reshape(b, 64, 2 * d)
            scores = torch.matmul(squares[:, :, :d], squares[:, :, d:].transpose(1, 2)) / math.sqrt(d)
            logits = logits + scores.reshape(b, 4096).masked_fill(~self.possible, 0.0)
        if self.paths is not None:
            blocking = nn.functional.softplus(self.paths(t)).reshape(t.shape[0], 64)
            logits = logits - torch.matmul(blocking, self.between.to(blocking.dtype))
        if self.vetoes is not None:
            values = self.vetoes(t).reshape(t.shape[0], -1)
            both = values.index_select(1, self.veto_from) + values.index_select(1, self.veto_to)
            costs = nn.functional.softplus(both).view(t.shape[0], -1, 4096).sum(1)  # over the vetoes of a line
            logits = logits - costs.masked_fill(~self.possible, 0.0)
        return logits


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


# nn::MODEL_SPECS of lib/nn/model_config.cpp: each kind's module and the sizes it takes when the
# config leaves them 0 (attention's hidden: 2 x channels).
ModelSpec = namedtuple("ModelSpec", "name module defaults")
MODEL_SPECS = {s.name: s for s in (
    ModelSpec("mlp", Mlp, {"hidden": 4096}),
    ModelSpec("conv", ConvNet, {"hidden": 1024, "blocks": 8, "channels": 128}),
    ModelSpec("resnet", ResNet, {"blocks": 6, "channels": 32}),
    ModelSpec("attention", AttentionNet, {"blocks": 6, "channels": 64, "heads": 4}),
)}


class LegalNet(nn.Module):
    """A legalnet model: ``forward(x)`` maps inputs [B, C, 8, 8] of kind ``inputs`` to logits
    [B, 4096] in the inputs' frame (legalnet.to_board_order maps them to board indices)."""

    inputs: str
    config_json: str

    def __init__(self, config):
        super().__init__()
        config = dict(config)
        config["input_kind"] = config_input_kind(config)
        config.pop("inputs", None)
        config.setdefault("heads", 0)
        self.config = config
        self.inputs = config["input_kind"]
        self.config_json = json.dumps(config)
        kind = config["kind"]
        if kind not in MODEL_SPECS:
            raise ValueError(f"unknown model {kind!r} (expected {' | '.join(MODEL_SPECS)})")
        self.net = MODEL_SPECS[kind].module(config, input_kind(self.inputs).planes)

    def forward(self, x):
        return self.net(x)

