#!/usr/bin/env python3
"""Time the token check: interleaved GETs over one keep-alive connection.

Usage: timing.py PORT PATH N TOLERANCE TOKEN-A TOKEN-B [TOKEN-C...]

Each round sends one request with each token (Bearer, or "-" for none),
in a shuffled order, and keeps its time.  Prints the median of each and
exits 1 when any median differs from the first by more than TOLERANCE
(a fraction, 0.10 for 10 %) of the smallest: a check that looked at the
token's bytes one by one would make a near-miss slower than a far one.
"""
import http.client
import random
import statistics
import sys
import time


def main():
    port, path, n, tol = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), \
        float(sys.argv[4])
    toks = sys.argv[5:]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    times = [[] for _ in toks]
    order = list(range(len(toks)))
    for i in range(n + 20):
        random.shuffle(order)
        for j in order:
            hdrs = {} if toks[j] == "-" else \
                {"Authorization": "Bearer " + toks[j]}
            t0 = time.perf_counter_ns()
            conn.request("GET", path, headers=hdrs)
            r = conn.getresponse()
            r.read()
            t1 = time.perf_counter_ns()
            if i >= 20:	# the first rounds warm up
                times[j].append(t1 - t0)
    med = [statistics.median(t) for t in times]
    lo = min(med)
    print(" ".join("%.1fus" % (m / 1000) for m in med))
    bad = [m for m in med if abs(m - med[0]) > tol * lo]
    sys.exit(1 if bad else 0)


main()
