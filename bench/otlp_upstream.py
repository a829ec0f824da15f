#!/usr/bin/env python3
"""An OTLP/HTTP receiver for benchmarks: it decodes every export request it takes and counts what is in it.

It answers as an OpenTelemetry Collector's OTLP receiver does where it matters to the relay: POST /v1/traces,
/v1/metrics or /v1/logs (protobuf or JSON, identity or gzip) gets 200 and an empty export response; a GET gets 405, so the
relay checks it by its deliveries alone. Each body is decoded to the spans, data points or log records it holds
(protobuf's wire format, read here without a library, or JSON), so a merged request counts as the many exports it carries.
GET /count (the one GET it serves) answers {"requests": N, "items": N, "bytes": N, "undecodable": N}.

    otlp_upstream.py --listen 127.0.0.1:4318
"""
import argparse
import asyncio
import gzip
import json
import zlib

from serving import address, serve_until_signalled

COUNTS = {"requests": 0, "items": 0, "bytes": 0, "undecodable": 0}

# export request -> resource_* (1) -> scope_* (2) -> the items (spans 2, metrics 2, log records 2); for metrics a
# metric holds data points, but a metric is the unit counted here.
ITEM_PATH = (1, 2, 2)


def varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def fields(data):
    """(field number, wire type, value or bytes) of each field of one message."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 2:
            length, i = varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def count_items(message, path=ITEM_PATH):
    if not path:
        return 1
    return sum(count_items(value, path[1:]) for number, wire, value in fields(message)
               if number == path[0] and wire == 2)


def count_json_items(body):
    """The items of an export in OTLP's JSON mapping: resource* → scope* → spans, metrics or logRecords."""
    request = json.loads(body)
    (resources,) = request.values()
    return sum(len(next(v for k, v in scope.items() if k in ("spans", "metrics", "logRecords")))
               for resource in resources for key, scopes in resource.items() if key.startswith("scope")
               for scope in scopes)


async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target = lines[0].split(" ")[:2]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if method == "GET" and target == "/count":
                answer, status, kind = json.dumps(COUNTS).encode(), "200 OK", "application/json"
            elif method != "POST":
                answer, status, kind = b"", "405 Method Not Allowed", "text/plain"
            else:
                COUNTS["requests"] += 1
                COUNTS["bytes"] += len(body)
                try:
                    decoded = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
                    json_body = headers.get("content-type", "").startswith("application/json")
                    COUNTS["items"] += count_json_items(decoded) if json_body else count_items(decoded)
                except (ValueError, KeyError, TypeError, IndexError, OSError, EOFError, zlib.error):
                    COUNTS["undecodable"] += 1
                answer, status, kind = b"", "200 OK", "application/x-protobuf"
            writer.write(("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                          % (status, kind, len(answer))).encode() + answer)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", type=address, required=True)
    args = parser.parse_args()
    await serve_until_signalled(await asyncio.start_server(handle, *args.listen, backlog=4096,
                                                           limit=64 * 1024 * 1024))


if __name__ == "__main__":
    asyncio.run(main())
