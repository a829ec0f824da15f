import http.client, sys, os, threading
port = int(sys.argv[1]); n = int(sys.argv[2]); threads = 8
body = os.urandom(512).hex().encode()
def worker(k):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(k, n, threads):
        conn.request("POST", "/v1/ingest", body=body, headers={"Content-Type": "application/json", "Idempotency-Key": "drain-%d" % i})
        r = conn.getresponse(); r.read(); assert r.status == 202
ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
[t.start() for t in ts]; [t.join() for t in ts]
print("filled", n)
