#!/usr/bin/env bash
# Cold catch-up as an operator runs it (issue 12): a follower started with bin/synapse-hub (its
# launcher, class-data archive and heap flags included) catches up a peer's log of EVENTS events
# over loopback TLS. The peer is FederationBench's serving JVM over its generated journal, warmed
# by one follower first. Each follower is timed from the launcher's exec to its
# synapse_multihub_peer_cursor reaching the log end on /metrics (polled every 100 ms, so the figure
# is up to 0.1 s long), which includes the JVM's and the hub's start; and from /metrics first
# answering (the hub up, its watch started) to the same point. Prints its CPU (user, system) and
# the threads that used the most.
#
#   benchmarks/federation/launcher-catchup.sh [RUNS]     (build first: ./mvnw -B -q -DskipTests package)
#   DIR (/tmp/synapse-launcher-catchup: certificates, journal), EVENTS (1000000), BENCH_JAR
#   (benchmarks/target/benchmarks.jar), SERVER_JVM (-Xmx2g), FOLLOWER_OPTS (SYNAPSE_HUB_JAVA_OPTS of
#   the followers)
#
# Bounded: a follower is stopped after 120 s, the serving JVM when this script's pipe to it closes
# (or after 900 s). 127.0.0.1 only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
runs=${1:-3}
dir=${DIR:-/tmp/synapse-launcher-catchup}
events=${EVENTS:-1000000}
bench=${BENCH_JAR:-$root/benchmarks/target/benchmarks.jar}
JAVA="${JAVA:-java}"
mkdir -p "$dir"
pin() { echo "sha256:$(openssl x509 -in "$1" -outform DER | sha256sum | cut -d' ' -f1)"; }

rm -f "$dir/serve.port"
# the serving JVM stops when its standard input (this pipe) ends
exec 3> >(exec "$JAVA" ${SERVER_JVM:--Xmx2g} -cp "$bench" dev.synapsehub.bench.FederationBench serve --dir "$dir" \
  --events "$events" --serve-seconds 900 >"$dir/serve.log" 2>&1)
for _ in $(seq 1 3000); do [ -s "$dir/serve.port" ] && break; sleep 0.2; done
[ -s "$dir/serve.port" ] || { echo "the serving JVM did not start; see $dir/serve.log" >&2; exit 1; }
port_end=$(cat "$dir/serve.port") # "PORT END", no newline
port=${port_end%% *}; end=${port_end##* }
echo "serving JVM: $end events on wss://127.0.0.1:$port/ ($dir/serve.log)"

pid=""
# a follower still running when this script ends (an error, a signal) is stopped with it
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true' EXIT
follow() { # $1: label
  local a="$dir/follower" t0 now cursor fport="" up=""
  rm -rf "$a"; mkdir -p "$a"; : >"$a/hub.log"
  t0=$(date +%s%N)
  SYNAPSE_HUB_JAVA_OPTS="${FOLLOWER_OPTS:-}" "$root/bin/synapse-hub" --host 127.0.0.1 --port 0 --metrics \
    --db "$a/hub.db" --hub-id hub-a --namespace-owner proj=hub-b \
    --multihub-watch "hub-b=wss://127.0.0.1:$port" --multihub-watch-pin "hub-b=$(pin "$dir/b-server.pem")" \
    --multihub-client-certfile "$dir/a-client.pem" --multihub-client-keyfile "$dir/a-client.key" \
    --multihub-watch-interval 1 >"$a/hub.log" 2>&1 &
  pid=$!
  while :; do
    now=$(date +%s%N)
    if [ $(( (now - t0) / 1000000000 )) -ge 120 ]; then
      echo "$1: not caught up within 120 s; see $a/hub.log"; break
    fi
    [ -n "$fport" ] || fport=$(sed -n 's|.*listening on wss\{0,1\}://127.0.0.1:\([0-9]*\)/.*|\1|p' "$a/hub.log" | head -1 || true)
    if [ -n "$fport" ]; then
      cursor=$(curl -s --max-time 1 "http://127.0.0.1:$fport/metrics" \
        | sed -n 's/^synapse_multihub_peer_cursor{peer="hub-b"} \([0-9]*\).*/\1/p' || true)
      [ -n "$up" ] || [ -z "$cursor" ] || up=$now # the first /metrics answer: the hub is up
      if [ -n "$cursor" ] && [ "$cursor" -ge "$end" ]; then
        echo "$1: caught up $end events $(( (now - t0) / 1000000 )) ms after exec => $(( end * 1000000000 / (now - t0) )) events/s;" \
          "$(( (now - up) / 1000000 )) ms after /metrics first answered ($(( (up - t0) / 1000000 )) ms after exec)" \
          "=> $(( end * 1000000000 / (now > up ? now - up : 1) )) events/s;" \
          "CPU $(awk '{printf "%.2f s (user %.2f, system %.2f)", ($14+$15)/100, $14/100, $15/100}' "/proc/$pid/stat");" \
          "load $(cut -d' ' -f1 /proc/loadavg)"
        for t in /proc/"$pid"/task/*; do
          s=$(cat "$t/stat" 2>/dev/null) || continue
          n=${s#*(}; n=${n%%)*}; r=${s##*) }
          # shellcheck disable=SC2086
          set -- $r
          echo "$(echo "$n" | sed 's/[0-9][0-9]*/N/g') $(( ${12} + ${13} ))"
        done | awk '{k = $1 == "CN" ? "C1+C2 compilers" : $1; c[k]+=$NF} END {for (k in c) if (c[k] >= 10) printf "%8.2f s  %s\n", c[k]/100, k}' | sort -nr
        break
      fi
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}
follow "warm-up (the serving JVM's JIT; a first start also trains the launcher's archive)"
for r in $(seq 1 "$runs"); do follow "run $r"; done
exec 3>&-
