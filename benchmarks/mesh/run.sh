#!/usr/bin/env bash
# Mesh benchmarks (docs/benchmarks.md, "Mesh: three nodes against one, and leader kill"): loopback only,
# every run bounded by --duration / --kills and a time limit; every process is stopped at the end.
# Usage: benchmarks/mesh/run.sh [results-dir]    (build first: ./mvnw -B -q -DskipTests package)
# JAR (default hub-cli/target/synapse-hub.jar) picks the hub build, e.g. an older one for a before/after pair.
# SECTIONS="claims kill" (default: both). AGENTS="1 64" and INFLIGHT (default 1) pick the claim runs;
# KILLS (default 10) the leader kills. Each figure line carries the 1-minute load average it ran at.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
jar="${JAR:-$root/hub-cli/target/synapse-hub.jar}"
out="${1:-$root/benchmarks/mesh/results}"
mkdir -p "$out"
JAVA="${JAVA:-java}"
sections="${SECTIONS:-claims kill}"
agents_list="${AGENTS:-1 64}"
inflight="${INFLIGHT:-1}"
kills="${KILLS:-10}"
common="--max-clients 12000 --max-connections-per-host 0 --max-claims-per-agent 20000 --auth-timeout 60 --metrics --log-level WARN"
P=n1=127.0.0.1:19771,n2=127.0.0.1:19772,n3=127.0.0.1:19773
pids=()

load() { cut -d' ' -f1 /proc/loadavg; }

stop_all() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT

wait_ws() { # port
  for _ in $(seq 1 300); do
    if "$JAVA" -jar "$jar" who --url "ws://127.0.0.1:$1" --timeout 1 > /dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "no hub on port $1" >&2; return 1
}

start_single() { # name
  rm -rf "$out/$1".db*
  "$JAVA" -Xmx2g -jar "$jar" --port 19781 --db "$out/$1.db" $common > "$out/$1.hub.log" 2>&1 &
  pids+=($!)
  wait_ws 19781
}

start_mesh() { # name, node count (1 or 3)
  local name="$1" n="$2" peers="$P"
  [ "$n" = 1 ] && peers="n1=127.0.0.1:19771"
  rm -rf "$out/$name".n*
  for i in $(seq 1 "$n"); do
    "$JAVA" -Xmx1g -jar "$jar" --port $((19780 + i)) --db "$out/$name.n$i.db" --mesh-id "n$i" --mesh-peers "$peers" --mesh-bootstrap \
      $common > "$out/$name.n$i.log" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 1 "$n"); do wait_ws $((19780 + i)); done
  for _ in $(seq 1 60); do
    if "$JAVA" -jar "$jar" mesh status --mesh-peers "$peers" > "$out/$name.status" 2>&1; then return 0; fi
    sleep 1
  done
  echo "mesh $name has no leader" >&2; return 1
}

bench() { # name, urls, agents
  local name="$1" urls="$2" agents="$3"
  echo "== $name: $agents agent(s) x $inflight against $urls, load before $(load)" | tee "$out/$name.txt"
  "$JAVA" -Xmx2g -jar "$jar" bench --spread-urls "$urls" --agents "$agents" --in-flight "$inflight" --duration 10 \
    --warmup 20 --connect-parallelism 64 --quiet 2>&1 | tee -a "$out/$name.txt" \
    || echo "(bench exit code $?: not a clean run)" | tee -a "$out/$name.txt"
  echo "load after $(load)" | tee -a "$out/$name.txt"
}

if [[ " $sections " == *" claims "* ]]; then
  for agents in $agents_list; do
    start_single "single-$agents"
    bench "single-$agents" ws://127.0.0.1:19781 "$agents"
    stop_all
    start_mesh "mesh1-$agents" 1
    bench "mesh1-$agents" ws://127.0.0.1:19781 "$agents"
    stop_all
    start_mesh "mesh3-$agents" 3
    bench "mesh3-$agents" ws://127.0.0.1:19781,ws://127.0.0.1:19782,ws://127.0.0.1:19783 "$agents"
    "$JAVA" -jar "$jar" mesh status --mesh-peers "$P" >> "$out/mesh3-$agents.txt" 2>&1 || true
    stop_all
  done
fi

if [[ " $sections " == *" kill "* ]]; then
  rm -rf "$out/kill"
  echo "== leader kill x $kills, load before $(load)" | tee "$out/kill.txt"
  "$JAVA" -Xmx512m -cp "$root/benchmarks/target/benchmarks.jar" dev.synapsehub.bench.MeshFailoverBench \
    --dir "$out/kill" --kills "$kills" --max-minutes 25 --launcher "$root/bin/synapse-hub" 2>&1 \
    | grep --line-buffered -v '^SLF4J' | tee -a "$out/kill.txt"
fi
