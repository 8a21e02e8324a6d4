#!/usr/bin/env python3
"""Misbehaving S3 endpoints for tests/test_s3.sh.

    s3proxy.py hang
    s3proxy.py cut UPSTREAM_PORT UP DOWN

Listens on 127.0.0.1 on a port of the kernel's choosing and prints
"ready PORT" on stdout once listening, nothing else there.  One thread per
connection.  Modes:

    hang    accept, read whatever the client sends, never answer
    cut     relay every connection to 127.0.0.1:UPSTREAM_PORT, but close
            both sides once UP bytes of the request (client to server)
            or DOWN bytes of the answer (server to client) have passed;
            -1 for no limit

Python 3 standard library only.
"""

import socket
import sys
import threading

# Sockets of hung connections, kept so they are never closed.
hung = []


def hang(conn):
    hung.append(conn)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


def close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


def pump(src, dst, limit, both):
    """Copy src to dst until EOF or limit bytes, then close both sides."""
    passed = 0
    try:
        while limit < 0 or passed < limit:
            want = 65536 if limit < 0 else min(65536, limit - passed)
            data = src.recv(want)
            if not data:
                break
            dst.sendall(data)
            passed += len(data)
    except OSError:
        pass
    close(*both)


def cut(conn, upstream, up, down):
    try:
        srv = socket.create_connection(("127.0.0.1", upstream))
    except OSError:
        close(conn)
        return
    both = (conn, srv)
    threading.Thread(target=pump, args=(conn, srv, up, both),
                     daemon=True).start()
    threading.Thread(target=pump, args=(srv, conn, down, both),
                     daemon=True).start()


def main():
    mode = sys.argv[1]
    if mode == "hang":
        handler = hang
        args = ()
    elif mode == "cut":
        handler = cut
        args = (int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("s3proxy.py: unknown mode " + mode)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    print("ready", ls.getsockname()[1], flush=True)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=handler, args=(conn,) + args,
                         daemon=True).start()


if __name__ == "__main__":
    main()
