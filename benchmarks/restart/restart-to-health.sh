#!/usr/bin/env bash
# Times a hub restart: from launching the JVM to the first 200 from GET /health, RUNS times, on
# one journal file. Each run stops the hub with SIGTERM (a clean stop: it snapshots if rows were
# added, none are here). Prints one line per run and the hub's own start-up line
# ("state from snapshot #... plus N events replayed in ... s"), the CPU time the hub process
# had used when /health answered (less sensitive than wall time to other work on the machine), and
# how long after the SIGTERM the hub was gone, with its exit code (143: stopped by its hook).
#
# Ends with one line over all runs: median, p90 (nearest rank), fastest, slowest, and how many took over 1 s.
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
walls=() # each run's ms to /health, for the summary line at the end
# The probe forks nothing while the hub starts: with curl, date and sleep started every 5 ms the
# probe itself took a good part of one of the two cores from the start it was timing. A connection
# attempt through bash's /dev/tcp that is refused costs microseconds; the pause is a read with a
# timeout on a FIFO nobody writes; the clock is $EPOCHREALTIME. PROBE=curl restores the old loop.
idle=$(mktemp -u)
mkfifo "$idle"
exec {idle_fd}<>"$idle"
rm -f "$idle"
now_ns() { # the wall clock in ns into NOW_NS, without a process (bash 5; $(...) would fork)
    local t=${EPOCHREALTIME/[.,]/}
    NOW_NS=$(( 10#$t * 1000 ))
}
pause() {
    read -r -t 0.002 -u "$idle_fd" _ || true
}
health_ok() { # true on the first 200 from GET /health
    if [ "${PROBE:-tcp}" = curl ]; then
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1
        return
    fi
    local status=
    { exec {tcp}<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1 # braces: the 2> is not kept
    printf 'GET /health HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$port" >&"$tcp"
    read -r -t 10 -u "$tcp" status || true
    exec {tcp}>&-
    [[ $status == "HTTP/1."?" 200"* ]]
}
# Ports below the kernel's ephemeral range: a port from it can be taken by any process on the machine
# (other tests bind port 0), and then our hub cannot bind or, worse, another server's 200 reads as ours.
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
ports=$(( ephemeral_low > 21000 ? ephemeral_low - 20000 : 1000 ))
for i in $(seq 1 "$runs"); do
    port=$((20000 + RANDOM % ports))
    now_ns
    start=$NOW_NS
    if [ -n "${LAUNCHER:-}" ]; then
        SYNAPSE_HUB_JAVA_OPTS="$opts" JAVA="$java" "$LAUNCHER" --db "$db" --port "$port" --metrics "$@" >"$log" 2>&1 &
    else
        # shellcheck disable=SC2086
        $java $opts -jar "$jar" --db "$db" --port "$port" --metrics "$@" >"$log" 2>&1 &
    fi
    pid=$!
    deadline=$((start + 900000000000)) # at most 900 s per start
    until health_ok; do
        now_ns
        if ! kill -0 "$pid" 2>/dev/null || [ "$NOW_NS" -gt "$deadline" ]; then
            echo "run $i: the hub exited or did not answer in time" >&2
            cat "$log" >&2
            kill -KILL "$pid" 2>/dev/null || true
            exit 1
        fi
        pause
    done
    now_ns
    end=$NOW_NS
    # The 200 is ours only if our hub says it listens there: else another process holds the port,
    # and the TERM below would reach our launcher mid-start while that server goes on answering.
    for _ in $(seq 1 500); do
        grep -Eq "listening on [a-z]+://127.0.0.1:$port/" "$log" && break
        sleep 0.01
    done
    if ! grep -Eq "listening on [a-z]+://127.0.0.1:$port/" "$log"; then
        echo "run $i: port $port answered /health but our hub (pid $pid) does not listen there; stopping" >&2
        cat "$log" >&2
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" || true
        exit 1
    fi
    # CPU the hub process used until then (user + system, all threads: JIT and GC included)
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    cpu_ms=$(( ticks * 1000 / $(getconf CLK_TCK) ))
    walls+=($(( (end - start) / 1000000 )))
    echo "run $i: ${walls[-1]} ms to /health, ${cpu_ms} ms of CPU; load $(cut -d' ' -f1 /proc/loadavg)"
    if [ "${THREADS:-0}" -gt 0 ]; then
        # CPU per live thread at /health (threads that already ended count in the total only)
        for t in /proc/"$pid"/task/*; do
            awk -v hz="$(getconf CLK_TCK)" '{ name = $0; sub(/^[^(]*\(/, "", name); sub(/\).*$/, "", name);
                n = split($0, f, ") "); split(f[n], g, " "); printf "%6d ms  %s\n", (g[12] + g[13]) * 1000 / hz, name }' "$t/stat"
        done | sort -rn | head -"${THREADS}" | sed 's/^/    /' || true   # head may close early: sort's SIGPIPE must not end the run with the hub up
    fi
    grep -o -e 'journal .*: state from .*' -e 'start-up phases.*' "$log" | sed 's/^/    /' || true
    # The hub stops on this TERM (its shutdown hook closes it: exit 143). Bounded: if it is still up
    # after 120 s, say so, show what it is doing, and kill it, rather than wait forever.
    stop=$(date +%s%N)
    kill -TERM "$pid"
    for _ in $(seq 1 1200); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "run $i: the hub (pid $pid, $(cat /proc/"$pid"/comm 2>/dev/null)) is still up 120 s after SIGTERM" >&2
        jcmd "$pid" Thread.print >&2 2>/dev/null || true
        kill -KILL "$pid" 2>/dev/null || true
    fi
    code=0
    wait "$pid" || code=$?
    echo "    stopped $(( ($(date +%s%N) - stop) / 1000000 )) ms after SIGTERM, exit $code"
done
rm -f "$log"
# The distribution (nearest rank: p90 of 30 runs is the 27th fastest), and how many starts took longer than 1 s
printf '%s\n' "${walls[@]}" | sort -n | awk -v limit=1000 '{ w[NR] = $1; over += ($1 > limit) }
    END { p = int((NR * 9 + 9) / 10); printf "%d starts: median %d ms, p90 %d ms, fastest %d, slowest %d; %d above %d ms\n",
        NR, (NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2), w[p], w[1], w[NR], over, limit }'
