#!/usr/bin/env python3
"""Misbehaving debuginfod upstreams for symhub's federation test.

    badupstream.py MODE PORT [ARG [LOG]]

Listens on 127.0.0.1:PORT only, prints "ready" on stdout once listening
and nothing else there.  One thread per connection; every answer closes
the connection.  Modes:

    hang            read the request, then never answer
    reset           read the request, then close with a TCP reset
    wrongfile FILE  200 with FILE's bytes for every /buildid/... request
                    (a valid ELF file, but of another build-id)
    trickle FILE    200 with Content-Length, then one byte every 0.2 s
    count LOG       404 to everything; append one line per request to LOG:
                    "METHOD PATH" then each header as "\\tName: value"
    delay URL       a slow path to a real server: wait 1 s, then pass the
                    request on to URL (http://HOST:PORT) and relay its answer
    short FILE      200 with the first half of FILE (Content-Length says
                    so), X-DEBUGINFOD-SIZE announcing all of it
    gzipcut FILE    200, Content-Encoding: gzip, the gzip stream of FILE cut
                    in half (Content-Length says so), X-DEBUGINFOD-SIZE
                    announcing all of FILE
    endless         200 without Content-Length, zeros until the client
                    goes away
    ima FILE        200 with FILE's bytes and X-DEBUGINFOD-IMASIGNATURE
                    "030204" + the SHA-256 of FILE in hex (elfutils sends
                    one from 0.190 on, for IMA-signed rpm members; Debian
                    12 has 0.188)
    meta FILE       200 with FILE's bytes as application/json for every
                    /metadata request, 404 to the rest
    gate DIR        append "METHOD PATH" to DIR/log for each request, then
                    hold it until the file DIR/open exists, then 404
    status CODE     CODE to everything, with an S3-style XML error body
                    (a server in trouble: 500, 503; an S3 endpoint that
                    refuses: 403)
    case FILE LOG   the canned reply of a case file (tests/cases/README)
                    to everything: its "reply", "reply-header" and
                    "reply-body" lines; each request logged to LOG as in
                    count mode
    zstd DIR LOG    for /buildid/ID/...: 200 with the bytes of DIR/ID as
                    they are, Content-Encoding: zstd and X-DEBUGINFOD-SIZE
                    the number in DIR/ID.size (a hub's zstd answer, or a
                    lie in one: a bomb, a corrupt or cut stream, plain
                    bytes said to be zstd); 404 when there is no DIR/ID;
                    each request logged to LOG as in count mode

    halves FILE DIR 200 with the first half of FILE at once
                    (Content-Length and X-DEBUGINFOD-SIZE say all of it),
                    "held PATH" appended to DIR/log, then nothing until
                    the file DIR/go exists; then what the word in the
                    file DIR/then (read as the request comes) says:
                      rest      the rest of FILE (the default)
                      zeros     as many zero bytes as the rest (the
                                right head, the wrong file)
                      reset     a TCP reset instead of the rest
                      stall     nothing, ever (DIR/go is not waited for)
                      overflow  no Content-Length (the end is the
                                connection's), the rest of FILE and 4 KiB
                                more
                      excess    the rest of FILE and 4 KiB more than its
                                Content-Length
    rate FILE BPS   200 with FILE at BPS bytes a second (benchmarks)

Python 3 standard library only.
"""

import gzip
import hashlib
import os
import socket
import struct
import sys
import threading
import time

MODES = ("hang", "reset", "wrongfile", "trickle", "count", "delay", "short",
         "gzipcut", "endless", "ima", "meta", "gate", "status", "case",
         "halves", "rate", "zstd")
HALVES = ("halves",)

# Sockets of hung connections, kept so they are never closed.
hung = []
log_lock = threading.Lock()


DELAY = 1.0


def read_request(conn):
    """The request head as (method, path, [(name, value)]), or None."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        return None
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return parts[0], parts[1], headers


def read_case(path):
    """The canned reply of a case file: (status, [header lines], body).
    Lines are "key: value"; '#' starts a comment line; keys the fake
    upstream does not know are the test driver's."""
    status, headers, body = 404, [], b""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition(":")
            value = value.strip()
            if key == "reply":
                status = int(value)
            elif key == "reply-header":
                headers.append(value)
            elif key == "reply-body":
                body += value.encode("utf-8") + b"\n"
    return status, headers, body


def log_request(path, method, target, headers):
    line = method + " " + target + "".join(
        "\t%s: %s" % (n, v) for n, v in headers) + "\n"
    with log_lock:
        with open(path, "a") as f:
            f.write(line)


def answer(conn, status, body=b"", extra=()):
    reason = {200: "OK", 404: "Not Found"}.get(status, "Error")
    head = ["HTTP/1.1 %d %s" % (status, reason),
            "Content-Length: %d" % len(body),
            "Connection: close"]
    head.extend(extra)
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


def serve(conn, mode, arg, payload):
    req = read_request(conn)
    if req is None:
        conn.close()
        return
    method, path, headers = req
    if mode == "hang":
        hung.append(conn)
        return
    if mode == "status":
        answer(conn, int(arg), b"<?xml version='1.0' encoding='UTF-8'?>"
               b"<Error><Code>ServiceUnavailable</Code><Message>badupstream"
               b"</Message></Error>", ("Content-Type: application/xml",))
        conn.close()
        return
    if mode == "reset":
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
        conn.close()
        return
    if mode == "count":
        log_request(arg, method, path, headers)
        answer(conn, 404, b"not found\n")
        conn.close()
        return
    if mode == "case":
        log_request(sys.argv[4], method, path, headers)
        status, extra, body = payload
        answer(conn, status, body, extra)
        conn.close()
        return
    if mode == "zstd":
        log_request(sys.argv[4], method, path, headers)
        name = os.path.join(arg, os.path.basename(path.split("/")[2])
                            if path.startswith("/buildid/") else "-")
        try:
            with open(name, "rb") as f:
                body = f.read()
            with open(name + ".size") as f:
                size = f.read().strip()
        except OSError:
            answer(conn, 404, b"not found\n")
            conn.close()
            return
        answer(conn, 200, body,
               ["Content-Type: application/octet-stream",
                "Content-Encoding: zstd", "X-DEBUGINFOD-SIZE: " + size])
        conn.close()
        return
    if mode == "delay":
        relay(conn, arg, method, path, headers)
        return
    if mode == "gate":
        with log_lock:
            with open(os.path.join(arg, "log"), "a") as f:
                f.write(method + " " + path + "\n")
        while not os.path.exists(os.path.join(arg, "open")):
            time.sleep(0.05)
        answer(conn, 404, b"not found\n")
        conn.close()
        return
    if mode == "meta":
        if path.startswith("/metadata?"):
            answer(conn, 200, payload,
                   ["Content-Type: application/json"])
        else:
            answer(conn, 404, b"not found\n")
        conn.close()
        return
    if not path.startswith("/buildid/"):
        answer(conn, 404, b"not found\n")
        conn.close()
        return
    xhdrs = ["Content-Type: application/octet-stream",
             "X-DEBUGINFOD-SIZE: %d" % len(payload),
             "X-DEBUGINFOD-FILE: bad-upstream"]
    if mode == "ima":
        sig = "030204" + hashlib.sha256(payload).hexdigest()
        answer(conn, 200, payload,
               xhdrs + ["X-DEBUGINFOD-IMASIGNATURE: " + sig])
        conn.close()
        return
    if mode in HALVES:
        halves(conn, path, payload, xhdrs)
        return
    if mode == "rate":
        head = ["HTTP/1.1 200 OK", "Content-Length: %d" % len(payload),
                "Connection: close"] + xhdrs
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        bps, t0, sent = float(sys.argv[4]), time.monotonic(), 0
        while sent < len(payload):
            n = min(16384, len(payload) - sent)
            conn.sendall(payload[sent:sent + n])
            sent += n
            ahead = t0 + sent / bps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        conn.close()
        return
    if mode == "wrongfile":
        answer(conn, 200, payload, xhdrs)
        conn.close()
        return
    if mode == "short":
        answer(conn, 200, payload[:len(payload) // 2], xhdrs)
        conn.close()
        return
    if mode == "gzipcut":
        z = gzip.compress(payload)
        answer(conn, 200, z[:len(z) // 2], xhdrs + ["Content-Encoding: gzip"])
        conn.close()
        return
    if mode == "endless":
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n"
                     b"Content-Type: application/octet-stream\r\n\r\n")
        zeros = b"\0" * 65536
        while True:
            conn.sendall(zeros)
    # trickle: the whole length announced, the bytes dribbled.
    head = ["HTTP/1.1 200 OK", "Content-Length: %d" % len(payload),
            "Connection: close"] + xhdrs
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    for i in range(len(payload)):
        conn.sendall(payload[i:i + 1])
        time.sleep(0.2)
    conn.close()


def halves(conn, path, payload, xhdrs):
    """The first half of payload, then, once DIR/go exists, the rest as
    DIR/then says (see the modes)."""
    d = sys.argv[4]
    half = len(payload) // 2
    try:
        with open(os.path.join(d, "then")) as f:
            mode = f.read().strip()
    except OSError:
        mode = "rest"
    head = ["HTTP/1.1 200 OK", "Connection: close"] + xhdrs
    if mode != "overflow":
        head.insert(1, "Content-Length: %d" % len(payload))
    conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") +
                 payload[:half])
    with log_lock:
        with open(os.path.join(d, "log"), "a") as f:
            f.write("held " + path + "\n")
    if mode == "stall":
        hung.append(conn)
        return
    while not os.path.exists(os.path.join(d, "go")):
        time.sleep(0.02)
    if mode == "reset":
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
        conn.close()
        return
    if mode == "zeros":
        conn.sendall(b"\0" * (len(payload) - half))
    elif mode in ("overflow", "excess"):
        conn.sendall(payload[half:] + b"\xff" * 4096)
    else:
        conn.sendall(payload[half:])
    conn.close()


def relay(conn, url, method, path, headers):
    """Pass one request on to url after DELAY seconds, answer with its
    answer, byte for byte."""
    time.sleep(DELAY)
    hostport = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    up = socket.create_connection((host, int(port)), timeout=30)
    head = [method + " " + path + " HTTP/1.1"]
    head.extend("%s: %s" % (n, v) for n, v in headers
                if n.lower() not in ("connection", "keep-alive"))
    head.append("Connection: close")
    up.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    while True:
        chunk = up.recv(65536)
        if not chunk:
            break
        conn.sendall(chunk)
    up.close()
    conn.close()


def worker(conn, mode, arg, payload):
    try:
        serve(conn, mode, arg, payload)
    except OSError:
        # The client gave up (symhubd cancels losers): not our business.
        try:
            conn.close()
        except OSError:
            pass


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in MODES:
        sys.stderr.write("usage: badupstream.py %s PORT [ARG]\n"
                         % "|".join(MODES))
        return 2
    mode, port = sys.argv[1], int(sys.argv[2])
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    if mode in ("wrongfile", "trickle", "count", "delay", "short",
                "gzipcut", "ima", "meta", "gate", "status",
                "rate") + HALVES and arg is None:
        sys.stderr.write("badupstream.py: %s needs an argument\n" % mode)
        return 2
    if mode in HALVES + ("rate",) and len(sys.argv) < 5:
        sys.stderr.write("badupstream.py: %s needs FILE and DIR (rate: "
                         "BPS)\n" % mode)
        return 2
    if mode == "zstd" and len(sys.argv) < 5:
        sys.stderr.write("badupstream.py: zstd needs DIR and LOG\n")
        return 2
    if mode == "case" and len(sys.argv) < 5:
        sys.stderr.write("badupstream.py: case needs FILE and LOG\n")
        return 2
    payload = b""
    if mode in ("wrongfile", "trickle", "short", "gzipcut", "ima", "meta",
                "rate") + HALVES:
        with open(arg, "rb") as f:
            payload = f.read()
    elif mode == "case":
        payload = read_case(arg)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("127.0.0.1", port))
    except OSError as e:
        sys.stderr.write("badupstream.py: port %d: %s\n" % (port, e))
        return 1
    srv.listen(256)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=worker, args=(conn, mode, arg, payload),
                         daemon=True).start()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
