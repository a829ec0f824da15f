import http.client, time, sys, os, statistics
port = int(sys.argv[1]); n = int(sys.argv[2]); gap = float(sys.argv[3]); log = sys.argv[4]
body = os.urandom(512).hex().encode()  # 1 KiB
conn = http.client.HTTPConnection("127.0.0.1", port)
sent = {}
for i in range(n):
    key = "lat-%d-%d" % (os.getpid(), i)
    t = time.time()
    conn.request("POST", "/v1/ingest", body=body, headers={"Content-Type": "application/json", "Idempotency-Key": key})
    r = conn.getresponse(); r.read()
    assert r.status == 202, r.status
    sent[key] = t
    time.sleep(gap)
time.sleep(2)
lat = []
for line in open(log):
    parts = line.split()
    if len(parts) >= 2 and parts[1] in sent:
        lat.append((float(parts[0]) - sent[parts[1]]) * 1000)
lat.sort()
q = lambda p: lat[min(len(lat)-1, int(p * len(lat)))]
print("delivered %d/%d  accept->upstream ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" % (len(lat), n, q(0.5), q(0.9), q(0.99), lat[-1]))
