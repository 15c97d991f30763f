"""Ways to compute LineMixing (lib/nn/models.h, issue 24) on this CPU: one layer forward and
backward, batch 256, 32 channels, bf16 autocast, channels-last, against a 3x3 convolution of the
same width (docs/benchmarks.md, "Line mixing in the resnet's blocks").
Usage: python bench/line_mixing_layouts.py [THREADS]"""
import time, sys, torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
B, C = 256, 32
DIRS = [(0, 1), (1, 0), (1, 1), (1, -1)]  # (rank step, file step)

def shifts():
    S = torch.zeros(4, 14, 64, 64)
    for d, (dr, df) in enumerate(DIRS):
        for ki, k in enumerate([k for k in range(-7, 8) if k]):
            for s in range(64):
                r, f = divmod(s, 8)
                r2, f2 = r + k * dr, f + k * df
                if 0 <= r2 < 8 and 0 <= f2 < 8:
                    S[d, ki, s, r2 * 8 + f2] = 1
    return S.reshape(56, 4096)

class Bmm(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.randn(C, 56) * 0.1); s.register_buffer("S", shifts())
    def forward(s, x):
        b = x.shape[0]
        M = (s.w @ s.S).view(C, 64, 64).to(x.dtype)
        xv = x.permute(0, 2, 3, 1).reshape(b, 64, C)
        y = torch.matmul(M, xv.permute(2, 1, 0))  # [C,64,B]
        return x + y.permute(2, 1, 0).reshape(b, 8, 8, C).permute(0, 3, 1, 2)

class Bmm2(nn.Module):  # batch-major: [B, C, 64] @ M^T per channel via einsum
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.randn(C, 56) * 0.1); s.register_buffer("S", shifts())
    def forward(s, x):
        b = x.shape[0]
        M = (s.w @ s.S).view(C, 64, 64).to(x.dtype)
        xv = x.permute(0, 2, 3, 1).reshape(b, 64, C)
        y = torch.einsum("cij,bjc->bic", M, xv)
        return x + y.reshape(b, 8, 8, C).permute(0, 3, 1, 2)

class Masked(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.randn(C, 1, 15, 15) * 0.1)
        m = torch.zeros(15, 15); m[7, :] = 1; m[:, 7] = 1; m += torch.eye(15); m += torch.eye(15).flip(1); m = (m > 0).float(); m[7, 7] = 0
        s.register_buffer("m", m)
    def forward(s, x):
        return x + F.conv2d(x, s.w * s.m, padding=7, groups=C)

class Gather(nn.Module):
    def __init__(s):
        super().__init__(); s.w = nn.Parameter(torch.randn(56, C) * 0.1)
        idx = torch.full((64, 56), 64, dtype=torch.long)
        S = shifts().view(56, 64, 64)
        for t in range(56):
            for sq in range(64):
                nz = S[t, sq].nonzero()
                if len(nz): idx[sq, t] = nz[0, 0]
        s.register_buffer("idx", idx.flatten())
    def forward(s, x):
        b = x.shape[0]
        xv = x.permute(0, 2, 3, 1).reshape(b, 64, C)
        xp = torch.cat([xv, xv.new_zeros(b, 1, C)], 1)
        g = xp.index_select(1, s.idx).view(b, 64, 56, C)
        y = (g * s.w.to(x.dtype)).sum(2)
        return x + y.reshape(b, 8, 8, C).permute(0, 3, 1, 2)

class Conv3(nn.Module):
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(C, C, 3, padding=1, bias=False)
    def forward(s, x): return s.c(x)

def bench(m, reps=20):
    m = m.to(memory_format=torch.channels_last)
    x = torch.randn(B, C, 8, 8).contiguous(memory_format=torch.channels_last).requires_grad_()
    for i in range(3 + reps):
        if i == 3: t = time.perf_counter()
        with torch.autocast("cpu", torch.bfloat16):
            y = m(x)
        y.float().sum().backward()
    return (time.perf_counter() - t) / reps * 1e3

mods = {"conv3x3": Conv3, "bmm": Bmm, "einsum (chosen)": Bmm2, "masked15": Masked, "gather": Gather}
# check equality of the three line mixers
x = torch.randn(2, C, 8, 8)
a, b2, c, g = Bmm(), Bmm2(), Masked(), Gather()
b2.w.data = a.w.data.clone()
print("bmm==einsum", (a(x) - b2(x)).abs().max().item())
res = {k: [] for k in mods}
for r in range(3):
    for k, cls in mods.items():
        res[k].append(bench(cls()))
for k, v in res.items(): print(f"{k:10s} fwd+bwd ms/batch {min(v):.2f}  all {['%.2f' % t for t in v]}")
