"""Tokenizes seeded random strings with the v2 vocabulary three ways and prints how many agree:
SentencePiece itself (the reference: the model file), this engine's `accelbench tokenize` on a GGUF
written by gguf_export, and llama.cpp's `llama-tokenize` on the same GGUF when its binary exists.

Owns the test strings and the comparison only; not a CI test (it needs python3-sentencepiece and,
for the third column, a llama.cpp build). All three tokenize without BOS and with SentencePiece's
space prefix before the text (llama.cpp and this engine add it to the first text fragment).

  /usr/bin/python3 models/training/tokenizer_compare_v2.py [--n 500] [--seed 1] \\
      [--engine build/accelbench] [--llama-tokenize PATH] [--gguf OUT.gguf]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
import data_v2 as V  # noqa: E402

NON_ASCII = ["café", "naïve", "Größe", "Ελληνικά", "русский текст", "日本語のテキスト", "中文字符",
             "한국어", "emoji 🙂🚀", "ﬁ ligature", "Ωmega", "€100", "½ cup", "\u00a0nbsp", "tab\there",
             "zero\u200bwidth", "àéîõü", "Ʃ∑√∞≈", "🇫🇷 flag", "x\u0301 combining"]
CODE = ["def f(x):\n    return x * 2\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }",
        "if x == None:\n\tpass", "std::vector<int> v{1, 2, 3};", "SELECT * FROM t WHERE id = 7;",
        "#include <stdio.h>\nint main() { return 0; }", "let x = y ?? 0; // comment",
        "a[i+1] = b[j-1] >> 2;", "    indented    text  with   spaces", "<s> </s> <unk> <0x41>"]


def random_strings(n, seed):
    rng = random.Random(f"tokenizer-compare/{seed}")
    corpus = D.Corpus()
    held, train = corpus.heldout.decode("utf-8", "ignore"), corpus.train.decode("utf-8")
    kinds = ["essay", "digits", "uuid", "json", "code", "non-ascii", "mixed"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "essay":
            src = held if rng.random() < 0.5 else train
            s0 = rng.randrange(len(src) - 400)
            s = src[s0:s0 + rng.randrange(1, 400)]
        elif kind == "digits":
            s = " ".join(str(rng.randrange(10 ** rng.randrange(1, 12))) for _ in range(rng.randrange(1, 8)))
            s = rng.choice(["", "The number is ", "x=", "  "]) + s
        elif kind == "uuid":
            s = " ".join(D.rand_uuid(rng) for _ in range(rng.randrange(1, 4)))
        elif kind == "json":
            rec = {rng.choice(V.JSON_FIELDS): rng.choice([rng.randrange(10 ** 6), D.rand_uuid(rng)[:8],
                                                          rng.choice(V.KEY_NOUN_ALL), None, True, 1.5])
                   for _ in range(rng.randrange(1, 5))}
            s = json.dumps(rec, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
        elif kind == "code":
            s = rng.choice(CODE)
        elif kind == "non-ascii":
            s = " ".join(rng.choice(NON_ASCII) for _ in range(rng.randrange(1, 5)))
        else:
            parts = [rng.choice(NON_ASCII), rng.choice(CODE), str(rng.randrange(10 ** 9)),
                     held[rng.randrange(len(held) - 60):][:60], "\n\n", "   ", D.rand_uuid(rng)]
            rng.shuffle(parts)
            s = "".join(parts[:rng.randrange(2, 6)])
        out.append((kind, s))
    return out


def engine_ids(engine, gguf, text, td):
    f = os.path.join(td, "t.txt")
    open(f, "wb").write(text.encode("utf-8"))
    r = subprocess.run([engine, "tokenize", "--model", gguf, "--text-file", f, "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"engine tokenize failed: {r.stderr.strip()}")
    return json.loads(r.stdout)["tokens"]


def llama_ids(binary, gguf, text, td):
    f = os.path.join(td, "t.txt")
    open(f, "wb").write(text.encode("utf-8"))
    # llama-tokenize parses control-token texts by default; SentencePiece and the engine do not
    r = subprocess.run([binary, "-m", gguf, "-f", f, "--ids", "--no-bos", "--no-parse-special",
                        "--log-disable"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"llama-tokenize failed: {r.stderr.strip()[-400:]}")
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("[")][-1]
    return json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", default="build/accelbench")
    ap.add_argument("--llama-tokenize", default="",
                    help="llama.cpp's llama-tokenize binary (skipped when empty or missing)")
    ap.add_argument("--gguf", default="", help="where to write the vocabulary GGUF (default: temp)")
    ap.add_argument("--show", type=int, default=5, help="mismatches to print")
    a = ap.parse_args()
    import torch
    import gguf_export
    from model import Config, LlamaModel
    voc = V.vocab()
    with tempfile.TemporaryDirectory() as td:
        gguf = a.gguf or os.path.join(td, "vocab-v2.gguf")
        torch.manual_seed(0)  # a 1-layer untrained model: only its vocabulary is used here
        m = LlamaModel(Config(vocab=voc.size, d_model=64, n_layer=1, n_head=1, n_kv_head=1, d_ff=128,
                              tokenizer="spm-v2"))
        gguf_export.export(m, gguf, "capable-v2", "vocab-check", 0, "f32")
        llama = a.llama_tokenize if a.llama_tokenize and os.path.exists(a.llama_tokenize) else ""
        agree = {"engine": 0, "llama.cpp": 0}
        shown = 0
        strings = random_strings(a.n, a.seed)
        by_kind = {}
        for kind, s in strings:
            ref = voc.sp.encode(s)
            got = {"engine": engine_ids(a.engine, gguf, s, td)}
            if llama:
                got["llama.cpp"] = llama_ids(llama, gguf, s, td)
            for k, ids in got.items():
                ok = ids == ref
                agree[k] += ok
                by_kind.setdefault((k, kind), [0, 0])
                by_kind[(k, kind)][0] += ok
                by_kind[(k, kind)][1] += 1
                if not ok and shown < a.show:
                    shown += 1
                    print(f"MISMATCH {k} {kind} {s[:80]!r}\n  spm  {ref[:24]}\n  {k:5s}{ids[:24]}")
        print(json.dumps({"strings": len(strings), "vocab_sha256": voc.sha256,
                          "engine_agrees": agree["engine"],
                          "llama_cpp_agrees": agree["llama.cpp"] if llama else None,
                          "by_kind": {f"{k}/{kind}": f"{v[0]}/{v[1]}" for (k, kind), v in
                                      sorted(by_kind.items())}}, indent=1))
        bad = agree["engine"] != len(strings) or (llama and agree["llama.cpp"] != len(strings))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
