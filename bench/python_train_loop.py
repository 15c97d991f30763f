"""A training loop in plain PyTorch on a legalnet dataset, as `train` trains by default: Adam, binary
cross-entropy over the 4096 move indices against the legal set, a linear warm-up over the first
2% of the steps then a cosine decay to 2% of the rate, gradient norms clipped at 1. It is the loop
docs/python.md shows; bench/python_loop_vs_train.sh runs it beside `train` at equal steps and
evaluates both models with `evaluate`.
Usage: python_train_loop.py DATASET.h5 OUT.safetensors [--steps 3000] [--batch 256] [--lr 2e-3]
       [--threads 2] [--seed 0] [--inputs state]"""
import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import legalnet  # noqa: E402


def scheduled_lr(lr, step, total, warmup=0.02, floor_ratio=0.02):
    """train's schedule without re-plans (lib/run/train/schedule.cpp, Schedule::lr)."""
    warmup_steps = max(1.0, warmup * total)
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1.0, total - warmup_steps))
    floor = lr * floor_ratio
    return floor + (lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--inputs", default="state")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    config = {"kind": "resnet", "blocks": 6, "channels": 32, "hidden": 0, "heads": 0,
              "squeeze_excitation": False, "geometric_head": True, "inputs": a.inputs,
              "policy_head": "pairs"}  # train's --policy-head auto for a resnet
    model = legalnet.LegalNet(config).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=a.lr)
    batches = legalnet.BatchReader(a.dataset, inputs=model.inputs, batch_size=a.batch, seed=a.seed)
    step, start = 0, time.perf_counter()
    while step < a.steps:
        for x, y in batches:  # a new shuffled order each epoch
            for group in optimizer.param_groups:
                group["lr"] = scheduled_lr(a.lr, step, a.steps)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step % 500 == 0 or step == a.steps:
                rate = step * a.batch / (time.perf_counter() - start)
                print(f"step {step:6d}  loss {loss.item():.5f}  {rate:,.0f} samples/s", flush=True)
            if step == a.steps:
                break
    legalnet.save_model(model.eval(), a.out)  # evaluate reads it


if __name__ == "__main__":
    main()
