"""Loads a legalnet model.pt in Python with no legalnet code, as docs/train.md shows, and checks
that an equivalent torch.nn.Module gives the same logits as the C++ model.
Usage: load_in_python.py MODEL.pt PLANES.f32 LOGITS.f32"""
import json
import sys

import numpy as np
import torch
from torch import nn

# ---- the snippet documented in docs/train.md ----------------------------------------------


class ResidualBlock(nn.Module):
    def __init__(self, c, se):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        if se:
            self.se_reduce = nn.Linear(c, max(c // 4, 4))
            self.se_expand = nn.Linear(max(c // 4, 4), c)
        self.se = se

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        if self.se:
            s = torch.sigmoid(self.se_expand(torch.relu(self.se_reduce(y.mean((2, 3))))))
            y = y * s[:, :, None, None]
        return torch.relu(x + y)


class IndexHead(nn.Module):
    """Scatters compact logits into the 4096 move indices; impossible ones get a fixed value."""

    def __init__(self):
        super().__init__()
        self.register_buffer("source", torch.zeros(4096, dtype=torch.long))
        self.register_buffer("fixed_off", torch.zeros(1, 1))

    def forward(self, compact):
        padded = torch.cat([compact, self.fixed_off.expand(compact.shape[0], 1)], 1)
        return padded.index_select(1, self.source)


class LegalNet(nn.Module):
    """The three legalnet architectures, built from the model file's legalnet_config."""

    def __init__(self, config):
        super().__init__()
        kind, self.kind = config["kind"], config["kind"]
        # 7 planes, or 10 with the attack planes (lib/encode/attack_planes.h)
        planes = self.planes = 10 if config.get("inputs", "planes") == "attacks" else 7
        width = 1792 if config["geometric_head"] else 4096
        if kind == "mlp":
            self.hidden = nn.Linear(planes * 64, config["hidden"])
            self.out = nn.Linear(config["hidden"], width)
        elif kind == "conv":
            layers, c_in = [], planes
            for _ in range(config["blocks"]):
                layers += [nn.Conv2d(c_in, config["channels"], 3, padding=1), nn.BatchNorm2d(config["channels"]),
                           nn.ReLU()]
                c_in = config["channels"]
            self.tower = nn.Sequential(*layers)
            self.hidden = nn.Linear(config["channels"] * 64, config["hidden"])
            self.out = nn.Linear(config["hidden"], width)
        else:
            c = config["channels"]
            self.stem = nn.Conv2d(planes, c, 3, padding=1, bias=False)
            self.stem_bn = nn.BatchNorm2d(c)
            self.tower = nn.Sequential(*[ResidualBlock(c, config["squeeze_excitation"]) for _ in range(config["blocks"])])
            self.policy = nn.Conv2d(c, 64, 1)
        if kind == "resnet" or config["geometric_head"]:
            self.head = IndexHead()

    def forward(self, planes):  # planes [B,7 or 10,8,8] float -> logits [B,4096]
        if self.kind == "mlp":
            x = self.out(torch.relu(self.hidden(planes.flatten(1))))
        elif self.kind == "conv":
            x = self.out(torch.relu(self.hidden(self.tower(planes).flatten(1))))
        else:
            x = self.policy(self.tower(torch.relu(self.stem_bn(self.stem(planes))))).flatten(1)
        return self.head(x) if hasattr(self, "head") else x


KNIGHT_STEPS = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
KING_STEPS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
DIAGONAL, STRAIGHT = [(1, 1), (1, -1), (-1, 1), (-1, -1)], [(1, 0), (-1, 0), (0, 1), (0, -1)]


def attack_planes(planes):
    """The 3 planes models with inputs "attacks" take after the 7 (lib/encode/attack_planes.h),
    from the 7 planes of one position ([7, 8, 8], [plane][rank][file]): squares the side not to
    move attacks (through the mover's king), the mover's pinned pieces, and in check the
    checkers with the squares between a checking slider and the king."""
    side = 1 if planes[0, 0, 0] > 0 else -1
    board = {}  # (rank, file) -> +type white / -type black
    for t in range(1, 7):
        for r, f in zip(*np.nonzero(planes[t])):
            board[(int(r), int(f))] = t if planes[t, r, f] > 0 else -t
    ours = lambda code: (code > 0) == (side > 0)
    king = next((sq for sq, c in board.items() if c == 6 * side), None)
    on_board = lambda r, f: 0 <= r < 8 and 0 <= f < 8
    out = np.zeros((3, 8, 8), np.float32)

    def ray(sq, d):
        r, f = sq[0] + d[0], sq[1] + d[1]
        while on_board(r, f):
            yield r, f
            r, f = r + d[0], f + d[1]

    for sq, c in board.items():
        if ours(c):
            continue
        t = abs(c)
        if t in (1, 2, 6):
            steps = [(1 if c > 0 else -1, -1), (1 if c > 0 else -1, 1)] if t == 1 else KNIGHT_STEPS if t == 2 else KING_STEPS
            targets = [(sq[0] + dr, sq[1] + df) for dr, df in steps if on_board(sq[0] + dr, sq[1] + df)]
            if king in targets:
                out[2][sq] = 1
        else:
            targets = []
            for d in (DIAGONAL if t == 3 else STRAIGHT if t == 4 else DIAGONAL + STRAIGHT):
                for s in ray(sq, d):
                    targets.append(s)
                    if s in board and s != king:
                        break
        for s in targets:
            out[0][s] = 1
    if king is None:
        return out
    for directions, sliders in ((DIAGONAL, (3, 5)), (STRAIGHT, (4, 5))):
        for d in directions:
            empty, blocker = [], None
            for s in ray(king, d):
                c = board.get(s)
                if c is None:
                    empty.append(s)
                elif ours(c) and blocker is None:
                    blocker = s
                else:
                    if not ours(c) and abs(c) in sliders:
                        if blocker is None:
                            for e in empty + [s]:
                                out[2][e] = 1
                        else:
                            out[1][blocker] = 1
                    break
    return out


def load_legalnet(path):
    archive = torch.jit.load(path, map_location="cpu")
    net = LegalNet(json.loads(archive.legalnet_config))
    net.load_state_dict(archive.state_dict())
    return net.eval()

# ---- end of the snippet -------------------------------------------------------------------


def main(model_path, planes_path, logits_path):
    net = load_legalnet(model_path)
    planes = torch.from_numpy(np.fromfile(planes_path, dtype=np.float32)).reshape(-1, net.planes, 8, 8)
    if net.planes == 10:  # the C++ attack planes of real positions: Python derives the same
        for i, position in enumerate(planes.numpy()):
            derived = attack_planes(position[:7])
            assert (derived == position[7:]).all(), f"attack planes of position {i} differ: {np.argwhere(derived != position[7:])}"

    expected = np.fromfile(logits_path, dtype=np.float32).reshape(-1, 4096)
    with torch.no_grad():
        got = net(planes).numpy()
    err = np.abs(got - expected).max()
    assert err < 1e-4, f"max difference {err}"
    print(f"ok: {json.loads(torch.jit.load(model_path).legalnet_config)['kind']} max difference {err:.2e}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
