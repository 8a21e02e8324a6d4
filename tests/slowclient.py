#!/usr/bin/env python3
"""slowclient.py MODE PORT [ARGS]: misbehaving HTTP clients for
tests/test_limits.sh and tests/bench/bench_attack.sh, on 127.0.0.1:PORT.

  many SRC N KEEP   open N connections from address SRC, wait until the
                    server has closed all but KEEP (at most 60 s), print
                    how many it kept open
  trickle SRC SECS  send a request head one byte every 0.2 s from SRC for
                    at most SECS seconds; print "cut" when the server
                    closed the connection first, else "whole"
  hold SRCS N SECS  open N connections spread over the addresses SRCS
                    (comma-separated), idle, or trickling one byte a second
                    when TRICKLE=1 is in the environment; hold them SECS
                    seconds (or until stdin closes); print "open K"
"""
import os, resource, select, socket, sys, time

def conn(src, port):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s

def closed(s):
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except OSError:
        return True

def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if mode == "many":
        src, n, keep = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        socks = []
        for _ in range(n):
            try:
                socks.append(conn(src, port))
            except OSError:
                pass
        # Wait for the server's closes, not for the clock.
        t0 = time.time()
        while True:
            socks = [s for s in socks if not closed(s)]
            if len(socks) <= keep or time.time() - t0 > 60:
                break
            time.sleep(0.05)
        print(len(socks))
    elif mode == "trickle":
        src, secs = sys.argv[3], float(sys.argv[4])
        s = conn(src, port)
        head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "
        t0 = time.time()
        i = 0
        while time.time() - t0 < secs:
            try:
                s.send(head[i:i + 1] if i < len(head) else b"a")
            except OSError:
                print("cut")
                return
            i += 1
            time.sleep(0.2)
            if closed(s):
                print("cut")
                return
        print("whole")
    elif mode == "hold":
        srcs, n, secs = sys.argv[3].split(","), int(sys.argv[4]), float(sys.argv[5])
        trickle = os.environ.get("TRICKLE") == "1"
        socks = []
        for i in range(n):
            try:
                socks.append(conn(srcs[i % len(srcs)], port))
            except OSError:
                pass
        if trickle:
            for s in socks:
                try:
                    s.send(b"GET /metrics HTTP/1.1\r\n")
                except OSError:
                    pass
        print("open %d" % len(socks), flush=True)
        t0 = time.time()
        while time.time() - t0 < secs:
            r, _, _ = select.select([sys.stdin], [], [], 1)
            if r and not sys.stdin.readline():
                break
            if trickle:
                for s in socks:
                    try:
                        s.send(b"a")
                    except OSError:
                        pass
    else:
        sys.exit("slowclient: unknown mode " + mode)

main()
