#!/usr/bin/env bash
# Group commit under a claim load mixed with reads (issue 11): one durable hub per run, 64 agents
# x 4 claims in flight for 10 s (after 5 s of warm-up), a who_request (a read through the writer
# on a journaled hub) after every WHO-th claim, 0 for none. Prints claims/s, the claim latency
# line and the mutations per journal transaction (one fsync each), read off /metrics.
#
#   benchmarks/network/group-commit-with-reads.sh JAR LABEL WHO      e.g. hub-cli/target/synapse-hub.jar now 2
#
# Bounded: each run stops after its duration; 127.0.0.1 only; PORT (default 18876) must be free.
set -euo pipefail
jar=$1; label=$2; who=$3; port=${PORT:-18876}
out=$(mktemp -d)
java -jar "$jar" --port "$port" --db "$out/bench.db" --metrics --max-claims-per-agent 4096 \
    --max-connections-per-host 0 --log-level WARN > "$out/hub.log" 2>&1 &
hub=$!
trap 'kill $hub 2>/dev/null; wait $hub 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
m0=$(curl -s "http://127.0.0.1:$port/metrics")
java -jar "$jar" bench --url "ws://127.0.0.1:$port" --agents 64 --in-flight 4 --who-every "$who" \
    --duration 10 --warmup 5 --quiet > "$out/bench.txt" 2>&1 || true
m1=$(curl -s "http://127.0.0.1:$port/metrics")
val() { echo "$1" | awk -v n="$2" '$1==n {print $2}'; }
c0=$(val "$m0" synapse_actor_commands_total); c1=$(val "$m1" synapse_actor_commands_total)
b0=$(val "$m0" synapse_journal_commits_total); b1=$(val "$m1" synapse_journal_commits_total)
if [ -z "$b1" ]; then # builds before issue 11 export only the lifetime mean batch size
  mb=$(val "$m1" synapse_actor_mean_batch_size); b0=0; b1=$(python3 -c "print($c1/$mb if $mb else 0)")
fi
echo "$label who-every=$who: $(grep -E 'claims granted' "$out/bench.txt" | head -1) | $(grep -E 'claim->grant' "$out/bench.txt" | head -1) | mutations per commit $(python3 -c "print(round(($c1-$c0)/max(1,($b1-$b0)),2))")"
