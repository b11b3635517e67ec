#!/usr/bin/env bash
# 10,000 agents on one hub (issue 15), one bounded run per call:
#   compat  [LINGER_MS]  the contract's broadcast delivery: 1 claimant at RATE (20) claims/s beside
#                        10,000 idle agents that declare nothing; --broadcast-linger-ms LINGER_MS (5)
#   fleet                scoped delivery: 10,000 agents, each its own paced claimant, RATE (1000)
#                        claims/s in all (each agent one claim every 10 s)
# JFR=1 records the hub for the measured phase (jdk.ExecutionSample, profile settings) and
# prints the hottest frames. Prints the bench's figures, hub and bench CPU, the load average.
#
#   benchmarks/fleet/claims-10k.sh compat [LINGER_MS] | fleet       (build first: ./mvnw -B -q -DskipTests package)
#   RESULTS (/tmp/synapse-fleet), DURATION (30), WARMUP (20 compat, 10 fleet, paced), PORT (18961)
#   IDLE (10000, compat: the idle agents), IDLE_READ_MS (0: the tool reads its idle connections in
#   passes one every IDLE_READ_MS ms, bench --idle-read-interval-ms), JAR (the hub jar to run), HUB_OPTS (JVM options of the hub)
#   HUB_FLAGS (extra hub options, e.g. "--max-fanout-delay-ms 1000")
#   PACED_WARMUP (1: compat's warm-up is paced at RATE too; 0: flat out, as before 2026-12-03 13:40 UTC. A
#   flat-out claimant among 10,000 listeners leaves the hub a fan-out backlog of hundreds of batches,
#   seconds of passes at a long linger, that the measured phase inherits: docs/benchmarks.md, fifth look)
# Also prints the hub's user and system CPU over about the measured phase (/proc), and for
# compat its CPU per delivered broadcast frame (2 frames per claim cycle to each socket), and the
# hub's mean fan-out delay (synapse_fanout_delay_seconds: publication until a loop's every socket has it).
#
# Bounded: the bench stops after --duration; the hub is stopped on exit. 127.0.0.x only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="${JAR:-$root/hub-cli/target/synapse-hub.jar}"
mode=${1:?compat or fleet}; linger=${2:-5}
out="${RESULTS:-/tmp/synapse-fleet}/$mode-$linger-$(date +%H%M%S)"
mkdir -p "$out"
duration=${DURATION:-30}; port=${PORT:-18961}
JAVA="${JAVA:-java}"
ulimit -Sn "$(ulimit -Hn)"
case "$mode" in
  compat) hubflags=(--default-delivery broadcast --broadcast-linger-ms "$linger" --presence-fanout-limit 256)
          idle=${IDLE:-10000}
          benchflags=(--agents 1 --idle "$idle" ${IDLE_READ_MS:+--idle-read-interval-ms "$IDLE_READ_MS"} --rate "${RATE:-20}" --warmup "${WARMUP:-20}")
          if [ "${PACED_WARMUP:-1}" = 1 ]; then benchflags+=(--paced-warmup); fi; total=$((idle + 1)) ;;
  fleet)  hubflags=(--default-delivery scoped --max-claims-per-agent 20000)
          benchflags=(--agents 10000 --rate "${RATE:-1000}" --paced-warmup --warmup "${WARMUP:-10}"); total=10000 ;;
  *) echo "mode: compat or fleet" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
"$JAVA" -Xmx2g ${HUB_OPTS:-} -jar "$jar" --port "$port" --metrics --max-clients 10100 --max-connections-per-host 0 \
    --auth-timeout 120 --log-level WARN "${hubflags[@]}" ${HUB_FLAGS:-} > "$out/hub.log" 2>&1 &
hub=$!
bench=""
cleanup() {
  if [ -n "$bench" ]; then kill "$bench" 2>/dev/null || true; wait "$bench" 2>/dev/null || true; fi
  kill "$hub" 2>/dev/null || true; wait "$hub" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
echo "== $mode linger=$linger: hub ${hubflags[*]} ${HUB_FLAGS:-}; bench ${benchflags[*]} --duration $duration; $(uptime | sed 's/.*load average/load average/')" | tee "$out/run.txt"
"$JAVA" -Xmx4g -jar "$jar" bench --url "ws://127.0.0.1:$port" "${benchflags[@]}" --duration "$duration" \
    --connect-parallelism 64 --connect-timeout 300 --source-addresses 127.0.0.2-127.0.0.9 \
    > "$out/bench.txt" 2> "$out/bench.err" &
bench=$!
metric() { curl -s -m 20 "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1==n {print $2}'; }
while kill -0 "$bench" 2>/dev/null; do
  n=$(metric synapse_connected_clients || echo 0)
  if [ "${n%.*}" -ge "$total" ] 2>/dev/null; then break; fi
  sleep 2
done
echo "connected $total; $(uptime | sed 's/.*load average/load average/')" | tee -a "$out/run.txt"
# the hub's user and system CPU ticks (/proc/PID/stat fields 14, 15)
ticks() { awk '{print $14, $15}' "/proc/$hub/stat"; }
warmup=${WARMUP:-$([ "$mode" = compat ] && echo 20 || echo 10)}
sleep "$(( warmup > 3 ? warmup - 3 : 0 ))"
before=$(ticks)
fd_sum0=$(metric synapse_fanout_delay_seconds_sum || true); fd_n0=$(metric synapse_fanout_delay_seconds_count || true)
# batches (x loops) whose fan-out delay was at most 1, 2.5, 5 s: how often a delay bound would have tripped
slow_at() { curl -s -m 20 "http://127.0.0.1:$port/metrics" | awk -v le="$1" '$1 == "synapse_fanout_delay_seconds_bucket{le=\""le"\"}" {print $2}'; }
le1_0=$(slow_at 1.0 || true); le25_0=$(slow_at 2.5 || true); le5_0=$(slow_at 5.0 || true)
if [ "${JFR:-0}" = 1 ]; then
  jcmd "$hub" JFR.start name=fleet settings=profile duration="${duration}s" filename="$out/hub.jfr" > /dev/null
fi
# the fan-out's state once a second over the same window (the gauges exist from branch admission7 on)
# (a scrape that fails or times out, as it may when the hub is most behind, is counted, not read as 0;
# nothing in the loop may end it under set -e)
( while kill -0 "$bench" 2>/dev/null; do
    if scrape=$(curl -s -m 5 "http://127.0.0.1:$port/metrics"); then
      printf '%s\n' "$scrape" | awk '$1 == "synapse_fanout_writes_owed" {w = $2}
          $1 == "synapse_fanout_oldest_undelivered_seconds" {d = $2} END {print w + 0, d + 0}' >> "$out/fanout-samples.txt" || true
    else
      echo missed >> "$out/fanout-samples.txt" || true
    fi
    sleep 1
  done ) &
sampler=$!
wait "$bench" || echo "(bench exit code $?)" | tee -a "$out/run.txt"
bench=""
kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
after=$(ticks)
fd_sum1=$(metric synapse_fanout_delay_seconds_sum || true); fd_n1=$(metric synapse_fanout_delay_seconds_count || true)
le1_1=$(slow_at 1.0 || true); le25_1=$(slow_at 2.5 || true); le5_1=$(slow_at 5.0 || true)
refusals=$(curl -s -m 20 "http://127.0.0.1:$port/metrics" | grep -E '^synapse_(fanout_busy_refusals_total|admission_busy_refusals_total)' | tr '\n' ' ' || true)
hz=$(getconf CLK_TCK)
read -r u0 s0 <<< "$before"; read -r u1 s1 <<< "$after"
echo "hub CPU (/proc, ~measured phase + 3 s): user $(( (u1 - u0) * 1000 / hz )) ms, system $(( (s1 - s0) * 1000 / hz )) ms" \
    | tee -a "$out/run.txt"
cat "$out/bench.txt" | tee -a "$out/run.txt"
# the hub's own view: from a batch's publication until a loop has handed it to every socket it serves;
# read from the same scrape points as the CPU line, so its window starts 3 s before the measured phase
awk -v s0="${fd_sum0:-0}" -v s1="${fd_sum1:-0}" -v n0="${fd_n0:-0}" -v n1="${fd_n1:-0}" 'BEGIN {
  if (n1 > n0) printf "hub fan-out delay   mean %.1f ms per batch and loop (%d batches x loops, over the last 3 s of warm-up + the measured phase + the bench stop)\n", (s1 - s0) * 1000 / (n1 - n0), n1 - n0 }' \
  | tee -a "$out/run.txt"
awk -v n0="${fd_n0:-0}" -v n1="${fd_n1:-0}" -v a0="${le1_0:-0}" -v a1="${le1_1:-0}" -v b0="${le25_0:-0}" -v b1="${le25_1:-0}" \
    -v c0="${le5_0:-0}" -v c1="${le5_1:-0}" 'BEGIN { if (n1 > n0) printf "hub fan-out delay   over 1 s: %d, over 2.5 s: %d, over 5 s: %d (batches x loops, same window)\n", \
    (n1 - n0) - (a1 - a0), (n1 - n0) - (b1 - b0), (n1 - n0) - (c1 - c0) }' | tee -a "$out/run.txt"
echo "hub busy refusals (end of run): ${refusals:-none}" | tee -a "$out/run.txt"
awk '$1 == "missed" { missed++; next } { if ($1 > w) w = $1; if ($2 > d) d = $2; n++ }
    END { if (n || missed) printf "hub fan-out state   sampled %d times (1/s; %d scrapes failed or timed out): writes owed by one loop max %d, oldest undelivered max %.3f s\n", n, missed, w, d }' \
    "$out/fanout-samples.txt" 2>/dev/null | tee -a "$out/run.txt" || true
if [ "$mode" = compat ]; then
  awk -v sockets="$total" '/^claims granted/ {n=$3} /^hub CPU/ {cpu=$3}
      END {if (n > 0) printf "hub CPU per delivered broadcast frame: %.2f µs (%d claim cycles x 2 x %d sockets)\n", cpu * 1e6 / (n * 2 * sockets), n, sockets}' \
      "$out/bench.txt" | tee -a "$out/run.txt"
fi
tr '\r' '\n' < "$out/bench.err" | grep -v '^ *connected ' | tail -4 | tee -a "$out/run.txt"
echo "after: $(uptime | sed 's/.*load average/load average/')" | tee -a "$out/run.txt"
if [ "${JFR:-0}" = 1 ]; then
  for _ in $(seq 1 30); do [ -s "$out/hub.jfr" ] && break; sleep 1; done
  jcmd "$hub" JFR.stop name=fleet > /dev/null 2>&1 || true
  if [ -s "$out/hub.jfr" ]; then
    echo "hub: hottest top frames (jdk.ExecutionSample)" | tee -a "$out/run.txt"
    jfr print --events jdk.ExecutionSample "$out/hub.jfr" | awk '/stackTrace = \[/ {getline; print}' \
      | sed 's/line:.*//' | sort | uniq -c | sort -rn | head -25 | tee -a "$out/run.txt"
  fi
fi
