#!/usr/bin/env bash
# 100,000 idle registered connections on one hub (issue 15): a hub with --default-delivery scoped
# and no special flags beyond its limits; `bench` opens IDLE idle agents spread over the source
# addresses 127.0.0.2-127.0.0.9 (one source address has ~28,000 ephemeral ports towards one hub)
# plus one claimant paced at RATE claims/s. Once every connection is registered and the measured
# phase runs, the hub's heap is read after a full GC (jcmd GC.run, GC.heap_info) and its RSS.
# The full GC stops the hub, so it runs 10 s into the claimant's warm-up (WARMUP, default 30 s),
# and the measured phase starts well after it.
#
#   benchmarks/fleet/idle-100k.sh [results-dir]      (build first: ./mvnw -B -q -DskipTests package)
#   IDLE (100000), RATE (5), DURATION (60), WARMUP (30), HUB_XMX (4g), BENCH_XMX (8g), PORT (18951)
#
# File descriptors: hub and tool are separate processes and each holds one socket per
# connection, so each needs `ulimit -n` above IDLE + 1 plus a few hundred (jars, journal, epoll).
# The script raises the soft limit to IDLE + 1,000 and fails early if the hard limit is lower:
# raising the hard limit needs CAP_SYS_RESOURCE (root on a plain host: `ulimit -Hn 200000`, up to
# fs.nr_open; systemd: LimitNOFILE=, as in config/synapse-hub.service).
# Bounded: the bench stops after --duration; the hub is stopped on exit. 127.0.0.x only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="$root/hub-cli/target/synapse-hub.jar"
out="${1:-$root/benchmarks/fleet/results}"
mkdir -p "$out"
idle=${IDLE:-100000}; rate=${RATE:-5}; duration=${DURATION:-60}; port=${PORT:-18951}
JAVA="${JAVA:-java}"
need=$((idle + 1000))
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
  ulimit -Hn "$need" 2>/dev/null || { echo "ulimit -n: the hard limit $(ulimit -Hn) is below $need and this process" \
      "may not raise it (no CAP_SYS_RESOURCE): run fewer IDLE or raise it first" >&2; exit 1; }
fi
ulimit -Sn "$need"
echo "ulimit -n $(ulimit -n); $(uptime | sed 's/.*load average/load average/')" | tee "$out/run.txt"

"$JAVA" -Xmx"${HUB_XMX:-4g}" -jar "$jar" --port "$port" --metrics --default-delivery scoped \
    --max-clients $((idle + 100)) --max-connections-per-host 0 --auth-timeout 120 --log-level WARN \
    > "$out/hub.log" 2>&1 &
hub=$!
bench=""
cleanup() {
  if [ -n "$bench" ]; then kill "$bench" 2>/dev/null || true; wait "$bench" 2>/dev/null || true; fi
  kill "$hub" 2>/dev/null || true; wait "$hub" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1==n {print $2}'; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, clock ticks

start=$(date +%s)
"$JAVA" -Xmx"${BENCH_XMX:-8g}" -jar "$jar" bench --url "ws://127.0.0.1:$port" --agents 1 --idle "$idle" \
    --rate "$rate" --duration "$duration" --warmup "${WARMUP:-30}" --connect-parallelism 64 --connect-timeout 300 \
    --source-addresses 127.0.0.2-127.0.0.9 > "$out/bench.txt" 2> "$out/bench.err" &
bench=$!
# wait until every connection is registered (idle + the claimant), then into the measured phase
while kill -0 "$bench" 2>/dev/null; do
  n=$(metric synapse_connected_clients || echo 0)
  if [ "${n%.*}" -ge $((idle + 1)) ] 2>/dev/null; then break; fi
  sleep 2
done
connected=$(( $(date +%s) - start ))
sleep 10
{
  echo "connected $(metric synapse_connected_clients) sockets in ${connected} s"
  echo "after connecting: hub CPU $(cpu $hub) ticks, bench CPU $(cpu $bench) ticks (ticks: $(getconf CLK_TCK)/s)"
  t0=$(date +%s%N); jcmd "$hub" GC.run > /dev/null; echo "full GC: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  echo "hub heap after a full GC:"; jcmd "$hub" GC.heap_info | sed 's/^/  /'
  echo "hub RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$hub/status); bench RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$bench/status)"
  echo "hub sockets by source address:"
  ss -Htn state established "( sport = :$port )" | awk '{print $4}' | sed -E 's/^\[?(::ffff:)?//; s/\]?:[0-9]+$//' | sort | uniq -c | sed 's/^/  /'
  echo "$(uptime | sed 's/.*load average/load average/')"
} 2>&1 | tee -a "$out/run.txt"
wait "$bench" || echo "(bench exit code $?)" | tee -a "$out/run.txt"
bench=""
cat "$out/bench.txt" | tee -a "$out/run.txt"
tr '\r' '\n' < "$out/bench.err" | grep -v '^ *connected ' | tail -4 | tee -a "$out/run.txt"
echo "hub CPU total $(cpu $hub) ticks; $(uptime | sed 's/.*load average/load average/')" | tee -a "$out/run.txt"
