#!/usr/bin/env bash
# Network benchmarks with the hub's own load tool (docs/benchmarks.md, "Wire").
# Loopback only. Every run is bounded by --duration and/or --count and stops by itself.
# Usage: benchmarks/network/run.sh [results-dir]     (build first: ./mvnw -B -q -DskipTests package)
# SECTIONS="claims idle messaging" (default: all three) picks what to run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="$root/hub-cli/target/synapse-hub.jar"
out="${1:-$root/benchmarks/network/results}"
mkdir -p "$out"
JAVA="${JAVA:-java}"
port=18900
hub_pid=""

start_hub() { # name, extra hub flags...
  local name="$1"; shift
  port=$((port + 1))
  rm -f "$out/$name.db" "$out/$name.db-wal" "$out/$name.db-shm"
  "$JAVA" -Xmx2g -jar "$jar" --port "$port" --log-level WARN "$@" > "$out/$name.hub.log" 2>&1 &
  hub_pid=$!
  for _ in $(seq 1 100); do
    if "$JAVA" -jar "$jar" who --url "ws://127.0.0.1:$port" --timeout 1 > /dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "hub $name did not start" >&2; return 1
}

stop_hub() {
  if [ -n "$hub_pid" ]; then kill -TERM "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; fi
  hub_pid=""
}
trap stop_hub EXIT

heap_of_hub() { # used heap after a full GC, in MiB
  jcmd "$hub_pid" GC.run > /dev/null 2>&1 || true
  jcmd "$hub_pid" GC.heap_info 2>/dev/null | awk '/used/ {for (i=1;i<=NF;i++) if ($i=="used") {print $(i+1); exit}}'
}

bench() { # name, bench flags...
  local name="$1"; shift
  echo "== $name ($(uptime | sed 's/.*load average/load average/'))" | tee "$out/$name.txt"
  # a run that is not clean (exit 1: errors, or connections the hub dropped) is reported, not fatal
  "$JAVA" -Xmx4g -jar "$jar" bench --url "ws://127.0.0.1:$port" --quiet "$@" 2>&1 | tee -a "$out/$name.txt" \
    || echo "(bench exit code $?: not a clean run)" | tee -a "$out/$name.txt"
}

sections="${SECTIONS:-claims idle messaging}"
big="--max-clients 12000 --max-connections-per-host 0 --max-claims-per-agent 20000 --auth-timeout 60"

# Claim -> grant round trips (issue 4)
if [[ " $sections " == *" claims "* ]]; then
for mode in memory durable; do
  flags="$big"; [ "$mode" = durable ] && flags="$big --db $out/claims-$mode.db"
  for agents in 1 64 1000; do
    start_hub "claims-$mode-$agents" $flags
    bench "claims-$mode-$agents" --agents "$agents" --duration 10 --warmup 20 --connect-parallelism 64
    stop_hub
  done
  # the throughput configurations: 64 agents, each keeping 4 (durable: also 8) claims in flight
  inflight="4"; [ "$mode" = durable ] && inflight="4 8"
  for n in $inflight; do
    start_hub "claims-$mode-64x$n" $flags
    # CPU of hub and tool over 6 s of the measured phase (it starts 20 s in, after the warm-up)
    (sleep 23; "$root/benchmarks/network/cpu.py" 6 > "$out/claims-$mode-64x$n.cpu" 2>&1) &
    cpu_pid=$!
    bench "claims-$mode-64x$n" --agents 64 --in-flight "$n" --duration 10 --warmup 20 --connect-parallelism 64
    wait "$cpu_pid"
    stop_hub
  done
done
fi

# 10,000 idle connected agents, claim latency meanwhile (presence broadcasts capped: see docs)
if [[ " $sections " == *" idle "* ]]; then
# One claimant, unpaced (each claim and release fans out to 10,001 sockets) and paced.
for rate in 0 10 5 1; do
  name="idle-10000-rate$rate"
  start_hub "$name" $big --presence-fanout-limit 256
  bench "$name" --agents 1 --idle 10000 --rate "$rate" --duration 30 --warmup 20 --connect-parallelism 64 \
    --connect-timeout 300 &
  bench_pid=$!
  for _ in $(seq 1 120); do grep -q "^bench: " "$out/$name.txt" 2>/dev/null && break; sleep 5; done
  sleep 10   # all 10,000 connections are registered and the measured phase runs
  echo "hub heap used after GC with 10,001 connections: $(heap_of_hub) (RSS $(ps -o rss= -p "$hub_pid") KiB)" \
    | tee -a "$out/$name.txt"
  wait "$bench_pid"
  stop_hub
done
fi

# Messaging (issue 5)
if [[ " $sections " == *" messaging "* ]]; then
start_hub broadcast-1000 $big
bench broadcast-1000 --workload broadcast --agents 1000 --duration 10 --warmup 10 --connect-parallelism 64
stop_hub
start_hub directed-64 $big --private-directed-messages --db "$out/directed-64.db"
bench directed-64 --workload directed --agents 64 --duration 10 --warmup 10
stop_hub
start_hub mailbox-10000 $big --db "$out/mailbox-10000.db"
bench mailbox-10000 --workload mailbox --count 10000 --duration 120
stop_hub
fi
