package dev.mcpd.relay;

import static dev.mcpd.testing.ReliabilityReport.assertHostile;
import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.upstream.UpstreamView;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, defects 1 and 2: whatever request target a sender writes, delivery goes to the upstream {@code --upstream}
 * names and nowhere else (with the relay's key or without), and nothing a sender sends — nor anything an older relay
 * spooled — can stall delivery for the requests behind it.
 */
class HostileTargetTest {


    @TempDir
    Path dir;

    /** A listener that must never be reached: it counts every connection made to it, and says nothing. */
    private static final class Trap implements AutoCloseable {
        private final ServerSocket socket;
        private final AtomicInteger connections = new AtomicInteger();

        Trap(int port) throws IOException {
            socket = new ServerSocket();
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            Thread accepting = new Thread(() -> {
                while (!socket.isClosed()) {
                    try (Socket reached = socket.accept()) {
                        connections.incrementAndGet();
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "trap-" + port);
            accepting.setDaemon(true);
            accepting.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        int connections() {
            return connections.get();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Both ports free: an upstream's port U at most 6553, and U × 10, where "U" + "0" would lead. */
    private static int[] upstreamPortAndItsTenfold() {
        Random random = new Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = 2000 + random.nextInt(4500);
            if (free(port) && free(port * 10)) {
                return new int[] {port, port * 10};
            }
        }
        throw new IllegalStateException("no free pair of ports U, 10 U found");
    }

    private static boolean free(int port) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int statusOf(String answer) {
        return answer.length() >= 12 ? Integer.parseInt(answer.substring(9, 12)) : -1;
    }

    private static String rawPost(int port, String target, String headers, String body) throws IOException {
        try (RawHttp raw = new RawHttp(port, 5000)) {
            return raw.send("POST " + target + " HTTP/1.1\r\nHost: relay\r\n" + headers + "Content-Length: "
                    + body.getBytes(StandardCharsets.ISO_8859_1).length + "\r\n\r\n" + body).readResponse();
        }
    }

    private static String printable(String target) {
        return target.chars().mapToObj(c -> c < 0x20 || c > 0x7e ? String.format("\\x%02x", c)
                : String.valueOf((char) c)).collect(Collectors.joining());
    }

    @Test
    void noRequestTargetReachesAnotherListenerWithOrWithoutTheRelaysKey() throws Exception {
        for (boolean withKey : new boolean[] {false, true}) {
            int[] ports = upstreamPortAndItsTenfold();
            try (TestUpstream upstream = TestUpstream.start(ports[0]); Trap tenfold = new Trap(ports[1]);
                 Trap other = new Trap(0)) {
                Map<String, String> environment = new HashMap<>(Map.of("MCPD_UPSTREAMS",
                        upstream.url().toString()));
                if (withKey) {
                    environment.put("MCPD_UPSTREAM_KEY", "the-relays-key");
                }
                try (RunningRelay relay = RunningRelay.start(dir.resolve("key-" + withKey), environment,
                        DeliveryTest.FAST)) {
                    List<String> targets = List.of("0/a://b/x", "0/x", ":" + other.port() + "/a://b/x",
                            "http://127.0.0.1:" + other.port() + "/x", "https://127.0.0.1:" + other.port() + "/x",
                            "//127.0.0.1:" + other.port() + "/x", "@127.0.0.1:" + other.port() + "/x",
                            "/..//127.0.0.1:" + other.port() + "/x", ".127.0.0.1:" + other.port() + "/x");
                    Map<String, Integer> answered = new LinkedHashMap<>();
                    Map<String, String> bodies = new LinkedHashMap<>();
                    for (String target : targets) {
                        String body = "steer-" + UUID.randomUUID();
                        bodies.put(target, body);
                        answered.put(target, statusOf(rawPost(relay.port(), target, "", body)));
                    }
                    List<String> accepted = answered.entrySet().stream().filter(a -> a.getValue() / 100 == 2)
                            .map(Map.Entry::getKey).toList();
                    await().atMost(PATIENCE).until(() -> accepted.stream().allMatch(target -> upstream.received()
                            .stream().anyMatch(r -> new String(r.body(), StandardCharsets.ISO_8859_1)
                                    .equals(bodies.get(target)))));
                    await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
                    boolean everyAnswerKnown = answered.values().stream().allMatch(s -> s == 202 || s == 400);
                    boolean keyOnlyToTheUpstream = !withKey || upstream.received().stream()
                            .allMatch(r -> "Bearer the-relays-key".equals(r.header("Authorization")));
                    assertHostile("t1-" + (withKey ? "key" : "open"),
                            "POST with targets that once steered delivery (" + String.join(", ", targets)
                                    + ") to a relay " + (withKey ? "with" : "without") + " --upstream-key,"
                                    + " --upstream http://127.0.0.1:U",
                            "400 or 202; every 202 delivered to the upstream; nothing reaches 127.0.0.1:U0 or the"
                                    + " other listener",
                            "answers " + answered.values() + "; " + accepted.size() + " delivered to the upstream; "
                                    + tenfold.connections() + " connection(s) to U0, " + other.connections()
                                    + " to the other listener",
                            everyAnswerKnown && tenfold.connections() == 0 && other.connections() == 0
                                    && keyOnlyToTheUpstream && accepted.size() == 4);
                    assertEquals(2, upstream.received().stream().filter(r -> r.uri().equals("/x")).count(),
                            "absolute-form reduced to its path: " + upstream.received());
                }
            }
        }
    }

    @Test
    void aTargetCannotGiveAPortToAnUpstreamUrlThatNamesNone() throws Exception {
        Assumptions.assumeTrue(free(80), "needs port 80 (root) for an upstream URL without a port");
        try (TestUpstream upstream = TestUpstream.start(80); Trap other = new Trap(0);
             RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAMS", "http://127.0.0.1",
                     "MCPD_UPSTREAM_KEY", "the-relays-key"), DeliveryTest.FAST)) {
            String target = ":" + other.port() + "/a://b/x";
            int status = statusOf(rawPost(relay.port(), target, "", "port-" + UUID.randomUUID()));
            String ordinary = "ordinary-" + UUID.randomUUID();
            rawPost(relay.port(), "/v1/ingest", "", ordinary);
            await().atMost(PATIENCE).until(() -> upstream.received().stream()
                    .anyMatch(r -> new String(r.body(), StandardCharsets.ISO_8859_1).equals(ordinary)));
            assertHostile("t2", "POST " + target + " to a relay with --upstream http://127.0.0.1 --upstream-key K",
                    "400; the key never reaches the port the target names",
                    status + "; " + other.connections() + " connection(s) to that port",
                    status == 400 && other.connections() == 0);
        }
    }

    /** Targets no upstream request can be built from as written, each on its own connection. */
    private static final List<String> UNSENDABLE = List.of("*", "v1/traces", "@127.0.0.1:9/x", "/x\u0000y",
            "/{{env:HOME}}", "/x|y", "/x\\y", "/%zz", "/caf\u00e9", "http://127.0.0.1:9/x", "https://evil.example/x",
            "//evil.example/x", "/..", "/%2e%2e/%2e%2e/x", "ftp://evil.example/x", "/x#frag");

    @Test
    void sixteenUnsendableTargetsDoNotHoldUpTheOrdinaryRequestsBehindThem() throws Exception {
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            List<Integer> statuses = new ArrayList<>();
            for (String target : UNSENDABLE) {
                statuses.add(statusOf(rawPost(relay.port(), target, "", "unsendable-" + UUID.randomUUID())));
            }
            List<String> ordinary = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String body = "ordinary-" + UUID.randomUUID();
                ordinary.add(body);
                assertEquals(202, statusOf(rawPost(relay.port(), "/v1/ingest", "", body)));
            }
            long started = System.nanoTime();
            await().atMost(PATIENCE).until(() -> ordinary.stream().allMatch(body -> upstream.received().stream()
                    .anyMatch(r -> new String(r.body(), StandardCharsets.ISO_8859_1).equals(body))));
            long deliveredMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            UpstreamView view = relay.application().upstreams().views().get(0);
            assertHostile("t3", UNSENDABLE.size() + " POSTs with targets no request can be built from as written ("
                            + UNSENDABLE.stream().map(HostileTargetTest::printable).collect(Collectors.joining(" "))
                            + "), then 20 ordinary ones, 4 workers",
                    "each 400, or 202 with the target reduced to a path and delivered; the 20 delivered at once;"
                            + " the upstream never waits",
                    "answers " + statuses + "; the 20 delivered within " + deliveredMillis + " ms of the last answer;"
                            + " failed attempts " + view.answers().failedAttempts() + ", dead letters "
                            + relay.application().deadLetters().count(),
                    statuses.stream().allMatch(s -> s == 400 || s == 202) && view.answers().failedAttempts() == 0
                            && view.answers().consecutiveFailures() == 0
                            && relay.application().deadLetters().count() == 0);
            assertTrue(upstream.received().stream().allMatch(r -> r.uri().startsWith("/")));
        }
    }

    @Test
    void entriesAnOlderRelaySpooledThatCannotBeSentGoToDeadWithTheirReasonAndDeliveryGoesOn() throws Exception {
        Path spoolDir = dir.resolve("mcpd.spool").resolve("relay");
        Map<String, String> unsendable = new LinkedHashMap<>();
        try (Spool spool = Spool.open(spoolDir)) {
            for (String target : List.of("@127.0.0.1:9/x", "*", "/x\u0000y", "0/a://b/x", "/x y", "/{{env:HOME}}",
                    "/a%2")) {
                unsendable.put(target, "old-" + UUID.randomUUID());
                spool.append(entry("POST", target, unsendable.get(target))).get(10, TimeUnit.SECONDS);
            }
            unsendable.put("BREW /v1/ingest", "old-" + UUID.randomUUID());
            spool.append(entry("BREW", "/v1/ingest", unsendable.get("BREW /v1/ingest"))).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 8; i++) {
                spool.append(entry("POST", "/v1/ingest", "ordinary-" + i)).get(10, TimeUnit.SECONDS);
            }
            spool.append(entry("POST", "http://127.0.0.1:9/reduced", "absolute")).get(10, TimeUnit.SECONDS);
        }
        try (TestUpstream upstream = TestUpstream.start();
             RunningRelay relay = RunningRelay.start(dir, Map.of(), DeliveryTest.FAST, upstream)) {
            await().atMost(PATIENCE).until(() -> relay.application().spool().entries() == 0);
            UpstreamView view = relay.application().upstreams().views().get(0);
            List<JsonNode> why = deadLetterRecords(spoolDir.resolve("dead"));
            boolean allUnsendable = why.size() == unsendable.size() && why.stream().allMatch(
                    record -> record.path("status").asInt(-1) == 0
                            && record.path("reason").asText().startsWith("unsendable: "));
            assertHostile("t4", "a spool written by an older relay holding " + unsendable.size()
                            + " entries no request can be built from (targets " + unsendable.keySet().stream()
                            .map(HostileTargetTest::printable).collect(Collectors.joining(" ")) + ") among 9 others",
                    "each in dead/ with status 0 and an 'unsendable: …' reason; the others delivered; the upstream"
                            + " never waits",
                    why.size() + " in dead/ (" + why.stream().map(r -> r.path("reason").asText()).distinct()
                            .collect(Collectors.joining("; ")) + "); " + upstream.received().size()
                            + " delivered; failed attempts " + view.answers().failedAttempts(),
                    allUnsendable && upstream.received().size() == 9 && view.answers().failedAttempts() == 0
                            && view.answers().consecutiveFailures() == 0);
            assertTrue(upstream.received().stream().anyMatch(r -> r.uri().equals("/reduced")),
                    "an absolute-form target of an older relay goes to the upstream's own path");
        }
    }

    private static SpoolRequest entry(String method, String target, String body) {
        return new SpoolRequest(method, target, "application/json", "", "key-" + UUID.randomUUID(), Optional.empty(),
                System.currentTimeMillis(), body.getBytes(StandardCharsets.UTF_8));
    }

    private static List<JsonNode> deadLetterRecords(Path dead) throws IOException {
        ObjectMapper json = new ObjectMapper();
        try (Stream<Path> files = Files.list(dead)) {
            List<JsonNode> records = new ArrayList<>();
            for (Path file : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
                records.add(json.readTree(file.toFile()));
            }
            return records;
        }
    }
}
