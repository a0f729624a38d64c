"""Teacher-forced skill probes on a training checkpoint: per-token accuracy of the answer tokens of
the copy tasks (rrep, rcopy, repeat) and, on single-needle samples, per-token, first-digit and
exact-match accuracy in the canonical and the other training templates. Fresh samples (streams
"5/train/9000xx" and "diag/i", never drawn by a training step). Used to tell "no copying at all"
from "copying, not yet exact" while the curriculum gate still reads 0.

  /usr/bin/python3 models/training/probe_skills.py --ckpt CKPT/t3/ckpt.pt [--len 256]
"""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
from model import Config, LlamaModel  # noqa: E402


def answer_accuracy(model, toks, mask):
    x, y = torch.tensor([toks[:-1]]), torch.tensor(toks[1:])
    m = torch.tensor(mask[1:]).bool()
    with torch.no_grad():
        pred = model(x)[0].argmax(-1)
    return int((pred[m] == y[m]).sum()), int(m.sum()), pred, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--len", type=int, default=256)
    ap.add_argument("--n", type=int, default=16, help="samples per copy task")
    ap.add_argument("--needle-n", type=int, default=24, help="single-needle samples")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ck = torch.load(a.ckpt)
    model = LlamaModel(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    model.eval()
    corpus = D.Corpus()
    step = ck.get("state", {}).get("step", "?")
    print(f"checkpoint {a.ckpt} step {step}, samples of {a.len} tokens")
    for task in ["rrep", "rcopy", "repeat"]:
        ok = tot = 0
        for i in range(a.n):
            toks, mask, got = D.make_sample(5, 900000 + i, a.len, corpus, task=task)
            if got != task:
                continue
            o, t, _, _ = answer_accuracy(model, toks, mask)
            ok, tot = ok + o, tot + t
        print(f"{task:8s} per-token answer accuracy {ok / max(tot, 1):.3f} ({tot} tokens)")
    for canon in (True, False):
        ok = tot = exact = first = n = 0
        for i in range(a.needle_n):
            rng = random.Random(f"diag/{i}")
            out = D.niah(rng, corpus.train, corpus.train_words, a.len, n_needles=1, canon=canon)
            if out is None:
                continue
            prompt, answer = out
            toks = [D.BOS] + list(prompt) + list(answer) + [D.EOS]
            mask = [0] * (1 + len(prompt)) + [1] * (len(answer) + 1)
            o, t, pred, y = answer_accuracy(model, toks, mask)
            k = len(answer) + 1
            ok, tot, n = ok + o, tot + t, n + 1
            exact += o == t
            first += int(pred[-k + 1] == y[-k + 1])  # the value's first digit (after the space)
        name = "canonical" if canon else "other templates"
        print(f"needle ({name}): per-token {ok / max(tot, 1):.3f}, first digit {first}/{n}, "
              f"exact {exact}/{n}")


if __name__ == "__main__":
    main()
