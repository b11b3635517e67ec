#!/usr/bin/env bash
# Does one SIGTERM stop the hub whenever it comes? Starts the hub through the launcher once per
# MOMENT and sends one TERM to the PID it got: MOMENT is seconds after the launch (e.g. 0.02: the
# launcher is still bash; 1.5: mid-restore on a 100k-claim journal) or "health" (right after the
# first 200 from /health). Waits at most 60 s for the exit; if the process is still there it
# prints a thread dump, sends a second TERM, and after 10 s a KILL. One line per start: what the
# PID was when signalled, how long the exit took, the exit code, any class-data training left.
#
# usage: benchmarks/restart/term-at.sh LAUNCHER DB CDSDIR MOMENT...
#        (a fresh CDSDIR makes the first start train the class-data archive; DB: a copy, it is used)
set -uo pipefail
launcher=$1 db=$2 cds=$3
shift 3
for when in "$@"; do
    port=$((20000 + RANDOM % 10000)) # below the ephemeral range (see restart-to-health.sh)
    log=$(mktemp)
    t0=$(date +%s%N)
    SYNAPSE_HUB_CDS_DIR=$cds SYNAPSE_HUB_JAVA_OPTS=${JAVA_OPTS:--Xmx2g} "$launcher" --db "$db" --port "$port" --metrics >"$log" 2>&1 &
    pid=$!
    healthy=-
    if [ "$when" = health ]; then
        until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
            kill -0 "$pid" 2>/dev/null || break
            [ $(( ($(date +%s%N) - t0) / 1000000000 )) -gt 120 ] && break
            sleep 0.005
        done
        healthy=$(( ($(date +%s%N) - t0) / 1000000 ))
    else
        sleep "$when"
    fi
    comm=$(cat /proc/"$pid"/comm 2>/dev/null || echo gone)
    signalled=$(date +%s%N)
    kill -TERM "$pid" 2>/dev/null
    result=stopped
    for _ in $(seq 1 600); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        result="STILL UP after 60 s"
        jcmd "$pid" Thread.print 2>&1 || true
        kill -TERM "$pid"
        sleep 10
        kill -0 "$pid" 2>/dev/null && { result="$result, KILLed"; kill -KILL "$pid"; }
    fi
    wait "$pid"
    code=$?
    left=$(pgrep -f dev.synapsehub.cli.ClassDataTraining | tr '\n' ' ')
    echo "at $when: pid was $comm, /health at ${healthy} ms, $result $(( ($(date +%s%N) - signalled) / 1000000 )) ms after TERM, exit $code, training left: [${left}], load $(cut -d' ' -f1 /proc/loadavg)"
    rm -f "$log"
    # an orphaned training would skew the next start: let it end (bounded)
    for _ in $(seq 1 300); do
        pgrep -f dev.synapsehub.cli.ClassDataTraining >/dev/null || break
        sleep 0.2
    done
done
