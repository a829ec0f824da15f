#!/usr/bin/env python3
"""Posts COUNT bodies of SIZE bytes at once to http://127.0.0.1:PORT/v1/ingest, each on its own connection, with a
Content-Length and no Expect (as OpenTelemetry SDKs send), and prints one JSON line: the answers by status (503s
with their Retry-After), connections that ended without an answer, and the seconds it took.

Usage: bench/large_bodies.py PORT COUNT SIZE
"""
import http.client
import json
import sys
import threading
import time


def main():
    port, count, size = (int(a) for a in sys.argv[1:4])
    body = b"x" * size
    answers, lock = {}, threading.Lock()
    start = threading.Barrier(count)

    def send():
        start.wait()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            connection.request("POST", "/v1/ingest", body, {"Content-Type": "application/octet-stream"})
            response = connection.getresponse()
            response.read()
            what = str(response.status)
            if response.getheader("Retry-After"):
                what += "+Retry-After:" + response.getheader("Retry-After")
        except OSError as e:
            what = "no answer (" + type(e).__name__ + ")"
        with lock:
            answers[what] = answers.get(what, 0) + 1

    threads = [threading.Thread(target=send) for _ in range(count)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"count": count, "size": size, "answers": answers, "seconds": round(time.monotonic() - t0, 2)}))


if __name__ == "__main__":
    main()
