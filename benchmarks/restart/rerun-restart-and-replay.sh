#!/usr/bin/env bash
# Reruns the headline figures of docs/benchmarks.md, "Restart phase by phase, SQLite's native
# library, and replay on three threads": restart of a 10,000,000-row / 100,000-claim journal to
# /health (through the launcher, with and without the unpacked native library), a full replay of
# that journal through `journal verify`, and the 1,000,000-event replay bench with the one-thread
# and the three-thread replay. Prints the load average with each part. Run from the repository
# root after building:
#
#   ./mvnw -B -o -q -pl benchmarks,hub-cli -am package -Dmaven.test.skip=true
#   benchmarks/restart/rerun-restart-and-replay.sh [DIR]
#
# DIR (default /tmp/restart-rs) keeps the generated journal between reruns (3.2 GB; generating
# it and its first start, a full replay, take a few minutes once). ROWS and CLAIMS make a smaller
# journal for a quick try (e.g. ROWS=200000 CLAIMS=2000), RUNS the restarts per setting (3).
set -euo pipefail
dir=${1:-/tmp/restart-rs}
rows=${ROWS:-10000000}
claims=${CLAIMS:-100000}
runs=${RUNS:-3}
db="$dir/journal-$rows-$claims.db"
bench=benchmarks/target/benchmarks.jar
mkdir -p "$dir"
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [ ! -f "$db" ]; then
    echo "## generating $db ($rows rows, $claims live claims); load $(load)"
    java -cp "$bench" dev.synapsehub.bench.RestartJournalGenerator --db "$db" --rows "$rows" --claims "$claims"
    echo "## first start: a full replay, then the shutdown snapshot"
    benchmarks/restart/restart-to-health.sh "$db" 1
fi

echo "## class-data archive for -Xmx4g (once per build)"
SYNAPSE_HUB_JAVA_OPTS=-Xmx4g bin/synapse-hub --version >/dev/null

echo "## restart to /health through the launcher, native-library cache off then on, $runs rounds; load $(load)"
for i in $(seq 1 "$runs"); do
    for cache in off on; do
        echo "# round $i, SYNAPSE_HUB_NATIVE_CACHE=$cache"
        SYNAPSE_HUB_NATIVE_CACHE=$cache THREADS=8 LAUNCHER=bin/synapse-hub \
            benchmarks/restart/restart-to-health.sh "$db" 1
    done
done

echo "## full replay of every row through journal verify; load $(load)"
/usr/bin/env time -f "wall %e s, user %U s, sys %S s" \
    java -Xmx4g -jar hub-cli/target/synapse-hub.jar journal verify --db "$db" 2>&1 \
    | grep -E "replay done: ReplayStats\[rows=[1-9]|^ok|problem|wall" || true

echo "## replay bench, 1,000,000 events, one thread and three; load $(load)"
java -Xmx2g -cp "$bench" dev.synapsehub.bench.DurableJournalBench replay \
    --dir "$dir" --replay 1000000 --runs 2 --pipeline both 2>&1 | grep -E "^(#|replay)"
echo "## done; load $(load)"
