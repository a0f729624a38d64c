"""Compares a from-scratch rerun of a shipped model's training with the shipped run's record.

  /usr/bin/python3 models/training/compare_run.py --role draft \
      --log CKPT/d3-repro/log.jsonl [--manifest models/capable/manifest.json] \
      [--window 1000]

The shipped side is the manifest member's `heldout_evals_during_training` and
`learning_curve_every_100_steps`; the rerun side is the rerun's log.jsonl (it may still be
running: only the steps both have are compared). Prints, for every common evaluation step, the
held-out bits per byte and RULER accuracies of both; for every window of `--window` steps, the
mean training losses of both at the same steps (multiples of 100) with the shipped run's own
standard deviation of single values inside the window (step-to-step noise plus the window's own
trend: a scale to judge a difference by, not a statistical test); and the step and curriculum
stage each reached. It reads logs only and never trains.
"""
import argparse
import json
import math
import sys

EVAL_KEYS = ("heldout_bpb", "ruler_1024", "ruler_2048", "ruler_4096")
LOSS_KEYS = ("loss_lm", "loss_ans")


def read_rerun(path):
    steps, evals, stages, stopped = {}, {}, [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"compare_run: {path}:{n}: not JSON ({e})")
            ev = r.get("event")
            if ev is None and "step" in r:
                steps[r["step"]] = r
            elif ev == "eval":
                evals[r["step"]] = r
            elif ev == "stage_pass":
                stages.append(r)
            elif ev == "stopped":
                stopped = r  # the last one says whether the run finished
    return steps, evals, stages, stopped


def shipped_member(manifest_path, role):
    man = json.load(open(manifest_path))
    for m in man.get("members", []):
        if m.get("role") == role:
            return m
    sys.exit(f"compare_run: {manifest_path}: no member with role '{role}'")


def mean_sd(xs):
    mu = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return mu, sd


def print_evals(shipped, rerun):
    common = sorted(set(shipped) & set(rerun))
    print(f"held-out evaluations at {len(common)} common steps (shipped / rerun):")
    print("  step  " + "  ".join(f"{k:>19}" for k in EVAL_KEYS))
    for s in common:
        cells = [f"{shipped[s][k]:9.4f}/{rerun[s][k]:<9.4f}" for k in EVAL_KEYS]
        print(f"{s:6d}  " + "  ".join(cells))


def print_losses(curve, steps, window):
    print(f"\ntraining loss, means over {window}-step windows at the steps both logged "
          "(every 100); sd = the shipped run's sd of single values in the window:")
    print("  window        n   " + "   ".join(f"{k + ' shipped/rerun (sd)':>34}" for k in LOSS_KEYS))
    last = max(s for s in curve if s in steps) if set(curve) & set(steps) else 0
    for lo in range(0, last, window):
        common = [s for s in sorted(curve) if lo < s <= lo + window and s in steps]
        if not common:
            continue
        cells = []
        for k in LOSS_KEYS:
            ms, sd = mean_sd([curve[s][k] for s in common])
            mr, _ = mean_sd([steps[s][k] for s in common])
            cells.append(f"{ms:8.4f} / {mr:8.4f} ({sd:6.4f}, diff {(mr - ms):+.4f})")
        print(f"  {lo + 1:5d}-{lo + window:<6d} {len(common):3d}   " + "   ".join(cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--role", required=True, help="manifest member role: draft or target")
    ap.add_argument("--log", required=True, help="the rerun's log.jsonl")
    ap.add_argument("--manifest", default="models/capable/manifest.json")
    ap.add_argument("--window", type=int, default=1000,
                    help="loss window in steps (a multiple of 100, at least 200)")
    a = ap.parse_args()
    if a.window < 200 or a.window % 100:
        sys.exit("compare_run: --window must be a multiple of 100 and at least 200")
    m = shipped_member(a.manifest, a.role)
    for key in ("heldout_evals_during_training", "learning_curve_every_100_steps"):
        if key not in m:
            sys.exit(f"compare_run: {a.manifest}: member '{a.role}' has no {key} (not trained?)")
    shipped_evals = {e["step"]: e for e in m["heldout_evals_during_training"]}
    curve = {c["step"]: c for c in m["learning_curve_every_100_steps"]}
    steps, evals, stages, stopped = read_rerun(a.log)
    if not steps:
        sys.exit(f"compare_run: {a.log}: no training steps logged yet")
    print_evals(shipped_evals, evals)
    print_losses(curve, steps, a.window)
    shipped_passes = [(e["step"], e["stage_len"]) for e in m.get("curriculum_events", [])
                      if e.get("event") == "stage_pass"]
    if stopped is not None and stopped.get("done"):
        reached = f"{stopped['step']} (finished)"
    else:
        reached = f"{max(steps)} logged so far (not finished)"
    print(f"\nsteps: shipped {m.get('steps_trained')}, rerun {reached}")
    print(f"stage passes (step, length): shipped {shipped_passes}; "
          f"rerun {[(e['step'], e['stage_len']) for e in stages]}")


if __name__ == "__main__":
    main()
