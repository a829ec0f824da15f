package dev.mcpd.it.fault;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.collector.TestPostgres;
import dev.mcpd.it.PackagedJar;
import dev.mcpd.relay.TestUpstream;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.TestKafka;
import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;

/**
 * One fault scenario, described with {@link #scenario} and started with {@link Builder#start()}: collectors
 * ({@code mcpd serve}) and a relay, the packaged jar run as separate processes through {@link PackagedJar}, maybe
 * something in front of the primary collector, and the load ({@link Senders}). The scenario then injects its fault
 * through the rig (stopping and starting processes, a proxy going down) and ends with the accounting: once the
 * relay's spool is empty and the archive stops growing, the counts (sent, acknowledged, archived, duplicates stored,
 * lost) are taken, checked, and written as a row of {@code RELIABILITY.md} ({@link ReliabilityReport}).
 */
final class FaultRig implements AutoCloseable {

    /** Requests of the kill -9 scenario: the 10 000 (about a minute); {@code -Dfault.requests=N} for others. */
    static final int REQUESTS = Integer.getInteger("fault.requests", 10_000);
    static final int SENDERS = 32;
    static final Duration SETTLE = Duration.ofSeconds(90);

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = TestTuning.QUICK_TO_GIVE_UP_HTTP;

    /** Starts something in front of the primary collector, given the collector's address. */
    interface Front<T extends AutoCloseable> {
        T start(URI collector) throws Exception;
    }

    /**
     * What a scenario starts. By default: one collector on its own SQLite file, a relay delivering to it, and
     * {@link #REQUESTS} unpaced requests from {@link #SENDERS} senders.
     */
    static final class Builder {
        private final String id;
        private final String title;
        private final Path dir;
        private Archive archive;
        private int collectors = 1;
        private boolean primaryDownAtFirst;
        private Front<?> front;
        private Function<AutoCloseable, String> frontUrl;
        private final List<String> relayOptions = new ArrayList<>();
        private final Map<String, String> relayEnvironment = new LinkedHashMap<>();
        private int requests = REQUESTS;
        private Duration pace;
        private int padBytes;
        private TestKafka kafka;
        private String topic;

        private Builder(String id, String title, Path dir) {
            this.id = id;
            this.title = title;
            this.dir = dir;
        }

        /** A primary and a secondary collector on one archive ({@link Archive#sharedByTwo}), the relay naming both. */
        Builder primaryAndSecondarySharingAnArchive() throws SQLException {
            archive = Archive.sharedByTwo();
            collectors = 2;
            return this;
        }

        /** The (primary) collector's port is chosen and given to the relay, but the collector is not started. */
        Builder primaryDownAtFirst() {
            primaryDownAtFirst = true;
            return this;
        }

        /** The relay reaches the primary through a {@link TcpProxy}, delaying each way by {@code oneWayDelay}. */
        Builder primaryThroughTcpProxy(Duration oneWayDelay) {
            return primaryThrough(collector -> new TcpProxy(PackagedJar.freePort(), collector.getPort(), oneWayDelay)
                    .up(), proxy -> upstream(((TcpProxy) proxy).port()));
        }

        /** The relay reaches the primary through a {@link TestUpstream} of the scenario's making. */
        Builder primaryThroughTestUpstream(Front<TestUpstream> upstream) {
            return primaryThrough(upstream, started -> ((TestUpstream) started).url().toString());
        }

        private Builder primaryThrough(Front<?> start, Function<AutoCloseable, String> url) {
            front = start;
            frontUrl = url;
            return this;
        }

        /** Relay options, given before its {@code --upstream}s. */
        Builder relayOptions(String... options) {
            relayOptions.addAll(List.of(options));
            return this;
        }

        Builder relayEnvironment(String name, String value) {
            relayEnvironment.put(name, value);
            return this;
        }

        Builder requests(int count) {
            requests = count;
            return this;
        }

        /** Request {@code seq} is sent no earlier than {@code seq × pace} after the load starts. */
        Builder paced(Duration every) {
            pace = every;
            return this;
        }

        /**
         * Kafka between the relay and the collectors: the relay delivers to {@code topic} on {@code kafka}, and
         * {@code collectors} collectors consume it as one group ({@code --source}), sharing one archive (PostgreSQL;
         * SQLite when there is one collector).
         */
        Builder throughKafka(TestKafka kafka, String topic, int collectors) throws SQLException {
            this.kafka = kafka;
            this.topic = topic;
            this.collectors = collectors;
            this.archive = collectors == 1 ? Archive.sqlite(dir, 1) : Archive.postgres(TestPostgres.require());
            return this;
        }

        /** Extra bytes in every request body. */
        Builder padded(int bytes) {
            padBytes = bytes;
            return this;
        }

        /** Starts the collectors (but one down at first), what stands in front of the primary, then the relay. */
        FaultRig start() throws Exception {
            FaultRig rig = new FaultRig(this, archive != null ? archive : Archive.sqlite(dir, 1));
            try {
                rig.startProcesses();
            } catch (Exception | Error e) {
                rig.close();
                throw e;
            }
            return rig;
        }
    }

    /** A scenario: {@code id} names its row and its requests, {@code title} heads the row. */
    static Builder scenario(String id, String title, Path dir) {
        return new Builder(id, title, dir);
    }

    final Path dir;
    final Archive archive;
    final String run = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    final long startedNanos = System.nanoTime();
    private final Builder scenario;
    private final int[] collectorPorts;
    private final PackagedJar[] collectors;
    private final int relayPort = PackagedJar.freePort();
    private final List<String> relayArgs = new ArrayList<>();
    private PackagedJar relay;
    private AutoCloseable front;
    private Senders senders;
    private long loadStartedNanos;
    private final List<PackagedJar> processes = new ArrayList<>();
    private final List<AutoCloseable> others = new ArrayList<>();

    private FaultRig(Builder scenario, Archive archive) {
        this.scenario = scenario;
        this.dir = scenario.dir;
        this.archive = archive;
        this.collectorPorts = new int[scenario.collectors];
        this.collectors = new PackagedJar[scenario.collectors];
        for (int i = 0; i < collectorPorts.length; i++) {
            collectorPorts[i] = PackagedJar.freePort();
        }
    }

    private void startProcesses() throws Exception {
        for (int i = 0; i < collectors.length; i++) {
            if (i > 0 || !scenario.primaryDownAtFirst) {
                startCollector(i);
            }
        }
        relayArgs.addAll(scenario.relayOptions);
        if (scenario.kafka != null) {
            relayArgs.addAll(List.of("--upstream", kafkaAddress()));
            startRelay();
            return;
        }
        String primary = upstream(collectorPorts[0]);
        if (scenario.front != null) {
            front = keep(scenario.front.start(URI.create(primary)));
            primary = scenario.frontUrl.apply(front);
        }
        relayArgs.addAll(List.of("--upstream", primary));
        for (int i = 1; i < collectors.length; i++) {
            relayArgs.addAll(List.of("--upstream", upstream(collectorPorts[i])));
        }
        startRelay();
    }

    // ------------------------------------------------------------------------------------------------ processes

    /** Collector {@code index} (0: the primary), started (again) on its port and store. */
    PackagedJar startCollector(int index) {
        Path home = dir.resolve("collector-" + (index + 1));
        createDirectories(home);
        int port = collectorPorts[index];
        List<String> args = new ArrayList<>(List.of("serve", "--listen", "127.0.0.1:" + port, "--data",
                archive.data(index)));
        if (scenario.kafka != null) {
            args.addAll(List.of("--source", kafkaAddress(), "--source-group", run));
        }
        collectors[index] = keep(PackagedJar.start(home, port, Map.of(), args.toArray(String[]::new)));
        return collectors[index];
    }

    /** {@code kafka://…/TOPIC} of a scenario {@link Builder#throughKafka through Kafka}. */
    String kafkaAddress() {
        return "kafka://" + scenario.kafka.bootstrap() + "/" + scenario.topic;
    }

    PackagedJar collector(int index) {
        return collectors[index];
    }

    void kill9Collector(int index) {
        collectors[index].kill9();
        forget(collectors[index]);
    }

    /** SIGTERM; returns the exit status. */
    int terminateCollector(int index) {
        int status = collectors[index].terminate();
        forget(collectors[index]);
        return status;
    }

    /** The relay, started (again) on its port, spooling under {@code dir/relay}, with the scenario's arguments. */
    PackagedJar startRelay() {
        Path home = dir.resolve("relay");
        createDirectories(home);
        List<String> args = new ArrayList<>(List.of("relay", "--listen", "127.0.0.1:" + relayPort, "--data",
                home.resolve("relay.db").toString()));
        args.addAll(relayArgs);
        relay = keep(PackagedJar.start(home, relayPort, scenario.relayEnvironment, args.toArray(String[]::new)));
        return relay;
    }

    PackagedJar relay() {
        return relay;
    }

    void kill9Relay() {
        relay.kill9();
        forget(relay);
    }

    /** SIGTERM; returns the exit status. */
    int terminateRelay() {
        int status = relay.terminate();
        forget(relay);
        return status;
    }

    /** The proxy in front of the primary ({@link Builder#primaryThroughTcpProxy}). */
    TcpProxy proxy() {
        return (TcpProxy) front;
    }

    /** The test upstream in front of the primary ({@link Builder#primaryThroughTestUpstream}). */
    TestUpstream testUpstream() {
        return (TestUpstream) front;
    }

    private PackagedJar keep(PackagedJar process) {
        processes.add(process);
        return process;
    }

    private <T extends AutoCloseable> T keep(T resource) {
        others.add(resource);
        return resource;
    }

    private void forget(PackagedJar process) {
        processes.remove(process);
    }

    static URI base(int port) {
        return URI.create("http://127.0.0.1:" + port);
    }

    static String upstream(int port) {
        return "http://127.0.0.1:" + port;
    }

    // ------------------------------------------------------------------------------------------------ load

    /** Starts the scenario's senders, posting to the relay. */
    Senders startLoad() {
        loadStartedNanos = System.nanoTime();
        senders = new Senders(run, scenario.id, scenario.requests, SENDERS, base(relayPort), scenario.pace,
                scenario.padBytes).start();
        return senders;
    }

    /** Sleeps until {@code sinceLoadStarted} after {@link #startLoad()}. */
    void sleepUntil(Duration sinceLoadStarted) {
        Senders.sleep(Duration.ofNanos(loadStartedNanos + sinceLoadStarted.toNanos() - System.nanoTime()));
    }

    /** Waits for every request to be settled (acknowledged or given up), then stops the senders. */
    void awaitLoad(Duration atMost) throws InterruptedException {
        try {
            senders.await(atMost);
        } finally {
            senders.stop();
        }
    }

    /** The highest value of the relay's {@code metric}, sampled every {@code every} from now until closed. */
    Readings.Peak peakOf(String metric, Duration every) {
        return keep(new Readings.Peak(this::metrics, metric, every));
    }

    /** The running relay's {@code /metrics}. */
    String metrics() throws IOException, InterruptedException {
        return Readings.metrics(relay);
    }

    /** What the running relay delivered to upstream {@code order} (1: the primary). */
    long delivered(int order) throws IOException, InterruptedException {
        return (long) Readings.metric(metrics(), "mcpd_relay_delivered_total", "order=\"" + order + "\"");
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
    Counts settle() throws Exception {
        return settle(senders, relay, List.of(collectors));
    }

    private Counts settle(Senders senders, PackagedJar relay, List<PackagedJar> collectors) throws Exception {
        JsonNode[] status = new JsonNode[1];
        await("the relay's spool is empty").atMost(SETTLE).pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> (status[0] = Readings.relayStatus(relay)).path("spool").path("entries").asLong(-1) == 0);
        if (scenario.kafka != null) {
            // The topic stands between: a partition of a collector that died waits for the group to notice.
            int acked = senders.acknowledged().size();
            await("the collectors archived what the relay acknowledged").atMost(SETTLE)
                    .pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> archivedEvents(collectors)[0] >= acked);
        }
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
            JsonNode stats = Readings.stats(collector);
            events += stats.path("events").asLong();
            duplicates += stats.path("duplicates").asLong();
        }
        return new long[] {events, duplicates};
    }

    /**
     * The checks every scenario makes, plus the scenario's own ({@code extra}: description → passed), written as the
     * scenario's row ({@code done}: what was done, {@code notes}: what was seen); fails the test unless all hold.
     */
    void assertHolds(String done, Counts counts, Map<String, Boolean> extra, String notes) {
        assertEquals(List.of(), verdict(scenario.id, scenario.title, done, senders, counts, extra, notes),
                "scenario " + scenario.id);
    }

    private List<String> verdict(String id, String title, String done, Senders senders, Counts counts,
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

    private static String first(Collection<?> values) {
        return values.size() <= 10 ? values.toString() : new ArrayList<>(values).subList(0, 10) + "…";
    }

    static void createDirectories(Path path) {
        try {
            Files.createDirectories(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws Exception {
        if (senders != null) {
            senders.stop();
        }
        for (PackagedJar process : processes) {
            process.close();
        }
        for (AutoCloseable other : others) {
            other.close();
        }
        archive.close();
    }
}
