package dev.mcpd.it;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp2;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Senders that try to starve the packaged relay (a 256 MiB heap, as a small container runs it): stalled bodies on
 * HTTP/1.1 and HTTP/2 streams, streams that fill their flow-control windows and stop, bodies that announce many
 * megabytes and send nothing. The probes answer throughout, honest senders are served (or told to retry) at once and
 * served again as soon as the attackers leave, and nothing runs out of memory.
 */
class SenderAbuseIT {

    private static final byte[] HONEST = "{\"events\":[{\"honest\":true}]}".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private PackagedJar relay() {
        int port = PackagedJar.freePort();
        return PackagedJar.start(dir, port, Map.of("MCPD_LISTEN", "127.0.0.1:" + port, "MCPD_DATA",
                dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9"), List.of("-Xmx256m",
                "-XX:+ExitOnOutOfMemoryError"), "relay");
    }

    /** How long a GET takes to be answered 200, in ms; -1 when it is not answered 200 within 5 s. */
    private static long probe(PackagedJar relay, String path) {
        long started = System.nanoTime();
        try {
            HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri(path))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return answer.statusCode() == 200 ? (System.nanoTime() - started) / 1_000_000 : -1;
        } catch (IOException | InterruptedException e) {
            return -1;
        }
    }

    private static int honest(PackagedJar relay) {
        try {
            return HTTP.send(HttpRequest.newBuilder(relay.uri("/v1/ingest")).timeout(Duration.ofSeconds(5))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(HONEST))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException | InterruptedException e) {
            return -1;
        }
    }

    /** A body that sends {@code sent} bytes of its {@code declared}, then stalls until {@code release}. */
    private static RequestBody stalling(long declared, int sent, CountDownLatch release) {
        return new RequestBody() {
            @Override
            public MediaType contentType() {
                return MediaType.get("application/json");
            }

            @Override
            public long contentLength() {
                return declared;
            }

            @Override
            public void writeTo(BufferedSink sink) throws IOException {
                sink.write(new byte[sent]);
                sink.flush();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("the attacker leaves");
            }
        };
    }

    /** One HTTP/2 connection (h2c, prior knowledge) carrying {@code streams} stalled requests. */
    private static OkHttpClient h2Connection() {
        Dispatcher dispatcher = new Dispatcher();
        dispatcher.setMaxRequests(1000);
        dispatcher.setMaxRequestsPerHost(1000);
        return new OkHttpClient.Builder().protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE)).dispatcher(dispatcher)
                .connectionPool(new ConnectionPool(1, 1, TimeUnit.MINUTES)).readTimeout(Duration.ofSeconds(90))
                .writeTimeout(Duration.ofSeconds(90)).build();
    }

    private static void stall(OkHttpClient client, PackagedJar relay, int streams, long declared, int sent,
                              CountDownLatch release) {
        for (int i = 0; i < streams; i++) {
            client.newCall(new Request.Builder().url(relay.uri("/v1/ingest").toString())
                    .post(stalling(declared, sent, release)).build()).enqueue(new Callback() {
                        @Override
                        public void onFailure(Call call, IOException e) {
                        }

                        @Override
                        public void onResponse(Call call, Response response) {
                            response.close();
                        }
                    });
        }
    }

    /** HTTP/1.1 connections that send a request head declaring {@code declared} bytes, and nothing more. */
    private static List<Socket> silentBodies(PackagedJar relay, List<Long> declared) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (long length : declared) {
            Socket socket = new Socket("127.0.0.1", relay.uri("/").getPort());
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/ingest HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: "
                    + length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            sockets.add(socket);
        }
        return sockets;
    }

    private static void closeAll(List<Socket> sockets) {
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // gone already
            }
        }
    }

    @Test
    void stalledBodiesOnBothProtocolsNeverDelayTheProbesNorTurnAnHonestSenderAway() throws Exception {
        try (PackagedJar relay = relay()) {
            CountDownLatch release = new CountDownLatch(1);
            List<OkHttpClient> h2 = List.of(h2Connection(), h2Connection());
            h2.forEach(client -> stall(client, relay, 100, 1000, 0, release));
            List<Socket> h1 = silentBodies(relay, Collections.nCopies(210, 1000L));
            long slowest = 0;
            List<Integer> honest = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    long healthz = probe(relay, "/healthz");
                    long readyz = probe(relay, "/readyz");
                    slowest = healthz < 0 || readyz < 0 ? Long.MAX_VALUE : Math.max(slowest, Math.max(healthz, readyz));
                    honest.add(honest(relay));
                    Thread.sleep(500);
                }
            } finally {
                release.countDown();
                closeAll(h1);
                h2.forEach(client -> client.dispatcher().executorService().shutdownNow());
            }
            boolean pass = slowest <= 1000 && honest.stream().allMatch(s -> s == 202 || s == 503);
            assertHostile("a-stalled-bodies", "2 HTTP/2 connections × 100 streams and 210 HTTP/1.1 connections, all"
                            + " with a body that never comes (relay with -Xmx256m)", "/healthz and /readyz within 1 s"
                            + " throughout; an honest sender served or told to retry at once",
                    "slowest probe " + (slowest == Long.MAX_VALUE ? "no answer" : slowest + " ms") + "; honest "
                            + honest.stream().distinct().toList(), pass);
            assertTrue(pass);
        }
    }

    @Test
    void streamsThatFillTheirWindowsAndStopRunNothingOutOfMemory() throws Exception {
        try (PackagedJar relay = relay()) {
            CountDownLatch release = new CountDownLatch(1);
            List<OkHttpClient> hold = List.of(h2Connection(), h2Connection());
            hold.forEach(client -> stall(client, relay, 100, 1000, 0, release));
            List<OkHttpClient> flood = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                OkHttpClient client = h2Connection();
                stall(client, relay, 16, 16L << 20, 1 << 20, release);
                flood.add(client);
            }
            Thread.sleep(5000); // the windows fill (what the attacker sends)
            List<Integer> during = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                during.add(honest(relay));
            }
            release.countDown();
            List.of(hold, flood).forEach(clients -> clients.forEach(c -> c.dispatcher().executorService()
                    .shutdownNow()));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int after = -1;
            while (System.nanoTime() < deadline && (after = honest(relay)) != 202) {
                Thread.sleep(200);
            }
            String log = Files.readString(relay.log(), StandardCharsets.UTF_8);
            boolean oom = log.contains("OutOfMemoryError");
            boolean alive = relay.isAlive();
            boolean pass = !oom && alive && after == 202 && during.stream().allMatch(s -> s == 202 || s == 503);
            assertHostile("a-full-windows", "24 HTTP/2 connections × 16 streams each sending 1 MiB of a declared"
                            + " 16 MiB and stopping, beside 2 × 100 stalled streams (-Xmx256m)", "no"
                            + " OutOfMemoryError, the process up; honest senders served or told to retry meanwhile,"
                            + " served within seconds once the attackers leave",
                    "OutOfMemoryError: " + oom + ", alive: " + alive + ", honest during " + during.stream().distinct()
                            .toList() + ", after " + after, pass);
            assertTrue(pass, log.length() > 4000 ? log.substring(log.length() - 4000) : log);
        }
    }

    @Test
    void clientsThatNeverOpenTheirWindowsHaveTheirConnectionsClosedAndRunNothingOutOfMemory() throws Exception {
        int connections = 2_000; // before answers were watched, 900 ran this relay out of memory
        int port = PackagedJar.freePort();
        try (PackagedJar relay = PackagedJar.start(dir, port, Map.of("MCPD_LISTEN", "127.0.0.1:" + port,
                "MCPD_DATA", dir.resolve("mcpd.db").toString(), "MCPD_UPSTREAMS", "http://127.0.0.1:9",
                "MCPD_REQUEST_TIMEOUT_SECONDS", "5"), List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"), "relay")) {
            List<RawHttp2> unread = new ArrayList<>();
            long slowest = 0;
            try {
                for (int c = 0; c < connections; c++) {
                    try {
                        RawHttp2 client = RawHttp2.neverOpeningItsWindows(port, 5_000);
                        unread.add(client);
                        for (int s = 0; s < 100; s++) { // the relay's limit of streams at once
                            client.data(client.headers("/v1/ingest", Map.of("content-type", "application/json"),
                                    false), HONEST, true);
                        }
                    } catch (IOException closedUnderIt) {
                        // the relay closed this connection while streams were still being opened on it
                    }
                    if (c % 100 == 99) {
                        long healthz = probe(relay, "/healthz");
                        slowest = healthz < 0 ? Long.MAX_VALUE : Math.max(slowest, healthz);
                    }
                }
                // Every connection is closed by the relay: at once, once the answers' memory is spent; the others
                // once an answer has waited as long as an idle connection is kept (10 s with a 5 s request timeout).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
                int ended = 0;
                for (RawHttp2 client : unread) {
                    if (client.endedByServerWithin(Math.max(1, (deadline - System.nanoTime()) / 1_000_000))) {
                        ended++;
                    }
                }
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                int after = honest(relay);
                while (after != 202 && System.nanoTime() < until) {
                    Thread.sleep(200);
                    after = honest(relay);
                }
                String log = Files.readString(relay.log(), StandardCharsets.UTF_8);
                boolean oom = log.contains("OutOfMemoryError");
                boolean said = log.contains("closed an HTTP/2 connection reason=");
                boolean pass = !oom && relay.isAlive() && slowest <= 5_000 && ended == unread.size() && after == 202
                        && said;
                assertHostile("a3-h5", connections + " HTTP/2 connections × 100 ingest streams whose flow-control"
                                + " windows never open, so no answer's body can be sent (-Xmx256m, request timeout"
                                + " 5 s)", "no OutOfMemoryError; /healthz answered throughout; every such connection"
                                + " closed by the relay (memory for waiting answers spent, or an answer waiting 10 s),"
                                + " said in the log; an honest sender served afterwards",
                        "OutOfMemoryError: " + oom + ", slowest probe " + (slowest == Long.MAX_VALUE ? "no answer"
                                : slowest + " ms") + ", closed by the relay " + ended + " of " + unread.size()
                                + ", logged " + said + ", honest after " + after, pass);
                assertTrue(pass, log.length() > 4000 ? log.substring(log.length() - 4000) : log);
            } finally {
                unread.forEach(client -> {
                    try {
                        client.close();
                    } catch (IOException ignored) {
                        // gone already
                    }
                });
            }
        }
    }

    @Test
    void silentBodiesThatDeclareMegabytesHoldNoMemoryAndTurnNobodyAway() throws Exception {
        try (PackagedJar relay = relay()) {
            List<Long> declared = List.of(16L << 20, 16L << 20, 16L << 20, 8L << 20, 4L << 20, 2L << 20, 1L << 20,
                    1L << 20, 1L << 20);
            List<Socket> silent = silentBodies(relay, declared);
            Thread.sleep(500);
            int small;
            try {
                small = honest(relay);
            } finally {
                closeAll(silent);
            }
            boolean pass = small == 202;
            assertHostile("a-declared-bodies", "9 connections declaring 16, 16, 16, 8, 4, 2, 1, 1, 1 MiB and sending"
                    + " nothing (-Xmx256m: 64 MiB for bodies)", "a small honest request is accepted (202)",
                    "honest request: " + small, pass);
            assertTrue(pass);
        }
    }
}
