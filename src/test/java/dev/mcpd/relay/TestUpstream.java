package dev.mcpd.relay;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real HTTP upstream on loopback (the JDK's HTTP server) that records every request it gets and answers as the
 * test tells it: a status, headers, a body, after a delay.
 */
public final class TestUpstream implements AutoCloseable {

    /** A request as the upstream received it. */
    public record Received(Instant at, String method, String uri, Map<String, List<String>> headers, byte[] body) {
        public String header(String name) {
            for (Map.Entry<String, List<String>> header : headers.entrySet()) {
                if (header.getKey().equalsIgnoreCase(name)) {
                    return header.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** What the upstream answers. */
    public record Answer(int status, Map<String, String> headers, byte[] body, Duration delay) {
        public static Answer status(int status) {
            return new Answer(status, Map.of(), new byte[0], Duration.ZERO);
        }

        public static Answer ok() {
            return status(200);
        }

        /** No answer at all: the connection is closed once the request was read (an answer lost on the way). */
        public static Answer lost() {
            return status(-1);
        }

        public Answer withHeader(String name, String value) {
            Map<String, String> all = new HashMap<>(headers);
            all.put(name, value);
            return new Answer(status, all, body, delay);
        }

        public Answer withBody(String text) {
            return new Answer(status, headers, text.getBytes(StandardCharsets.UTF_8), delay);
        }

        public Answer withBody(byte[] bytes) {
            return new Answer(status, headers, bytes.clone(), delay);
        }

        public Answer after(Duration wait) {
            return new Answer(status, headers, body, wait);
        }
    }

    /** Null for an address that {@link #refusing() refuses connections}. */
    private final HttpServer server;
    /** Holds a refusing address's port, bound but not listening, so that nothing else takes it meanwhile. */
    private final Socket portHolder;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final List<Received> probes = new CopyOnWriteArrayList<>();
    private volatile int readyStatus = 200;
    private volatile String probePath = "/readyz";
    private volatile Function<Received, Answer> probeBehaviour;
    private volatile String capabilities;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private volatile Function<Received, Answer> behaviour = r -> Answer.ok();

    private TestUpstream(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 128);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
        portHolder = null;
    }

    private TestUpstream(Socket portHolder) {
        this.server = null;
        this.portHolder = portHolder;
    }

    public static TestUpstream start() {
        return start(0);
    }

    /** Starts on a given port: a test that took an upstream down brings it back where the relay expects it. */
    public static TestUpstream start(int port) {
        try {
            return new TestUpstream(port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * An upstream that is down: its address refuses connections for as long as it is open. A server started and
     * closed would free its port for the next server the test starts (the relay's own among them), which would then
     * answer in its place.
     */
    public static TestUpstream refusing() {
        try {
            Socket holder = new Socket();
            holder.setReuseAddress(false);
            holder.bind(new InetSocketAddress("127.0.0.1", 0));
            return new TestUpstream(holder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public TestUpstream answer(Function<Received, Answer> newBehaviour) {
        behaviour = newBehaviour;
        return this;
    }

    private void handle(HttpExchange exchange) throws IOException {
        boolean counted = false;
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Received request = new Received(Instant.now(), exchange.getRequestMethod(),
                    exchange.getRequestURI().toString(), Map.copyOf(exchange.getRequestHeaders()), body);
            if (request.method().equals("GET") && request.uri().equals(probePath)) {
                // The relay's health check: kept apart from the requests it delivers.
                probes.add(request);
                if (capabilities != null) {
                    exchange.getResponseHeaders().add("Mcpd-Capabilities", capabilities);
                }
                Function<Received, Answer> scripted = probeBehaviour;
                Answer answer = scripted == null ? Answer.status(readyStatus) : scripted.apply(request);
                if (!answer.delay().isZero()) {
                    Thread.sleep(answer.delay().toMillis()); // a slow upstream, not test synchronisation
                }
                exchange.sendResponseHeaders(answer.status(), -1);
                return;
            }
            counted = true;
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max); // probes are not counted
            received.add(request);
            Answer answer = behaviour.apply(request);
            if (!answer.delay().isZero()) {
                Thread.sleep(answer.delay().toMillis()); // a slow upstream, not test synchronisation
            }
            answer.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
            // No longer in flight once the answer goes out: the sender may send its next request at once.
            inFlight.decrementAndGet();
            counted = false;
            if (answer.status() < 0) {
                // An exchange closed before its headers were sent closes the connection: the answer is lost.
                return;
            }
            exchange.sendResponseHeaders(answer.status(), answer.body().length == 0 ? -1 : answer.body().length);
            if (answer.body().length > 0) {
                exchange.getResponseBody().write(answer.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (counted) {
                inFlight.decrementAndGet();
            }
        }
    }

    /** The requests the relay delivered (or tried to), in arrival order; probes are not among them. */
    public List<Received> received() {
        return List.copyOf(received);
    }

    /** The readiness probes ({@code GET /readyz}) it was asked. */
    public List<Received> probes() {
        return List.copyOf(probes);
    }

    /** What its {@code /readyz} names in {@code Mcpd-Capabilities} ({@code relay-batch/1}: it takes relay batches). */
    public TestUpstream capabilities(String tokens) {
        capabilities = tokens;
        return this;
    }

    /** The path its health checks come to ({@code /readyz} unless told otherwise). */
    public TestUpstream probePath(String path) {
        probePath = path;
        return this;
    }

    /** How it answers each health check (its status and delay), in place of {@link #readyStatus}. */
    public TestUpstream probeAnswer(Function<Received, Answer> behaviour) {
        probeBehaviour = behaviour;
        return this;
    }

    /** What its {@code /readyz} answers (200 unless told otherwise). */
    public TestUpstream readyStatus(int status) {
        readyStatus = status;
        return this;
    }

    public int maxConcurrentRequests() {
        return maxInFlight.get();
    }

    /** The most requests it held at once since the last call (or start); counting starts again from now. */
    public int takeMaxConcurrentRequests() {
        return maxInFlight.getAndSet(inFlight.get());
    }

    public int port() {
        return server == null ? portHolder.getLocalPort() : server.getAddress().getPort();
    }

    public URI url() {
        return URI.create("http://127.0.0.1:" + port());
    }

    @Override
    public void close() {
        if (server == null) {
            try {
                portHolder.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        } else {
            server.stop(0);
        }
        executor.shutdownNow();
    }
}
