#!/usr/bin/env bash
# Tree hygiene: the committed files speak of the project only. Fails on absolute paths under the
# directory that holds the checkout (a path that works on one machine only) and on numbered
# work-period references (the word "session" and a number); dates and commits say when instead.
# Reads tracked text files only; prints every offending line. Usage: scripts/check_tree.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
parent=$(dirname "$root")
status=0
report() {  # $1: what is wrong; $2: the offending lines (grep -n output), may be empty
  if [ -n "$2" ]; then
    printf 'check_tree: %s:\n%s\n' "$1" "$2" >&2
    status=1
  fi
}
# -I skips binary files (the shipped GGUFs); git grep reads tracked files only.
if [ "$parent" != "/" ]; then
  report "absolute paths under $parent/ (use a path relative to the checkout, or a named placeholder such as CKPT)" \
    "$(git grep -n -I -F "$parent/" -- . || true)"
fi
report "numbered work-period references (say the date or the commit instead)" \
  "$(git grep -n -I -i -E '\bsessions? ?[0-9]+|\bsession-[0-9]+|\bwork periods? [0-9]+' -- . \
    ':!scripts/check_tree.sh' || true)"
exit "$status"
