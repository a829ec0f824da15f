package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.it.PackagedJar;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The processes of one fault scenario — collectors ({@code mcpd serve}) and a relay, the packaged jar run as
 * separate processes through {@link PackagedJar} — and the end-of-scenario accounting: once the relay's spool is
 * empty and the archive stops growing, the counts (sent, acknowledged, archived, duplicates stored, lost) are taken,
 * checked, and written as a row of {@code RELIABILITY.md} ({@link ReliabilityReport}).
 */
final class FaultRig implements AutoCloseable {

    /** Requests of the kill -9 scenario: the 10 000 (about a minute); {@code -Dfault.requests=N} for others. */
    static final int REQUESTS = Integer.getInteger("fault.requests", 10_000);
    static final int SENDERS = 32;
    static final Duration SETTLE = Duration.ofSeconds(90);

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = TestTuning.QUICK_TO_GIVE_UP_HTTP;

    final Path dir;
    final Archive archive;
    final String run = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    final long startedNanos = System.nanoTime();
    private final List<PackagedJar> processes = new ArrayList<>();
    private final List<AutoCloseable> others = new ArrayList<>();

    FaultRig(Path dir, Archive archive) {
        this.dir = dir;
        this.archive = archive;
    }

    // ------------------------------------------------------------------------------------------------ processes

    /** Collector {@code index} (0-based) on {@code port}. */
    PackagedJar collector(int index, int port) {
        Path home = dir.resolve("collector-" + (index + 1));
        createDirectories(home);
        return keep(PackagedJar.start(home, port, Map.of(), "serve", "--listen", "127.0.0.1:" + port, "--data",
                archive.data(index)));
    }

    /** A relay on {@code port}, spooling under {@code dir/relay}, with these extra arguments and environment. */
    PackagedJar relay(int port, Map<String, String> environment, String... extra) {
        Path home = dir.resolve("relay");
        createDirectories(home);
        List<String> args = new ArrayList<>(List.of("relay", "--listen", "127.0.0.1:" + port, "--data",
                home.resolve("relay.db").toString()));
        args.addAll(List.of(extra));
        return keep(PackagedJar.start(home, port, environment, args.toArray(String[]::new)));
    }

    PackagedJar keep(PackagedJar process) {
        processes.add(process);
        return process;
    }

    <T extends AutoCloseable> T keep(T resource) {
        others.add(resource);
        return resource;
    }

    void forget(PackagedJar process) {
        processes.remove(process);
    }

    static URI base(int port) {
        return URI.create("http://127.0.0.1:" + port);
    }

    static String upstream(int port) {
        return "http://127.0.0.1:" + port;
    }

    // ------------------------------------------------------------------------------------------------ reading

    static JsonNode json(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(15)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException(uri + " answered " + answer.statusCode() + ": " + answer.body());
        }
        return JSON.readTree(answer.body());
    }

    static JsonNode stats(PackagedJar collector) throws IOException, InterruptedException {
        return json(collector.uri("/v1/stats"));
    }

    static JsonNode relayStatus(PackagedJar relay) throws IOException, InterruptedException {
        return json(relay.uri("/relay/status"));
    }

    static String metrics(PackagedJar relay) throws IOException, InterruptedException {
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics"))
                .timeout(Duration.ofSeconds(15)).GET().build(), HttpResponse.BodyHandlers.ofString());
        return answer.body();
    }

    private static final Pattern SAMPLE = Pattern.compile("^(\\w+)(\\{[^}]*})?\\s+(\\S+)");

    /** The value of {@code name} whose labels contain every one of {@code labels} ({@code order="1"}), or 0. */
    static double metric(String scrape, String name, String... labels) {
        double sum = 0;
        for (String line : scrape.lines().toList()) {
            Matcher m = SAMPLE.matcher(line);
            if (!m.find() || !m.group(1).equals(name)) {
                continue;
            }
            String labelSet = m.group(2) == null ? "" : m.group(2);
            boolean all = true;
            for (String label : labels) {
                all &= labelSet.contains(label);
            }
            if (all) {
                sum += Double.parseDouble(m.group(3));
            }
        }
        return sum;
    }

    static long delivered(PackagedJar relay, int order) throws IOException, InterruptedException {
        return (long) metric(metrics(relay), "mcpd_relay_delivered_total", "order=\"" + order + "\"");
    }

    // ------------------------------------------------------------------------------------------------ accounting

    /** The counts of a finished scenario. */
    record Counts(int sent, int acked, long archived, long rows, long distinctBodies, long duplicatesStored,
                  long lost, long duplicatesRecognised, Set<Integer> lostSeqs, JsonNode relayStatus) {
    }

    /**
     * Waits until the relay's spool is empty and the collectors' archive has stopped growing, then counts. Archived
     * is the sum of the collectors' {@code /v1/stats} events (one of them when they share a store).
     */
    Counts settle(Senders senders, PackagedJar relay, List<PackagedJar> collectors) throws Exception {
        JsonNode[] status = new JsonNode[1];
        await("the relay's spool is empty").atMost(SETTLE).pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> (status[0] = relayStatus(relay)).path("spool").path("entries").asLong(-1) == 0);
        long[] last = {-1};
        await("the archive stops growing").atMost(SETTLE).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> {
                    long now = archivedEvents(collectors)[0];
                    boolean stable = now == last[0];
                    last[0] = now;
                    return stable;
                });
        long[] statsSum = archivedEvents(collectors);
        Archive.Contents contents = archive.contents(run);
        Set<Integer> acked = senders.acknowledged();
        Set<Integer> lost = new TreeSet<>(acked);
        lost.removeAll(contents.seqs());
        return new Counts(senders.sent(), acked.size(), statsSum[0], contents.rows(), contents.distinctBodies(),
                contents.duplicatesStored(), lost.size(), statsSum[1], lost, status[0]);
    }

    /** {events, duplicates} from {@code /v1/stats}: summed over the collectors, or one of them when they share. */
    private long[] archivedEvents(List<PackagedJar> collectors) throws IOException, InterruptedException {
        long events = 0;
        long duplicates = 0;
        for (PackagedJar collector : archive.shared() ? collectors.subList(0, 1) : collectors) {
            JsonNode stats = stats(collector);
            events += stats.path("events").asLong();
            duplicates += stats.path("duplicates").asLong();
        }
        return new long[] {events, duplicates};
    }

    /**
     * The checks every scenario makes, plus the scenario's own ({@code extra}: description → passed); writes the row
     * and returns the problems (empty when it passed).
     */
    List<String> verdict(String id, String title, String done, Senders senders, Counts counts,
                         Map<String, Boolean> extra, String notes) {
        Map<String, Boolean> checks = new LinkedHashMap<>();
        checks.put("every request acknowledged (given up: " + senders.givenUp().size() + ")",
                counts.acked() == counts.sent() && senders.givenUp().isEmpty());
        checks.put("the relay answered only 2xx or 503 (other answers: " + senders.otherAnswers() + ")",
                senders.otherAnswers().isEmpty());
        checks.put("archived == acknowledged", counts.archived() == counts.acked());
        checks.put("one row per archived event", counts.rows() == counts.archived());
        checks.put("duplicates stored == 0", counts.duplicatesStored() == 0);
        checks.put("lost == 0 (lost seqs: " + first(counts.lostSeqs()) + ")", counts.lost() == 0);
        checks.put("nothing dead-lettered", counts.relayStatus() == null
                || counts.relayStatus().path("spool").path("deadLetters").asLong(-1) == 0);
        checks.putAll(extra);
        List<String> problems = new ArrayList<>();
        checks.forEach((what, ok) -> {
            if (!ok) {
                problems.add(what);
            }
        });
        double seconds = (System.nanoTime() - startedNanos) / 1e9;
        String result = problems.isEmpty() ? "pass" : "**FAIL**: " + String.join("; ", problems);
        ReliabilityReport.record(new ReliabilityReport.Row(id, title, done + " Store: " + archive.describe() + ".",
                counts.sent(), counts.acked(), counts.archived(), counts.duplicatesStored(), counts.lost(),
                counts.duplicatesRecognised(), notes + String.format(" %d attempts%s; %.0f s.", senders.attempts(),
                senders.unavailableWithoutRetryAfter() == 0 ? "" : ", " + senders.unavailableWithoutRetryAfter()
                        + " answered 503 without Retry-After", seconds), result));
        System.out.printf("[%s] %s: sent %d, acked %d, archived %d (rows %d, distinct bodies %d), duplicates stored "
                        + "%d, lost %d, re-sends recognised %d, attempts %d, 503s %d (%d without Retry-After), "
                        + "connection failures %d, other %s; given up %s; %s%n", id, title, counts.sent(), counts.acked(), counts.archived(),
                counts.rows(), counts.distinctBodies(), counts.duplicatesStored(), counts.lost(),
                counts.duplicatesRecognised(), senders.attempts(), senders.refusedFull(),
                senders.unavailableWithoutRetryAfter(), senders.connectionFailures(), senders.otherAnswers(),
                first(senders.givenUp().entrySet()), result);
        return problems;
    }

    private static String first(java.util.Collection<?> values) {
        return values.size() <= 10 ? values.toString() : new ArrayList<>(values).subList(0, 10) + "…";
    }

    static void createDirectories(Path path) {
        try {
            Files.createDirectories(path);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws Exception {
        for (PackagedJar process : processes) {
            process.close();
        }
        for (AutoCloseable other : others) {
            other.close();
        }
        archive.close();
    }
}
