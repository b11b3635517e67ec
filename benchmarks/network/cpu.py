#!/usr/bin/env python3
"""CPU use of the hub and the load tool over a window, per thread group (user/sys, context switches).

Usage: benchmarks/network/cpu.py SECONDS   (while a hub started with `-jar ... synapse-hub.jar --port`
and `synapse-hub.jar bench` run; start it inside the measured phase). Reads /proc only.
"""
import os
import re
import sys
import time

PATTERNS = {'hub': r'\S*java .*synapse-hub\.jar --port', 'bench': r'\S*java .*synapse-hub\.jar bench'}


def find(pattern):
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                cmd = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\0', b' ').decode()
            except OSError:
                continue
            if re.match(pattern, cmd):
                return pid
    return None


def sample(pid):
    threads = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            comm = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
            fields = open(f'/proc/{pid}/task/{tid}/stat').read().rsplit(')', 1)[1].split()
            status = open(f'/proc/{pid}/task/{tid}/status').read()
        except OSError:
            continue
        switches = sum(int(line.split()[1]) for line in status.splitlines() if 'ctxt_switches' in line)
        threads[tid] = (re.sub(r'-\d+$', '', comm), int(fields[11]), int(fields[12]), switches)
    return threads


def main():
    seconds = float(sys.argv[1])
    hz = os.sysconf('SC_CLK_TCK')
    pids = {name: find(p) for name, p in PATTERNS.items()}
    before = {name: sample(pid) for name, pid in pids.items() if pid}
    time.sleep(seconds)
    for name, pid in pids.items():
        if name not in before:
            continue
        groups, total_user, total_sys = {}, 0.0, 0.0
        for tid, (comm, user, sys_, switches) in sample(pid).items():
            if tid not in before[name]:
                continue
            _, user0, sys0, switches0 = before[name][tid]
            g = groups.setdefault(comm, [0.0, 0.0, 0.0])
            g[0] += (user - user0) / hz / seconds
            g[1] += (sys_ - sys0) / hz / seconds
            g[2] += (switches - switches0) / seconds
        for comm, (user, sys_, switches) in sorted(groups.items(), key=lambda i: -(i[1][0] + i[1][1])):
            total_user += user
            total_sys += sys_
            if user + sys_ >= 0.02:
                print(f'{name:6} {comm:20} user {user:5.2f} sys {sys_:5.2f} cores  {switches:7.0f} switches/s')
        print(f'{name:6} {"TOTAL":20} user {total_user:5.2f} sys {total_sys:5.2f} cores')


if __name__ == '__main__':
    main()
