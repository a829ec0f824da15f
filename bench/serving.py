"""What the benchmark's small asyncio servers (delay_proxy.py, otlp_upstream.py) share: a HOST:PORT argument, and
serving until SIGTERM or SIGINT."""
import asyncio
import signal


def address(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


async def serve_until_signalled(server):
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()
