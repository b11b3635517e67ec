#!/usr/bin/env bash
# Per-thread CPU of a running process over a window, from /proc/PID/task/*: user and system ms,
# and voluntary / involuntary context switches a second (a thread that sleeps in epoll_wait and is
# woken per frame shows many voluntary ones). Threads under 50 ms of CPU are left out.
#   benchmarks/fleet/thread-cpu.sh PID [SECONDS (10)]
set -euo pipefail
pid=${1:?PID}; s=${2:-10}
snap() {
  for t in /proc/"$pid"/task/*; do
    n=$(cat "$t/comm" 2>/dev/null) || continue
    # utime and stime (fields 14, 15), counted after the name: "(C2 CompilerThre)" holds a space
    st=$(sed 's/.*) //' "$t/stat" 2>/dev/null | awk '{print $12, $13}') || continue
    cs=$(awk '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {nv=$2} END {print v, nv}' "$t/status" 2>/dev/null) || continue
    echo "${t##*/} ${n// /_} $st $cs"
  done | sort
}
a=$(snap); sleep "$s"; b=$(snap)
join <(echo "$a") <(echo "$b") | awk -v hz="$(getconf CLK_TCK)" -v s="$s" '{
  # joined: tid, then name user sys voluntary involuntary from each snapshot
  u = ($8 - $3) * 1000 / hz; y = ($9 - $4) * 1000 / hz
  if (u + y >= 50) printf "  %-18s user %5d ms  sys %5d ms  voluntary cs/s %6.0f  involuntary cs/s %5.0f\n", $2, u, y, ($10 - $5) / s, ($11 - $6) / s }'
