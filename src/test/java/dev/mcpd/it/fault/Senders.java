package dev.mcpd.it.fault;

import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The load of a fault scenario: {@code requests} distinct one-event native batches ({@code POST /v1/ingest}) from
 * {@code concurrency} concurrent senders to a relay, each request retried until it is acknowledged (2xx) the way a
 * well-behaved SDK does: after a {@code 503} it waits exactly the {@code Retry-After} the relay named (bounded by
 * {@link #MAX_RETRY_AFTER}); after a connection failure (the relay is down or was killed mid-answer) it tries again
 * after {@link #RECONNECT_PAUSE}. A request still unacknowledged after {@link #GIVE_UP_AFTER} is given up (and shows
 * as sent but not acknowledged). A {@code 503} without {@code Retry-After} is counted apart and retried after 1 s.
 * Any other answer is one the relay must not give: it is counted
 * ({@link #otherAnswers()}, which every scenario requires to be empty) and retried like a dropped connection.
 *
 * <p>Request {@code seq} carries {@code {"run":…,"scenario":…,"seq":seq}}; the even ones also carry an
 * {@code Idempotency-Key} header, the odd ones none (the relay derives its key from the bytes). A re-send after a lost
 * answer therefore carries the same key, and a collector recognises the copy.
 */
final class Senders {

    static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(10);
    static final Duration RECONNECT_PAUSE = Duration.ofMillis(100);
    static final Duration GIVE_UP_AFTER = Duration.ofSeconds(150);

    private static final HttpClient HTTP = TestTuning.QUICK_TO_GIVE_UP_HTTP;

    private final String run;
    private final String scenario;
    private final int requests;
    private final int concurrency;
    private final URI ingest;
    private final Duration pace;
    private final int padBytes;

    private final Set<Integer> attempted = ConcurrentHashMap.newKeySet();
    private final Set<Integer> acknowledged = ConcurrentHashMap.newKeySet();
    private final Map<Integer, String> givenUp = new ConcurrentHashMap<>();
    private final LongAdder attempts = new LongAdder();
    private final LongAdder refusedFull = new LongAdder();
    private final LongAdder refusedFullWithRetryAfter5 = new LongAdder();
    private final LongAdder connectionFailures = new LongAdder();
    private final LongAdder unavailableWithoutRetryAfter = new LongAdder();
    private final Map<String, LongAdder> otherAnswers = new ConcurrentHashMap<>();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLong startedNanos = new AtomicLong();
    private ExecutorService pool;

    /**
     * @param pace when not null, request {@code seq} is sent no earlier than {@code seq × pace} after the start, so
     *             the load spans a known time
     * @param padBytes extra bytes in every body (to fill a bounded spool faster)
     */
    Senders(String run, String scenario, int requests, int concurrency, URI relay, Duration pace, int padBytes) {
        this.run = run;
        this.scenario = scenario;
        this.requests = requests;
        this.concurrency = concurrency;
        this.ingest = relay.resolve("/v1/ingest");
        this.pace = pace;
        this.padBytes = padBytes;
    }

    Senders start() {
        startedNanos.set(System.nanoTime());
        pool = Executors.newFixedThreadPool(concurrency, r -> {
            Thread thread = new Thread(r, "fault-sender");
            thread.setDaemon(true);
            return thread;
        });
        for (int s = 0; s < concurrency; s++) {
            pool.execute(() -> {
                for (int seq = next.getAndIncrement(); seq < requests; seq = next.getAndIncrement()) {
                    if (pace != null) {
                        sleepUntil(startedNanos.get() + pace.toNanos() * seq);
                    }
                    send(seq);
                }
            });
        }
        pool.shutdown();
        return this;
    }

    /** Waits for every sender to finish; true when they did within {@code patience}. */
    boolean await(Duration patience) throws InterruptedException {
        return pool.awaitTermination(patience.toMillis(), TimeUnit.MILLISECONDS);
    }

    void stop() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    String body(int seq) {
        StringBuilder event = new StringBuilder("{\"run\":\"").append(run).append("\",\"scenario\":\"")
                .append(scenario).append("\",\"seq\":").append(seq);
        if (padBytes > 0) {
            event.append(",\"pad\":\"").append("x".repeat(padBytes)).append('"');
        }
        return "{\"events\":[" + event.append('}') + "]}";
    }

    private void send(int seq) {
        attempted.add(seq);
        HttpRequest.Builder builder = HttpRequest.newBuilder(ingest).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body(seq)));
        if (seq % 2 == 0) {
            builder.header("Idempotency-Key", run + "-" + seq);
        }
        HttpRequest request = builder.build();
        long deadline = System.nanoTime() + GIVE_UP_AFTER.toNanos();
        String last = "never answered";
        while (System.nanoTime() - deadline < 0) {
            attempts.increment();
            try {
                HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
                int status = answer.statusCode();
                if (status / 100 == 2) {
                    acknowledged.add(seq);
                    return;
                }
                String retryAfter = answer.headers().firstValue("Retry-After").orElse(null);
                if (status == 503 && retryAfter != null) {
                    refusedFull.increment();
                    if ("5".equals(retryAfter)) {
                        refusedFullWithRetryAfter5.increment();
                    }
                    last = "503 " + answer.body().strip() + " (Retry-After " + retryAfter + ")";
                    long seconds = parseSeconds(retryAfter);
                    sleep(Duration.ofSeconds(Math.min(seconds, MAX_RETRY_AFTER.toSeconds())));
                    continue;
                }
                // Not an answer the relay should give: counted, then retried like a dropped connection
                // so that the scenario's other counts stay meaningful.
                if (status == 503) {
                    // Retryable for every SDK (OTLP retries 503 with its own backoff), but the README promises
                    // Retry-After: counted apart, waited 1 s.
                    unavailableWithoutRetryAfter.increment();
                    last = "503 " + answer.body().strip() + " (no Retry-After)";
                    sleep(Duration.ofSeconds(1));
                    continue;
                }
                last = status + " " + answer.body().strip();
                otherAnswers.computeIfAbsent(status + " " + oneLine(answer.body()), k -> new LongAdder()).increment();
                sleep(RECONNECT_PAUSE);
            } catch (IOException e) {
                connectionFailures.increment();
                last = e.toString();
                sleep(RECONNECT_PAUSE);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                givenUp.put(seq, "interrupted");
                return;
            }
        }
        givenUp.put(seq, "given up after " + GIVE_UP_AFTER.toSeconds() + " s: " + last);
    }

    private static String oneLine(String body) {
        String line = body.strip().replaceAll("\\s+", " ");
        return line.length() > 60 ? line.substring(0, 60) + "…" : line;
    }

    private static long parseSeconds(String retryAfter) {
        try {
            return Math.max(0, Long.parseLong(retryAfter.trim()));
        } catch (NumberFormatException e) {
            return 1; // an HTTP date: the relay never sends one; a short wait is enough
        }
    }

    int acknowledgedCount() {
        return acknowledged.size();
    }

    int settledCount() {
        return acknowledged.size() + givenUp.size();
    }

    int sent() {
        return attempted.size();
    }

    Set<Integer> acknowledged() {
        return Set.copyOf(acknowledged);
    }

    Map<Integer, String> givenUp() {
        return new TreeMap<>(givenUp);
    }

    long attempts() {
        return attempts.sum();
    }

    long refusedFull() {
        return refusedFull.sum();
    }

    long refusedFullWithRetryAfter5() {
        return refusedFullWithRetryAfter5.sum();
    }

    long unavailableWithoutRetryAfter() {
        return unavailableWithoutRetryAfter.sum();
    }

    long connectionFailures() {
        return connectionFailures.sum();
    }

    Map<String, Long> otherAnswers() {
        Map<String, Long> copy = new TreeMap<>();
        otherAnswers.forEach((k, v) -> copy.put(k, v.sum()));
        return copy;
    }

    String run() {
        return run;
    }

    private static void sleepUntil(long nanos) {
        long wait = nanos - System.nanoTime();
        if (wait > 0) {
            sleep(Duration.ofNanos(wait));
        }
    }

    static void sleep(Duration duration) {
        try {
            Thread.sleep(Math.max(0, duration.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
