#!/usr/bin/env bash
# Times a hub restart: from launching the JVM to the first 200 from GET /health, RUNS times, on
# one journal file. Each run stops the hub with SIGTERM (a clean stop: it snapshots if rows were
# added, none are here). Prints one line per run and the hub's own start-up line
# ("state from snapshot #... plus N events replayed in ... s"), and the CPU time the hub process
# had used when /health answered (less sensitive than wall time to other work on the machine).
#
# usage: benchmarks/restart/restart-to-health.sh DB RUNS [extra synapse-hub flags...]
# env:   JAVA (default java), JAVA_OPTS (default -Xmx4g), JAR (default hub-cli/target/synapse-hub.jar),
#        LAUNCHER (e.g. bin/synapse-hub: start through it instead, with SYNAPSE_HUB_JAVA_OPTS=$JAVA_OPTS;
#        it adds its class-data archive, so make that first with one run), THREADS=N (also print the N
#        threads that had used the most CPU when /health answered)
set -euo pipefail
db=$1
runs=$2
shift 2
java=${JAVA:-java}
jar=${JAR:-hub-cli/target/synapse-hub.jar}
opts=${JAVA_OPTS:--Xmx4g}
log=$(mktemp)
for i in $(seq 1 "$runs"); do
    port=$((20000 + RANDOM % 20000))
    start=$(date +%s%N)
    if [ -n "${LAUNCHER:-}" ]; then
        SYNAPSE_HUB_JAVA_OPTS="$opts" JAVA="$java" "$LAUNCHER" --db "$db" --port "$port" --metrics "$@" >"$log" 2>&1 &
    else
        # shellcheck disable=SC2086
        $java $opts -jar "$jar" --db "$db" --port "$port" --metrics "$@" >"$log" 2>&1 &
    fi
    pid=$!
    deadline=$((start + 900000000000)) # at most 900 s per start
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null || [ "$(date +%s%N)" -gt "$deadline" ]; then
            echo "run $i: the hub exited or did not answer in time" >&2
            cat "$log" >&2
            kill -KILL "$pid" 2>/dev/null || true
            exit 1
        fi
        sleep 0.005
    done
    end=$(date +%s%N)
    # CPU the hub process used until then (user + system, all threads: JIT and GC included)
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    cpu_ms=$(( ticks * 1000 / $(getconf CLK_TCK) ))
    echo "run $i: $(( (end - start) / 1000000 )) ms to /health, ${cpu_ms} ms of CPU; load $(cut -d' ' -f1 /proc/loadavg)"
    if [ -n "${THREADS:-}" ]; then
        # CPU per live thread at /health (threads that already ended count in the total only)
        for t in /proc/"$pid"/task/*; do
            awk -v hz="$(getconf CLK_TCK)" '{ name = $0; sub(/^[^(]*\(/, "", name); sub(/\).*$/, "", name);
                n = split($0, f, ") "); split(f[n], g, " "); printf "%6d ms  %s\n", (g[12] + g[13]) * 1000 / hz, name }' "$t/stat"
        done | sort -rn | head -"${THREADS}" | sed 's/^/    /'
    fi
    grep -o -e 'journal .*: state from .*' -e 'start-up phases.*' "$log" | sed 's/^/    /' || true
    kill -TERM "$pid"
    wait "$pid" || true
done
rm -f "$log"
