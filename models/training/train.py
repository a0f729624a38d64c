"""Trains one member of the `capable` family (see README.md). Resumable, deterministic given --seed.

  OMP_WAIT_POLICY=PASSIVE nice -n 19 /usr/bin/python3 models/training/train.py \
      --ckpt-dir CKPT/target --preset target --seed 1 \
      --export models/capable/target.gguf

Rerunning the same command resumes from <ckpt-dir>/ckpt.pt. Every step's data is a function of
(seed, step, curriculum stage); the stage advances when the training exact-match accuracy of the
single-needle task, over the longest half of the current stage's lengths, passes --gate, or (with
--stage-step-cap, from the second stage on) after that many steps in the stage.
"""
import argparse
import collections
import json
import math
import os
import random
import signal
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402
import data_v2 as D2  # noqa: E402
import model as model_mod  # noqa: E402
from model import Config, LlamaModel  # noqa: E402
import gguf_export  # noqa: E402

PRESETS = {
    "target": dict(d_model=256, n_layer=4, n_head=4, n_kv_head=4, d_ff=704),
    "draft": dict(d_model=128, n_layer=2, n_head=2, n_kv_head=2, d_ff=352),
    "draft-l": dict(d_model=256, n_layer=2, n_head=4, n_kv_head=4, d_ff=704),
    "draft-xs": dict(d_model=64, n_layer=2, n_head=1, n_kv_head=1, d_ff=176),
    # capable-v2 (data_v2, the 4096-piece SentencePiece vocabulary, trained to 8192 tokens with
    # RoPE base 100000): see README.md "capable-v2" for the sizes and the RoPE choice
    "target-v2": dict(d_model=256, n_layer=6, n_head=4, n_kv_head=4, d_ff=704,
                      rope_theta=100000.0, tokenizer="spm-v2"),
    "draft-v2": dict(d_model=192, n_layer=3, n_head=3, n_kv_head=3, d_ff=512,
                     rope_theta=100000.0, tokenizer="spm-v2"),
}


def is_v2(preset):
    return PRESETS[preset].get("tokenizer") == "spm-v2"


def bf16_ok():
    try:
        flags = open("/proc/cpuinfo").read()
        return "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:
        return False


def machine():
    """The CPU a run (or a resumed part of it) trained on: model name, logical CPUs, torch
    threads, and whether bf16 autocast was possible. Resumes may land on another machine."""
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "logical_cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "bf16_capable": bf16_ok()}


def log(f, rec):
    rec["time"] = round(time.time(), 1)
    line = json.dumps(rec)
    f.write(line + "\n")
    f.flush()
    print(line, flush=True)


def forward_loss(model, x, y, m, autocast):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits = model(x)
    ce = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), y.reshape(-1),
                         reduction="none").view_as(y)
    return logits, ce


def needle_accuracy(model, autocast, lengths, styles, n, sample):
    """Teacher-forced exact match of the answer tokens (equal to greedy exact match of them) on n
    held-out samples per (style, length); sample(style, T, i, depth) -> (tokens, answer length)."""
    res = {}
    for style in styles:
        for T in lengths:
            if T > model.c.n_ctx:
                continue
            ok = 0
            for i in range(n):
                toks, n_ans = sample(style, T, i, (i + 0.5) / n)
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                    logits = model(torch.tensor([toks[:-1]]))
                ok += logits[0, -n_ans:].argmax(-1).tolist() == toks[-n_ans:]
            res[f"{style}_{T}"] = ok / n
    return res


def bits_per_byte(model, autocast, chunks):
    """Held-out bits per byte: summed cross-entropy over chunks [(tokens with BOS, bytes)]."""
    tot, nbytes = 0.0, 0
    for toks, n_bytes in chunks:
        x, y = torch.tensor([toks[:-1]]), torch.tensor([toks[1:]])
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = model(x)
        tot += F.cross_entropy(logits.float()[0], y[0], reduction="sum").item()
        nbytes += n_bytes
    return tot / nbytes / math.log(2)


@torch.no_grad()
def evaluate_v2(model, corpus, seed, autocast, lengths=(1024, 2048, 4096, 8192), n=12,
                styles=("ruler",), bpb_len=2048):
    """evaluate() for the v2 vocabulary: lengths in v2 tokens, the answer ' ' + 7 digits in v2
    tokens, and held-out bits per byte as the summed cross-entropy of 8 held-out chunks of bpb_len
    tokens over their bytes (comparable with the byte-level family's figure)."""
    model.eval()

    def sample(style, T, i, depth):
        prompt, ans, _ = D2.eval_niah_sample(seed, 100000 * T + i, T, depth, corpus, style)
        return prompt + ans, len(ans)

    res = needle_accuracy(model, autocast, lengths, styles, n, sample)
    held, L = corpus.toks["heldout"], min(bpb_len, model.c.n_ctx)
    offs = [j * (len(held) - L - 1) // 8 for j in range(8)]
    res["heldout_bpb"] = bits_per_byte(model, autocast, [
        ([corpus.voc.bos] + held[o:o + L], len(corpus.voc.decode_bytes(held[o:o + L])))
        for o in offs])
    model.train()
    return res


@torch.no_grad()
def evaluate(model, corpus, seed, autocast, lengths=(1024, 2048, 4096), n=12, styles=("ruler",),
             bpb_len=2048):
    """Held-out single-needle NIAH (teacher-forced exact match of ' ' + 7 digits, which equals greedy
    exact match of those tokens) and held-out bits per byte."""
    model.eval()

    def sample(style, T, i, depth):
        prompt, value = D.eval_niah_sample(seed, 100000 * T + i, T, depth, corpus, style)
        ans = (" " + value).encode()
        return [D.BOS] + list(prompt) + list(ans), len(ans)

    res = needle_accuracy(model, autocast, lengths, styles, n, sample)
    # bits per byte over 8 held-out chunks of bpb_len bytes (fixed offsets)
    L = min(bpb_len, model.c.n_ctx)
    offs = [j * (len(corpus.heldout) - L - 1) // 8 for j in range(8)]
    res["heldout_bpb"] = bits_per_byte(model, autocast, [
        ([D.BOS] + list(corpus.heldout[o:o + L]), L) for o in offs])
    model.train()
    return res


def stage_starts_from_history(st):
    """Step at which each stage began, for checkpoints written before `stage_start` was kept:
    a stage pass is evaluated (tag `pass_<len>`) at the step the next stage begins."""
    passes = [h["step"] for h in st["history"] if str(h.get("tag", "")).startswith("pass_")]
    assert len(passes) == st["stage"], (passes, st["stage"])
    return [0] + passes


def steps_into_final_stage(st, n_stages):
    """Steps trained in the last (longest) stage so far, or None before it is reached."""
    if st["stage"] != n_stages - 1:
        return None
    return st["step"] - st["stage_start"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--preset", default="target", choices=sorted(PRESETS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stages", default="512,1024,2048,4096")
    ap.add_argument("--gate", type=float, default=0.85)
    ap.add_argument("--final-gate", type=float, default=0.92)
    ap.add_argument("--stage-step-cap", type=int, default=0,
                    help="from the second stage on, a stage also ends after this many steps "
                         "without a gate pass (0 = gates only). The gate is a threshold on a noisy "
                         "accuracy that plateaus near it, so without a cap the time a stage takes "
                         "is a matter of luck and reruns drift by thousands of steps")
    ap.add_argument("--gate-window", type=int, default=120)
    ap.add_argument("--tokens-per-step", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--decay-steps", type=int, default=300)
    ap.add_argument("--decay-at-step", type=int, default=0, help="start the final decay here")
    ap.add_argument("--decay-after-final-stage-steps", type=int, default=0,
                    help="start the final decay this many steps after the last stage begins "
                         "(stage-conditioned, so a rerun whose gates pass at other steps gets "
                         "the same time at full length; 0 = off)")
    ap.add_argument("--long-range-steps", type=int, default=0,
                    help="after the final decay, this many more steps at the minimum learning "
                         "rate on long samples (T in [3L/4, L] of the last stage) with needle "
                         "depths biased to the start by --long-range-depth-pow")
    ap.add_argument("--long-range-depth-pow", type=float, default=1.0,
                    help="in the long-range phase a needle's depth is u**P for uniform u: P > 1 "
                         "puts needles early, far from the question")
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--answer-weight", type=float, default=1.0)
    ap.add_argument("--bf16-softmax-until-step", type=int, default=0,
                    help="attention softmax in bf16 before this step (the shipped runs' early steps "
                         "had it; it halves the gradients) and in fp32 from it on")
    ap.add_argument("--mix-v5-from-step", type=int, default=-1,
                    help="from this step on: 40%% of niah/niah_seq samples use RULER-frame "
                         "paraphrases (data.FRAME_*; never RULER's exact words)")
    ap.add_argument("--mix-v5-after-final-stage-steps", type=int, default=-1,
                    help="as --mix-v5-from-step, but counted from the step the last stage begins")
    ap.add_argument("--mix-v4-from-step", type=int, default=-1,
                    help="from this step on: task mix TASKS_V4 (adds rcopy)")
    ap.add_argument("--mix-v3-from-step", type=int, default=-1,
                    help="from this step on (with the v2 mix): 70%% of niah/niah_seq samples in the "
                         "canonical template (data.CANON_*)")
    ap.add_argument("--mix-v2-from-step", type=int, default=-1,
                    help="from this step on: task mix TASKS_V2 (adds niah_seq) and the answer loss "
                         "averaged per sample, then over samples")
    ap.add_argument("--induction-warmup-steps", type=int, default=0,
                    help="before this step: task mix TASKS_WARM (35%% rrep, a random string "
                         "repeated, so that copying forms first; the v4 mix otherwise)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=400)
    ap.add_argument("--eval-n", type=int, default=8)
    ap.add_argument("--ckpt-every", type=int, default=50)
    ap.add_argument("--export", default="", help="GGUF path, rewritten when held-out NIAH improves")
    ap.add_argument("--export-dtype", default="f16")
    ap.add_argument("--init-from", default="", help="checkpoint to take embeddings/first blocks from")
    ap.add_argument("--family", default="capable")
    ap.add_argument("--fp32", action="store_true", help="no bf16 autocast")
    ap.add_argument("--recompute-from-len", type=int, default=4096,
                    help="v2 presets: at sequence lengths >= this, blocks are recomputed in the "
                         "backward pass instead of keeping their activations (an 8K attention "
                         "layer keeps ~1 GB otherwise); the gradients are the same")
    args = ap.parse_args()
    fam_v2 = is_v2(args.preset)
    if fam_v2 and args.family == "capable":
        args.family = "capable-v2"

    torch.set_num_threads(args.threads)
    autocast = (not args.fp32) and bf16_ok()
    os.makedirs(args.ckpt_dir, exist_ok=True)
    ckpt_path = os.path.join(args.ckpt_dir, "ckpt.pt")
    logf = open(os.path.join(args.ckpt_dir, "log.jsonl"), "a")
    stages = [int(s) for s in args.stages.split(",")]
    if fam_v2:
        corpus = D2.CorpusV2()
        cfg = Config(**PRESETS[args.preset], vocab=corpus.voc.size, n_ctx=max(4096, stages[-1]))
    else:
        corpus = D.Corpus()
        cfg = Config(**PRESETS[args.preset], n_ctx=max(4096, stages[-1]))

    torch.manual_seed(args.seed)
    model = LlamaModel(cfg)
    decay, no_decay = [], []
    for n_, p in model.named_parameters():
        (decay if p.dim() == 2 else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    st = dict(step=0, stage=0, decay_start=0, tokens=0, train_seconds=0.0, best=-1.0,
              history=[], window=[], done=False, stage_start=[0])
    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        st = ck["state"]
        st.setdefault("stage_start", stage_starts_from_history(st))
        log(logf, {"event": "resume", "step": st["step"], "stage": st["stage"],
                   "stage_start": st["stage_start"], "args": vars(args), "machine": machine()})
    else:
        if args.init_from:
            src = torch.load(args.init_from)["model"]
            own = model.state_dict()
            taken = [k for k in own if k in src and src[k].shape == own[k].shape]
            own.update({k: src[k] for k in taken})
            model.load_state_dict(own)
            log(logf, {"event": "init_from", "path": args.init_from, "tensors": len(taken)})
        log(logf, {"event": "start", "args": vars(args), "config": cfg.to_dict(),
                   "params": model.n_params(), "bf16_autocast": autocast,
                   "torch": torch.__version__,
                   "essays_sha256": corpus.base.sha256 if fam_v2 else corpus.sha256,
                   "vocab_sha256": corpus.voc.sha256 if fam_v2 else None,
                   "machine": machine()})
    window = collections.deque(st["window"], maxlen=args.gate_window)

    stop = {"flag": False}

    def on_signal(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def save():
        st["window"] = list(window)
        if "wall_seconds" in st:
            wall()
        tmp = ckpt_path + ".tmp"
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": st,
                    "config": cfg.to_dict(), "args": vars(args)}, tmp)
        os.replace(tmp, ckpt_path)

    def do_eval(tag):
        t0 = time.time()
        ev = evaluate_v2 if fam_v2 else evaluate
        r = ev(model, corpus, 12345, autocast, n=args.eval_n, styles=("ruler",))
        r.update({k.replace("ruler", "train"): v for k, v in ev(
            model, corpus, 12345, autocast, lengths=(2048,), n=args.eval_n,
            styles=("train",)).items() if k.startswith("train")})
        r.update({"event": "eval", "tag": tag, "step": st["step"], "stage": st["stage"],
                  "eval_seconds": round(time.time() - t0, 1)})
        log(logf, r)
        st["history"].append(r)
        score_lens = (1024, 2048, 4096, 8192) if fam_v2 else (1024, 2048, 4096)
        score = sum(r.get(f"ruler_{T}", 0) for T in score_lens) / len(score_lens)
        if args.export and score >= st["best"]:
            st["best"] = score
            extra = {"accelbench.training.step": st["step"],
                     "accelbench.training.tokens": st["tokens"],
                     "accelbench.training.essays_sha256":
                         corpus.base.sha256 if fam_v2 else corpus.sha256,
                     "accelbench.training.heldout_bytes": f"[0, {D.HELDOUT_END})"}
            gguf_export.export(model, args.export, args.family, args.preset, args.seed,
                               args.export_dtype, extra)
            torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "state": dict(st)},
                       os.path.join(args.ckpt_dir, "best.pt"))
            log(logf, {"event": "export", "path": args.export, "step": st["step"],
                       "score": score})
        return r

    model.train()
    t_last, tok_last = time.time(), 0
    st.setdefault("wall_seconds", 0.0)
    t_wall = [time.time()]

    def wall():
        now = time.time()
        st["wall_seconds"] += now - t_wall[0]
        t_wall[0] = now
        return round(st["wall_seconds"], 0)
    agg = collections.defaultdict(float)
    def end_step():  # the step training ends at, once the final decay has begun
        return st["decay_start"] + args.decay_steps + args.long_range_steps
    # a finished run given a long-range phase it has not had yet goes on with it (only then: a
    # finished run is never reopened by other flags)
    if args.long_range_steps and st["done"] and st["decay_start"] and st["step"] < end_step():
        st["done"] = False
        log(logf, {"event": "reopened", "step": st["step"], "reason": "--long-range-steps"})
    while not st["done"] and st["step"] < args.max_steps and not stop["flag"]:
        step = st["step"]
        long_range = bool(st["decay_start"] and args.long_range_steps
                          and step >= st["decay_start"] + args.decay_steps)
        if long_range and step == st["decay_start"] + args.decay_steps:
            log(logf, {"event": "long_range_start", "step": step})
        in_final = steps_into_final_stage(st, len(stages))
        decay_reason = ("--decay-at-step" if args.decay_at_step and step >= args.decay_at_step
                        else "--decay-after-final-stage-steps"
                        if args.decay_after_final_stage_steps and in_final is not None
                        and in_final >= args.decay_after_final_stage_steps else None)
        if decay_reason and not st["decay_start"]:
            st["decay_start"] = step
            log(logf, {"event": "decay_start", "step": step, "reason": decay_reason})
        v5 = (0 <= args.mix_v5_from_step <= step or
              (args.mix_v5_after_final_stage_steps >= 0 and in_final is not None
               and in_final >= args.mix_v5_after_final_stage_steps))
        # learning rate
        if step < args.warmup:
            lr = args.lr * (step + 1) / args.warmup
        elif st["decay_start"]:
            frac = min(1.0, (step - st["decay_start"]) / args.decay_steps)
            lr = args.lr * (args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 *
                            (1 + math.cos(math.pi * frac)))
        else:
            lr = args.lr
        for g in opt.param_groups:
            g["lr"] = lr
        # batch: one length T per step, B samples of exactly T tokens
        L = stages[st["stage"]]
        lo_gate = stages[st["stage"] - 1] if st["stage"] > 0 else L // 2
        rng = random.Random(f"{args.seed}/step/{step}")
        if long_range:
            rng.random()  # unused; the shipped target's phase was trained with this draw
            T = rng.randrange(3 * L // 4, L + 1)
        elif rng.random() < 0.5:
            T = rng.randrange(128, L + 1)
        else:
            T = rng.randrange(L // 2, L + 1)
        T = max(128, T // 64 * 64)
        B = max(1, args.tokens_per_step // T)
        xs, ms, tasks = [], [], []
        # per-sample answer averaging: the v2 family always, the first from --mix-v2-from-step
        v2 = fam_v2 or 0 <= args.mix_v2_from_step <= step
        model_mod.SOFTMAX_FP32 = step >= args.bf16_softmax_until_step
        D.NEEDLE_DEPTH_POW = args.long_range_depth_pow if long_range else 1.0
        model.recompute_from_len = args.recompute_from_len if fam_v2 else 0
        for i in range(B):
            if fam_v2:  # one task mix throughout (the first family's mix flags do not apply)
                toks, mask, task = D2.make_sample(
                    args.seed, step * 1000 + i, T, corpus,
                    mix=D2.TASKS_V2_WARM if step < args.induction_warmup_steps else D2.TASKS_V2)
                xs.append(toks)
                ms.append(mask)
                tasks.append(task)
                continue
            toks, mask, task = D.make_sample(args.seed, step * 1000 + i, T, corpus,
                                             mix=(D.TASKS_WARM if step < args.induction_warmup_steps
                                                  else D.TASKS_V4 if 0 <= args.mix_v4_from_step <= step
                                                  else D.TASKS_V2 if v2 else D.TASKS),
                                             canon_p=0.7 if 0 <= args.mix_v3_from_step <= step
                                             else 0.0,
                                             frame_p=0.4 if v5 else 0.0)
            xs.append(toks)
            ms.append(mask)
            tasks.append(task)
        t = torch.tensor(xs)
        m = torch.tensor(ms)[:, 1:].bool()
        x, y = t[:, :-1], t[:, 1:]
        logits, ce = forward_loss(model, x, y, m, autocast)
        lm_mask = ~m
        loss_lm = ce[lm_mask].mean()
        if not m.any():
            loss_ans = torch.zeros(())
        elif v2:  # per-sample mean over its answer tokens, then mean over samples with answers
            mf = m.float()
            cnt = mf.sum(1)
            has = cnt > 0
            loss_ans = ((ce * mf).sum(1)[has] / cnt[has]).mean()
        else:
            loss_ans = ce[m].mean()
        loss = loss_lm + args.answer_weight * loss_ans
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        # per-sample exact match on answers
        with torch.no_grad():
            pred = logits.argmax(-1)
            for i in range(B):
                if tasks[i] == "lm":
                    continue
                ok = bool((pred[i][m[i]] == y[i][m[i]]).all())
                agg[f"n_{tasks[i]}"] += 1
                agg[f"ok_{tasks[i]}"] += ok
                if tasks[i] == "niah" and T > lo_gate:
                    window.append(int(ok))
        st["step"] += 1
        st["tokens"] += B * T
        agg["loss_lm"] += loss_lm.item()
        agg["loss_ans"] += loss_ans.item()
        agg["steps"] += 1
        if st["step"] % 10 == 0:
            now = time.time()
            dt = now - t_last
            st["train_seconds"] += dt
            rec = {"step": st["step"], "stage_len": L, "T": T, "B": B, "lr": round(lr, 6),
                   "loss_lm": round(agg["loss_lm"] / agg["steps"], 4),
                   "loss_ans": round(agg["loss_ans"] / agg["steps"], 4),
                   "grad_norm": round(float(gn), 3),
                   "tok_s": round((st["tokens"] - tok_last) / dt, 0) if tok_last else None,
                   "gate_acc": round(sum(window) / len(window), 3) if window else None,
                   "gate_n": len(window), "tokens": st["tokens"],
                   "train_s": round(st["train_seconds"], 0), "wall_s": wall()}
            for k in list(agg):
                if k.startswith("n_"):
                    rec["acc_" + k[2:]] = round(agg["ok_" + k[2:]] / agg[k], 2)
            log(logf, rec)
            agg.clear()
            t_last, tok_last = time.time(), st["tokens"]
        elif tok_last == 0:
            t_last, tok_last = time.time(), st["tokens"]
        # curriculum: a stage ends when its gate passes (never a clock) or, from the second
        # stage on, after --stage-step-cap steps
        last = st["stage"] == len(stages) - 1
        acc = sum(window) / len(window) if window else 0.0
        gate_passed = len(window) >= args.gate_window and acc >= args.gate
        capped = (args.stage_step_cap > 0 and 0 < st["stage"] and
                  st["step"] - st["stage_start"][-1] >= args.stage_step_cap)
        if not last and (gate_passed or capped):
            log(logf, {"event": "stage_pass", "step": st["step"], "stage_len": L,
                       "gate_acc": acc, "reason": "gate" if gate_passed else "--stage-step-cap"})
            do_eval(f"pass_{L}")
            st["stage"] += 1
            st["stage_start"].append(st["step"])
            window.clear()
        elif (last and len(window) >= args.gate_window and acc >= args.final_gate
              and not st["decay_start"]):
            st["decay_start"] = st["step"]
            log(logf, {"event": "decay_start", "step": st["step"], "gate_acc": acc})
        if st["decay_start"] and st["step"] >= end_step():
            st["done"] = True
        if st["step"] % args.eval_every == 0 or st["done"]:
            do_eval("final" if st["done"] else "periodic")
            t_last, tok_last = time.time(), st["tokens"]
        if st["step"] % args.ckpt_every == 0 or st["done"]:
            save()
    save()
    log(logf, {"event": "stopped", "step": st["step"], "done": st["done"]})


if __name__ == "__main__":
    main()
