"""Held-out evaluation of a shipped GGUF through this engine's CLI (no torch needed).

Single-needle NIAH in RULER niah_single_2 form (RULER's intro, needle sentence, question and answer
prefix, singular rewrite; see data.py), on HELD-OUT essay haystacks (bytes [0, 79259) of the essays
file, never trained on), adjective-noun keys from two small hand-written lists, uniform 7-digit values.
The prompt is exactly L - max_tokens tokens (BOS included; RULER's budget: input plus generated
tokens fit in L, so the 4K case runs in a 4096-token context); greedy decoding of --max-tokens tokens; a sample is
correct when the first run of digits in the output equals the value (exact match), and `substring`
counts RULER's string_match_all (value anywhere in the output). Depths are evenly spaced over
(0, 1): sample i of n sits at depth (i + 0.5) / n.

Held-out bits per byte are not computed here: train.py's torch evaluator measures them (manifest).

  /usr/bin/python3 models/training/evaluate.py --model models/capable/target.gguf \
      --lengths 1024,2048,4096 --n 40 --out eval.json
  # SpecPrefill with the family's draft on the same samples:
  ... --method specprefill --draft models/capable/draft.gguf --param keep=0.2
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
import data_v2 as D2  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--engine", default="build/accelbench")
    ap.add_argument("--lengths", default="1024,2048,4096")
    ap.add_argument("--n", type=int, default=40, help="samples per length (depths evenly spaced)")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--style", default="ruler", choices=["ruler", "train"])
    ap.add_argument("--max-tokens", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--method", default="baseline")
    ap.add_argument("--draft", default="")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--out", default="")
    ap.add_argument("--vocab", default="byte", choices=["byte", "v2"],
                    help="v2: a capable-v2 model; lengths and prompts in v2 tokens (data_v2)")
    args = ap.parse_args()
    corpus = D2.CorpusV2() if args.vocab == "v2" else D.Corpus()
    results = {"model": args.model, "method": args.method, "draft": args.draft,
               "params": args.param, "style": args.style, "seed": args.seed, "n": args.n,
               "by_length": {}, "samples": []}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as td:
        for L in [int(x) for x in args.lengths.split(",")]:
            ok = sub = 0
            by_depth = {}
            for i in range(args.n):
                depth = (i + 0.5) / args.n
                if args.vocab == "v2":
                    ptoks, _, value = D2.eval_niah_sample(args.seed, L * 1000 + i,
                                                          L - args.max_tokens, depth, corpus,
                                                          args.style)
                    prompt = corpus.voc.decode_bytes(ptoks[1:], first=True)
                else:
                    prompt, value = D.eval_niah_sample(args.seed, L * 1000 + i,
                                                       L - args.max_tokens, depth, corpus,
                                                       args.style)
                pf = os.path.join(td, "p.txt")
                open(pf, "wb").write(prompt)
                cmd = [args.engine, "generate", "--model", args.model, "--prompt-file", pf,
                       "--max-tokens", str(args.max_tokens), "--threads", str(args.threads),
                       "--json", "--method", args.method]
                if args.draft:
                    cmd += ["--draft", args.draft]
                for p in args.param:
                    cmd += ["--param", p]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    raise SystemExit(f"engine failed at L={L} i={i}: {out.stderr.strip()}")
                j = json.loads(out.stdout)
                assert len(j["prompt_tokens"]) == L - args.max_tokens, (len(j["prompt_tokens"]), L)
                text = j["text"]
                m = re.search(r"\d+", text)
                exact = bool(m) and m.group(0) == value
                ok += exact
                sub += value in text
                dk = f"{int(depth * 10) / 10:.1f}"
                by_depth.setdefault(dk, [0, 0])
                by_depth[dk][0] += exact
                by_depth[dk][1] += 1
                results["samples"].append({"length": L, "i": i, "depth": round(depth, 4),
                                           "value": value, "output": text, "exact": exact,
                                           "ttft_s": j.get("ttft_s", j.get("ttft"))})
            results["by_length"][str(L)] = {
                "exact": ok / args.n, "substring": sub / args.n, "n": args.n,
                "by_depth_decile": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_depth.items())}}
            print(json.dumps({"length": L, **results["by_length"][str(L)]}), flush=True)
    results["seconds"] = round(time.time() - t0, 1)
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
