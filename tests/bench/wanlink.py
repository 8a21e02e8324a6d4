#!/usr/bin/env python3
"""A slow link between a client and a server on this machine.

    wanlink.py LISTEN_PORT TARGET_PORT RATE_MBIT RTT_MS

Listens on 127.0.0.1:LISTEN_PORT and relays each connection to
127.0.0.1:TARGET_PORT as a link of RATE_MBIT megabits a second each way
and RTT_MS milliseconds of round trip would: a new connection waits one
round trip (TCP's handshake) before its first byte moves; every chunk
leaves when the link in its direction is free, takes len * 8 / rate to
go out, and arrives half a round trip later.  The link's capacity is
shared by every connection in a direction.  TCP's slow start is not
modelled (it would slow the larger, uncompressed transfers more).
Prints "ready" on stdout once listening.

It stands in for `tc qdisc ... netem delay 25ms rate 100mbit` in a
network namespace where the kernel has no sch_netem (this one has not).
Python 3 standard library only.
"""

import asyncio
import sys


class Link:
    """One direction: when it is free again, in loop time."""

    def __init__(self, rate_bps, delay):
        self.rate = rate_bps
        self.delay = delay
        self.free_at = 0.0

    def schedule(self, now, nbytes):
        depart = max(now, self.free_at) + nbytes * 8.0 / self.rate
        self.free_at = depart
        return depart + self.delay


async def pump(reader, writer, link, started):
    """Move bytes from reader to writer through link, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            item = await queue.get()
            if item is None:
                break
            at, data = item
            wait = at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    task = asyncio.create_task(deliver())
    await started.wait()
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            queue.put_nowait((link.schedule(loop.time(), len(data)), data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait(None)
    try:
        await task
    except (ConnectionError, OSError):
        pass


async def handle(creader, cwriter, target, up, down, rtt):
    try:
        sreader, swriter = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        cwriter.close()
        return
    started = asyncio.Event()
    a = asyncio.create_task(pump(creader, swriter, up, started))
    b = asyncio.create_task(pump(sreader, cwriter, down, started))
    await asyncio.sleep(rtt)  # the handshake
    started.set()
    await asyncio.gather(a, b, return_exceptions=True)
    for w in (cwriter, swriter):
        try:
            w.close()
        except OSError:
            pass


async def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    port, target = int(sys.argv[1]), int(sys.argv[2])
    rate = float(sys.argv[3]) * 1e6
    rtt = float(sys.argv[4]) / 1000.0
    up, down = Link(rate, rtt / 2), Link(rate, rtt / 2)
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, target, up, down, rtt), "127.0.0.1", port)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()) or 0)
