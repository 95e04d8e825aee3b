#!/usr/bin/env python3
"""Who kept the simulators' engines and the clients' load threads waiting for a CPU during the lessons' points
(bench/README.md §22).

Record the scheduler while the lessons run, then read it against the points' run folders:

    perf sched record -a -m 16M -o sched.data &   # system-wide; stop it with kill -INT once the lessons end
    npm run lessons -- --force
    perf sched timehist -i sched.data --state -w > sched.txt
    python3 bench/sched-blame.py sched.txt data [0.3]

Each time a simulator's engine thread (or a run's load thread) got its CPU after waiting longer than the threshold
(ms, default 0.3) to run, inside a point (a manifest's startedAt..endedAt), the threads that ran on that CPU meanwhile
are charged for the overlap, by kind. The threads are found, not told: engines are the main threads of `node`
processes that made over 95 % of their switches on one CPU and ran for over 300 ms (a simulator's engine keeps to the
last CPU, src/proc/cpu-split.ts); load threads are the other threads of other `node` processes that did the same and
ran for over 100 ms (a run's worker threads keep to the other CPUs).
perf's timestamps are CLOCK_MONOTONIC, so run this on the machine that recorded, before it reboots.
"""
import bisect
import collections
import datetime
import glob
import json
import re
import sys
import time

LINE = re.compile(r'(.*)\[(\d+)(?:/(\d+))?\]')


def windows(data_dir):
    """The points' [start, end] in CLOCK_MONOTONIC seconds, sorted."""
    off = time.time() - time.clock_gettime(time.CLOCK_MONOTONIC)
    out = []
    for f in glob.glob(f'{data_dir}/**/manifest.json', recursive=True):
        if '/sample/' in f or '/executed/' in f:
            continue
        m = json.load(open(f))
        if 'startedAt' in m and 'endedAt' in m:
            ts = [datetime.datetime.fromisoformat(m[k].replace('Z', '+00:00')).timestamp() - off for k in ('startedAt', 'endedAt')]
            out.append(ts)
    return sorted(out)


def switches(path):
    """(time s, cpu, name, tid, pid, scheduling delay ms, run time ms) per line of `perf sched timehist`."""
    for line in open(path):
        p = line.split()
        if len(p) < 7 or not p[1].startswith('['):
            continue
        m = LINE.match(p[2])
        try:
            t, sch, run = float(p[0]), float(p[4]), float(p[5])
        except ValueError:
            continue
        if m:
            yield t, p[1], m.group(1), m.group(2), m.group(3) or m.group(2), sch, run


def engines(rows):
    """Thread ids of the simulators' engine threads (see the module's text)."""
    run, on = collections.Counter(), collections.defaultdict(collections.Counter)
    for _, cpu, name, tid, pid, _, r in rows:
        if name == 'node' and tid == pid:
            run[tid] += r
            on[tid][cpu] += 1
    return {t for t in run if run[t] > 300 and max(on[t].values()) > 0.95 * sum(on[t].values())}


def load_threads(rows, sims):
    """Thread ids of the runs' load threads (see the module's text)."""
    run, on = collections.Counter(), collections.defaultdict(collections.Counter)
    for _, cpu, name, tid, pid, _, r in rows:
        if name == 'node' and tid != pid and pid not in sims:
            run[tid] += r
            on[tid][cpu] += 1
    return {t for t in run if run[t] > 100 and max(on[t].values()) > 0.95 * sum(on[t].values())}


def kind(name, tid, pid, sims, own):
    if name.startswith('kdamond'):
        return 'kdamond (the kernel\'s DAMON memory monitor)'
    if name == 'perf':
        return 'perf (the recording itself)'
    if pid == own:
        return 'its own process\'s main thread' if tid == pid else 'its own process\'s other threads'
    if pid in sims:
        return 'the simulators\' own other threads'
    if name == 'node':
        return 'other Node processes (the notebook kernels and their threads)'
    if name in ('python3', 'jupyter-kernels') or name.startswith('ZMQ'):
        return 'Jupyter (Python)'
    return 'other (kernel workers, shells, taskset, chrt)'


def blame(rows, who, inside, threshold, sims, label):
    """Print what ran on the CPU while the threads `who` waited over `threshold` ms inside points."""
    by_cpu, waits = collections.defaultdict(list), []
    for t, cpu, name, tid, pid, sch, run in rows:
        start = t - run / 1000
        by_cpu[cpu].append((start, t, name, tid, pid))
        if tid in who and sch > threshold and inside(t):
            waits.append((cpu, start, sch, tid, pid))
    charged, total = collections.Counter(), 0.0
    for cpu, start, sch, me, own in waits:
        a = start - sch / 1000
        for s, e, name, tid, pid in by_cpu[cpu]:
            if e > a and s < start and tid != me:
                charged[kind(name, tid, pid, sims, own if label == 'load threads' else None)] += (min(e, start) - max(s, a)) * 1000
        total += sch
    print(f'{len(who)} {label}: {len(waits)} waits over {threshold} ms inside points, {total:.1f} ms in all, charged to:')
    for k, v in charged.most_common():
        print(f'{v:9.1f} ms  {k}')


def main():
    rows = list(switches(sys.argv[1]))
    w = windows(sys.argv[2])
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
    starts = [a for a, _ in w]

    def inside(t):
        i = bisect.bisect_right(starts, t) - 1
        return i >= 0 and w[i][0] <= t <= w[i][1]

    sims = engines(rows)
    print(f'{len(w)} points')
    blame(rows, sims, inside, threshold, sims, 'simulator engine threads')
    blame(rows, load_threads(rows, sims), inside, threshold, sims, 'load threads')


if __name__ == '__main__':
    main()
