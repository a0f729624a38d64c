"""Checks an exported GGUF against the torch model it came from: runs this engine's
`generate --logits-out` on a prompt and compares with the torch forward (fp32, weights rounded as
stored) on the same tokens. Prints the max relative difference (max |a-b| / max |b|) and whether the
greedy tokens agree.

  /usr/bin/python3 models/training/check_logits.py --ckpt CKPT/target/best.pt \
      --gguf models/capable/target.gguf [--engine build/accelbench] [--prompt-len 3000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
import data_v2 as D2  # noqa: E402
from model import Config, LlamaModel  # noqa: E402
import gguf_export  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--engine", default="build/accelbench")
    ap.add_argument("--prompt-len", type=int, default=1000)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--dtype", default="f16")
    args = ap.parse_args()
    torch.set_num_threads(2)
    ck = torch.load(args.ckpt)
    model = LlamaModel(Config(**ck["config"]))
    model.load_state_dict(ck["model"])
    model = gguf_export.rounded_copy(model, args.dtype).eval()
    if ck["config"].get("tokenizer", "byte") == "spm-v2":  # v2: prompt_len in v2 tokens
        corpus = D2.CorpusV2()
        ptoks, _, value = D2.eval_niah_sample(777, 1, args.prompt_len, 0.3, corpus)
        prompt = corpus.voc.decode_bytes(ptoks[1:], first=True)
        expect = ptoks
    else:
        corpus = D.Corpus()
        prompt, value = D.eval_niah_sample(777, 1, args.prompt_len, 0.3, corpus)
        expect = [D.BOS] + list(prompt)
    with tempfile.TemporaryDirectory() as td:
        pf, lf = os.path.join(td, "p.txt"), os.path.join(td, "l.bin")
        open(pf, "wb").write(prompt)
        out = subprocess.run([args.engine, "generate", "--model", args.gguf, "--prompt-file", pf,
                              "--max-tokens", str(args.max_tokens), "--threads", "1",
                              "--logits-out", lf, "--json"], check=True, capture_output=True)
        j = json.loads(out.stdout)
        eng = np.fromfile(lf, dtype="<f4").reshape(-1, ck["config"]["vocab"])
    toks = j["prompt_tokens"] + j["output_tokens"]
    assert j["prompt_tokens"] == expect, "tokenization differs"
    with torch.no_grad():
        lg = model(torch.tensor([toks[:-1]]))[0].double().numpy()
    n = len(j["output_tokens"])
    ref = lg[len(j["prompt_tokens"]) - 1:len(j["prompt_tokens"]) - 1 + n]
    eng = eng[:n].astype(np.float64)
    rel = np.abs(eng - ref).max() / np.abs(ref).max()
    greedy = ref.argmax(-1).tolist() == j["output_tokens"]
    print(json.dumps({"gguf": args.gguf, "prompt_tokens": len(j["prompt_tokens"]),
                      "positions_compared": n, "max_abs_diff": float(np.abs(eng - ref).max()),
                      "max_rel_diff": float(rel), "greedy_tokens_agree": greedy,
                      "engine_text": j["text"], "needle_value": value}))


if __name__ == "__main__":
    main()
