#!/usr/bin/env python3
"""slowclient.py MODE PORT [ARGS]: misbehaving HTTP clients for
tests/test_limits.sh and tests/bench/bench_attack.sh, on 127.0.0.1:PORT.

  many SRC N KEEP   open N connections from address SRC, wait until the
                    server has closed all but KEEP (at most 60 s), print
                    how many it kept open
  trickle SRC SECS  send a request head one byte every 0.2 s from SRC for
                    at most SECS seconds; print "cut" when the server
                    closed the connection first, else "whole"
  body SRC SECS BURST GAP
                    send a POST head announcing a 10 MB body, BURST bytes
                    of it at once, then a byte every GAP seconds, for at
                    most SECS seconds; print "cut" when the server closed
                    the connection first, else "whole"
  hold SRCS N SECS  open N connections spread over the addresses SRCS
                    (comma-separated), idle, or trickling one byte a second
                    when TRICKLE=1 is in the environment; hold them SECS
                    seconds (or until stdin closes); print "open K"
  siege SRCS HOLD FLOOD SECS
                    from each address of SRCS (comma-separated): HOLD
                    connections that send a POST head and then trickle its
                    body a byte a second, and FLOOD idle connections; any
                    the server closes is opened again at once.  Print
                    "ready" once every holder has sent its head, then run
                    SECS seconds (or until stdin closes) and print
                    "bodies cut K flood cut F"
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
    elif mode == "body":
        src, secs = sys.argv[3], float(sys.argv[4])
        burst, gap = int(sys.argv[5]), float(sys.argv[6])
        s = conn(src, port)
        s.sendall(SIEGE_HEAD.replace(b"1000000", b"10000000") +
                  b" " * burst)
        t0 = last = time.time()
        while time.time() - t0 < secs:
            if closed(s):
                print("cut")
                return
            if time.time() - last >= gap:
                last = time.time()
                try:
                    s.send(b" ")
                except OSError:
                    print("cut")
                    return
            time.sleep(0.05)
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
    elif mode == "siege":
        siege(port, sys.argv[3].split(","), int(sys.argv[4]),
              int(sys.argv[5]), float(sys.argv[6]))
    else:
        sys.exit("slowclient: unknown mode " + mode)

SIEGE_HEAD = (b"POST /symbolize HTTP/1.1\r\nHost: x\r\n"
              b"Content-Type: application/json\r\n"
              b"Content-Length: 1000000\r\n\r\n")

def siege(port, srcs, hold, flood, secs):
    """Holders trickle bodies; flooders reconnect as fast as they are cut.
    One thread, non-blocking sockets, so that no reconnect waits for
    another."""
    ep = select.epoll()
    socks = {}          # fd -> [socket, source, holder?, head sent?]
    cut = {True: 0, False: 0}

    def open_one(src, holder):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.bind((src, 0))
            s.connect_ex(("127.0.0.1", port))
        except OSError:
            s.close()
            return
        socks[s.fileno()] = [s, src, holder, False]
        ep.register(s.fileno(), select.EPOLLIN | select.EPOLLOUT |
                    select.EPOLLRDHUP)

    def drop(fd):
        s, src, holder, _ = socks.pop(fd)
        ep.unregister(fd)
        s.close()
        cut[holder] += 1
        open_one(src, holder)

    for src in srcs:
        for _ in range(hold):
            open_one(src, True)
        for _ in range(flood):
            open_one(src, False)
    ready = False
    t0 = tick = time.monotonic()
    while time.monotonic() - t0 < secs:
        for fd, ev in ep.poll(0.05):
            e = socks.get(fd)
            if e is None:
                continue
            if ev & (select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLHUP |
                     select.EPOLLERR):
                try:
                    d = e[0].recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    d = b""
                if not d:
                    drop(fd)
                continue
            if ev & select.EPOLLOUT:
                # Connected: a holder sends its head once; no more
                # writability events for anyone.
                if e[2] and not e[3]:
                    try:
                        e[0].send(SIEGE_HEAD)
                        e[3] = True
                    except OSError:
                        drop(fd)
                        continue
                ep.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)
        if not ready and all(e[3] for e in socks.values() if e[2]):
            ready = True
            print("ready", flush=True)
        r, _, _ = select.select([sys.stdin], [], [], 0)
        if r and not sys.stdin.readline():
            break
        now = time.monotonic()
        if now - tick >= 1.0:
            tick = now
            for fd in list(socks):
                e = socks.get(fd)
                if e is None or not e[2] or not e[3]:
                    continue
                try:
                    e[0].send(b" ")
                except BlockingIOError:
                    pass
                except OSError:
                    drop(fd)
    print("bodies cut %d flood cut %d" % (cut[True], cut[False]), flush=True)

main()
