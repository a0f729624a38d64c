"""Writes models/capable/manifest.json from the training logs and evaluation files.

  /usr/bin/python3 models/training/make_manifest.py --out models/capable/manifest.json \
      --member target:CKPT/tgt:models/capable/target.gguf:/tmp/target-eval.json \
      --member draft:CKPT/dr:models/capable/draft.gguf:
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data as D  # noqa: E402


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--member", action="append", required=True,
                    help="role:ckpt_dir:gguf:engine_eval_json(optional)")
    ap.add_argument("--commands", default="", help="JSON file {role: [command lines]}")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    cmds = json.load(open(args.commands)) if args.commands else {}
    corpus = D.Corpus()
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.py"), "rb").read()
    man = {"family": "capable",
           "description": "byte-level llama models trained here (models/training) on retrieval, "
                          "copying and essay text; see models/training/README.md",
           "tokenizer": "byte-level: 256 GPT-2 byte pieces + <|bos|> (256) + <|eos|> (257), "
                        "gpt2 model, no merges (identical to the synthetic families')",
           "data": {"essays": D.ESSAYS_RELPATH, "essays_sha256": corpus.sha256,
                    "heldout_bytes": [0, D.HELDOUT_END],
                    "train_bytes": [D.HELDOUT_END, D.HELDOUT_END + len(corpus.train)],
                    "data_py_sha256": hashlib.sha256(src).hexdigest(),
                    "tasks_v1": dict(D.TASKS), "tasks_v2": dict(D.TASKS_V2),
                    "tasks_v4": dict(D.TASKS_V4),
                    "canonical_form_from_v3": {"needle": D.CANON_NEEDLE,
                                               "question": D.CANON_QUESTION[0],
                                               "share_of_niah_samples": 0.7}},
           "note": args.note, "members": []}
    for spec in args.member:
        role, ckdir, gguf, ev = (spec.split(":") + [""])[:4]
        if ckdir.startswith("prune="):  # a layer-pruned copy of another member, not trained
            src, n = ckdir[len("prune="):].split(",")
            m = {"role": role, "file": os.path.basename(gguf), "sha256": sha256(gguf),
                 "bytes": os.path.getsize(gguf),
                 "made_by": f"models/training/gguf_export.py --ckpt <{src} ckpt.pt> --keep-layers {n}"
                            " (first blocks, final norm and output head of that member; not "
                            "fine-tuned)"}
            if ev and os.path.exists(ev):
                e = json.load(open(ev))
                m["engine_eval"] = {"method": e["method"], "by_length": e["by_length"]}
            man["members"].append(m)
            continue
        recs = [json.loads(l) for l in open(os.path.join(ckdir, "log.jsonl"))]
        start = [r for r in recs if r.get("event") == "start"][0]
        steps = [r for r in recs if "step" in r and "loss_lm" in r]
        evals = [r for r in recs if r.get("event") == "eval"]
        exports = [r for r in recs if r.get("event") == "export" and r.get("path") == gguf]
        stages = [r for r in recs if r.get("event") in ("stage_pass", "decay_start", "resume",
                                                         "stopped", "reopened",
                                                         "long_range_start")]
        # the arguments the run ended with: its last invocation's (resumes log theirs)
        final_args = [r["args"] for r in recs
                      if r.get("event") in ("start", "resume") and "args" in r][-1]
        last = steps[-1] if steps else {}
        m = {"role": role, "file": os.path.basename(gguf), "sha256": sha256(gguf),
             "bytes": os.path.getsize(gguf), "config": start["config"], "params": start["params"],
             "seed": start["args"]["seed"], "train_args": final_args,
             "commands": cmds.get(role, []),
             "bf16_autocast": start["bf16_autocast"], "torch": start["torch"],
             # the machines of the start and every resume (logged since 2026-11-24; older logs
             # have none)
             "machines": [r["machine"] for r in recs
                          if r.get("event") in ("start", "resume") and "machine" in r],
             # the log writes a step line every 10 steps; a run ends where its last record says
             "steps_trained": max(r["step"] for r in recs if "step" in r),
             "tokens_trained_at_last_logged_step": [last.get("step"), last.get("tokens")],
             "wall_seconds_training_process": last.get("wall_s"),
             "exported_at_step": exports[-1]["step"] if exports else None,
             "curriculum_events": stages,
             "heldout_evals_during_training": [
                 {k: (round(v, 4) if isinstance(v, float) else v) for k, v in e.items()
                  if k not in ("event", "time")} for e in evals],
             "learning_curve_every_100_steps": [
                 {k: s.get(k) for k in ("step", "stage_len", "loss_lm", "loss_ans", "gate_acc",
                                        "tok_s", "wall_s")} for s in steps if s["step"] % 100 == 0]}
        for evf in [x for x in ev.split(",") if x and os.path.exists(x)]:
            e = json.load(open(evf))
            m.setdefault("engine_evals", []).append({
                                "file": os.path.basename(evf),
                                "method": e["method"], "draft": e["draft"], "params": e["params"],
                                "style": e["style"], "seed": e["seed"],
                                "n_per_length": e["n"], "by_length": e["by_length"],
                                "seconds": e["seconds"]})
        man["members"].append(m)
    json.dump(man, open(args.out, "w"), indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
