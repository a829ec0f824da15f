#!/usr/bin/env python3
"""A TCP proxy that delays every chunk by a fixed time in each direction: a distant upstream on loopback.

This kernel has no netem, so the round trip of a link between regions is simulated here: each chunk read from one
side is written to the other side `--one-way-ms` after it was read, in order, without limiting throughput (chunks
in flight overlap, as bytes in flight on a long link do). RTT = 2 x one-way delay.

    delay_proxy.py --listen 127.0.0.1:14317 --to 127.0.0.1:4318 --one-way-ms 40 [--count-file bytes.txt]

With --count-file, the bytes passed towards the upstream so far are written to that file twice a second (what
crosses the link: bench/wan.py compares it with the bodies the relay accepted).
"""
import argparse
import asyncio
import os

from serving import address, serve_until_signalled


TOWARDS_UPSTREAM = [0]


async def pipe(reader, writer, delay, counted=False):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, chunk = await queue.get()
            if chunk is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(chunk)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            if counted:
                TOWARDS_UPSTREAM[0] += len(chunk)
            queue.put_nowait((loop.time() + delay, chunk))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((loop.time() + delay, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer, target, delay):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(*target)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, upstream_writer, delay, counted=True),
                         pipe(upstream_reader, client_writer, delay))


async def write_counts(path):
    while True:
        with open(path + ".tmp", "w") as f:
            f.write(str(TOWARDS_UPSTREAM[0]))
        os.replace(path + ".tmp", path)
        await asyncio.sleep(0.5)


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", type=address, required=True)
    parser.add_argument("--to", type=address, required=True)
    parser.add_argument("--one-way-ms", type=float, required=True)
    parser.add_argument("--count-file")
    args = parser.parse_args()
    if args.count_file:
        asyncio.get_running_loop().create_task(write_counts(args.count_file))
    delay = args.one_way_ms / 1000.0
    await serve_until_signalled(await asyncio.start_server(lambda r, w: handle(r, w, args.to, delay), *args.listen,
                                                           backlog=4096))


if __name__ == "__main__":
    asyncio.run(main())
