"""Trains the `capable-v2` SentencePiece vocabulary (models/training/v2/spm-v2.model), seeded and
reproducible, and reports its characters per token on held-out essay text.

Owns the vocabulary's training input and settings only; the GGUF form of the vocabulary is
gguf_export.py's, the comparison with other tokenizers is tokenizer_compare_v2.py's.

Input: the training side of the essays (bytes >= data.HELDOUT_END, one line per sentence as the
file is wrapped; never the held-out bytes), plus the v2 generators' word lists and templates
(data_v2), each rendered with fixed-seed fillers so that their words and punctuation get pieces.

Settings and why:
- BPE, not unigram: llama.cpp's llama-SPM tokenizer (and this engine's, which follows it) merges
  symbol pairs greedily by piece score. That is SentencePiece's BPE encoding exactly; a unigram
  model's Viterbi segmentation would differ on some strings.
- byte_fallback: characters outside the vocabulary become <0xNN> pieces, as both engines expect.
- identity normalization, no extra-whitespace removal: llama.cpp does not normalize text, so
  SentencePiece must not either (NFKC or collapsed spaces would tokenize other text than it).
- split_digits: numbers are one token per digit, so 7-digit values, UUIDs and counts are spelled
  the same wherever they occur (a needle's value is copied digit by digit).
- num_threads 1, no input sampling or shuffling: the output is a function of the input only.

  /usr/bin/python3 models/training/vocab_v2.py [--vocab-size 4096] [--out models/training/v2/spm-v2.model]
"""
import argparse
import hashlib
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
import data_v2 as V  # noqa: E402


def training_lines():
    """The vocabulary's training text, one sentence per line (deterministic)."""
    corpus = D.Corpus()
    lines = [ln for ln in corpus.train.decode("utf-8").split("\n") if ln.strip()]
    rng = random.Random("vocab-v2")
    # word lists (each word as its own sentence and in key form)
    words = V.KEY_ADJ_ALL + V.KEY_NOUN_ALL + D.ADJ + sum(D.NOUN.values(), []) + V.JSON_FIELDS
    lines += words
    lines += [f"{rng.choice(V.KEY_ADJ_ALL)}-{rng.choice(V.KEY_NOUN_ALL)}" for _ in range(300)]
    # templates, rendered
    for _ in range(20):
        a, n, k = rng.choice(D.ADJ), rng.choice(["number", "code", "word", "id"]), \
            f"{rng.choice(V.KEY_ADJ_ALL)}-{rng.choice(V.KEY_NOUN_ALL)}"
        v = str(rng.randrange(1000000, 10000000))
        ks = f"{k}, {rng.choice(V.KEY_ADJ_ALL)}-{rng.choice(V.KEY_NOUN_ALL)}"
        lines += [t.format(k=k, v=v, a=a, n=n) for t in V.NEEDLES]
        lines += [q.format(k=k, a=a, n=n) for q, _ in V.QUESTIONS]
        lines += [t.format(a=a, n=n) for t in V.INTROS if t]
        lines += [t.format(a=a, n=n, k=ks, ks=ks) for t in V.MV_QUESTIONS + V.MQ_QUESTIONS]
        src = rng.choice(D.FRAME_SOURCE)
        lines += [V.FRAME_INTRO.format(a=a, n=n, src=src),
                  D.FRAME_NEEDLE.format(a=a, n=n, k=k, v=v) if "{k}" in D.FRAME_NEEDLE else "",
                  D.FRAME_QUESTION.format(a=a, n=n, k=k, src=src),
                  V.FRAME_MULTI_INTRO.format(a=a, n=n, src=src),
                  V.FRAME_MULTI_QUESTION.format(a=a, n=n, ks=ks, src=src)]
        x, y = V.rand_name(rng, False), V.rand_name(rng, False)
        for fx, fy in V.VT_FORMS:
            lines += [fx.format(x=x, X=x.upper(), v=v[:5]), fy.format(x=x, X=x.upper(), y=y,
                                                                     Y=y.upper())]
        lines += V.VT_INTROS + [q.format(v=v[:5]) for q in V.VT_QUESTIONS]
        lines += V.CWE_INTROS + [q.format(m=rng.choice([3, 5, 10])) for q in V.CWE_QUESTIONS]
        lines += V.FWE_INTROS + V.FWE_QUESTIONS + V.QA_INTROS + V.COPY_LEADS
        lines += [q.format(p="the words of a phrase") for q in V.QA_CONT_Q + V.QA_DOC_Q]
        lines += [d.format(i=rng.randrange(1, 20)) for d in V.QA_DOC]
        rec = {"id": rng.randrange(1, 100000)}
        for f in rng.sample(V.JSON_FIELDS, 3):
            rec[f] = rng.choice(V.KEY_NOUN_ALL)
        lines.append("{" + ", ".join(f'"{f}": ' + (str(v_) if f == "id" else f'"{v_}"')
                                     for f, v_ in rec.items()) + "},")
    return [ln.strip("\n") for ln in lines if ln.strip()]


def train(out, vocab_size):
    import sentencepiece as spm
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    out = os.path.abspath(out)
    cwd = os.getcwd()
    lines = training_lines()
    with tempfile.TemporaryDirectory() as td:
        # relative names: the model file records its trainer's input and prefix, and a temporary
        # directory's name there would change the file's hash from run to run
        os.chdir(td)
        with open("input.txt", "w", encoding="utf-8") as f:
            for ln in lines:
                f.write(ln.replace("\n", " ") + "\n")
        prefix = "spm"
        spm.SentencePieceTrainer.train(
            input="input.txt", model_prefix=prefix, model_type="bpe", vocab_size=vocab_size,
            byte_fallback=True, character_coverage=1.0, normalization_rule_name="identity",
            add_dummy_prefix=True, remove_extra_whitespaces=False, split_digits=True,
            split_by_whitespace=True, max_sentence_length=65536, input_sentence_size=0,
            shuffle_input_sentence=False, num_threads=1, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
            minloglevel=2)
        data = open(prefix + ".model", "rb").read()
        os.chdir(cwd)
    tmp = out + ".tmp"
    open(tmp, "wb").write(data)
    os.replace(tmp, out)
    return hashlib.sha256(data).hexdigest()


def chars_per_token(path):
    """Characters (Unicode code points) per token on the held-out essays, this vocabulary vs the
    byte-level one (one token per UTF-8 byte)."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=path)
    held = D.Corpus().heldout.decode("utf-8", "ignore")
    n = len(sp.encode(held))
    return {"heldout_chars": len(held), "heldout_bytes": len(held.encode()), "v2_tokens": n,
            "v2_chars_per_token": round(len(held) / n, 3),
            "byte_level_chars_per_token": round(len(held) / len(held.encode()), 3),
            "ratio": round(len(held.encode()) / n, 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--out", default=V.SPM_PATH)
    a = ap.parse_args()
    sha = train(a.out, a.vocab_size)
    print(f"wrote {a.out} ({a.vocab_size} pieces) sha256 {sha}")
    print(chars_per_token(a.out))


if __name__ == "__main__":
    main()
