package dev.mcpd.relay;

import dev.mcpd.config.InternalTuning;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.delivery.AfterDelivery;
import dev.mcpd.delivery.AnswerPolicy;
import dev.mcpd.delivery.DeadLetterStep;
import dev.mcpd.delivery.DeliveryBudget;
import dev.mcpd.delivery.DeliveryOutcome;
import dev.mcpd.delivery.DeliveryWorkers;
import dev.mcpd.delivery.EntryRecords;
import dev.mcpd.delivery.KafkaUpstreams;
import dev.mcpd.delivery.OrderedStreams;
import dev.mcpd.delivery.RejectedItems;
import dev.mcpd.delivery.ShipmentPacker;
import dev.mcpd.delivery.SpoolExpiry;
import dev.mcpd.delivery.SpoolLanes;
import dev.mcpd.delivery.UpstreamHttp;
import dev.mcpd.delivery.UpstreamKafka;
import dev.mcpd.delivery.UpstreamProbe;
import dev.mcpd.delivery.UpstreamRequest;
import dev.mcpd.delivery.UpstreamTls;
import dev.mcpd.endpoint.SpoolComponent;
import dev.mcpd.http.IngestTally;
import dev.mcpd.http.MetricsScrape;
import dev.mcpd.http.ProbeAnswer;
import dev.mcpd.http.RefusalAnswer;
import dev.mcpd.http.RolePaths;
import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.ingest.AwaitedAnswer;
import dev.mcpd.ingest.IdempotencyKey;
import dev.mcpd.ingest.IngestAnswer;
import dev.mcpd.ingest.RelayTargetCheck;
import dev.mcpd.ingest.ReplayIntake;
import dev.mcpd.ingest.SpoolAdmission;
import dev.mcpd.ingest.SpoolRefusals;
import dev.mcpd.ingest.SpoolRequestStep;
import dev.mcpd.ingest.StreamHeaders;
import dev.mcpd.ingest.WaitRequest;
import dev.mcpd.observability.RelayMetrics;
import dev.mcpd.observability.RelayReadiness;
import dev.mcpd.observability.RelaySpoolAnswer;
import dev.mcpd.observability.RelayStatus;
import dev.mcpd.observability.RelaySync;
import dev.mcpd.routing.ExtensionPoint;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.ReplayInbox;
import dev.mcpd.spool.Spool;
import dev.mcpd.upstream.ServiceState;
import dev.mcpd.upstream.UpstreamBoard;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the relay's routes refer to by name, and the properties they read: the one place the relay is wired,
 * used by {@link RelayApplication} and by the Camel JBang configuration ({@code jbang/relay/}). Closing it closes the
 * spool — after the routes stopped.
 */
public final class RelayBeans implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RelayBeans.class);

    /** The relay's own paths, beside the probes: {@code /relay} and everything below it ({@code /relay/status}). */
    public static final RolePaths PATHS = new RolePaths(Set.of(), List.of("/relay"),
            List.of("/relay/status", "/relay/spool?limit=N", "/relay/sync?seq=N"));

    private final McpdConfig config;
    private final RelayApplication.Tuning tuning;
    private final Spool spool;
    private final DeadLetters deadLetters;
    private final UpstreamBoard board;
    private final DeliveryWorkers workers;
    private final UpstreamHttp upstreamHttp;
    private final KafkaUpstreams kafkaUpstreams;
    private final PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final IngestTally ingestTally = new IngestTally();
    private final RelaySync relaySync;
    private final EntryFates fates = new EntryFates();
    private final EntryRecords records;
    private final SpoolExpiry expiry;
    private final RejectedItems rejectedItems;
    private final ReplayInbox replayInbox;
    private final UpstreamTls upstreamTls;

    private RelayBeans(McpdConfig config, RelayApplication.Tuning tuning, Spool spool, DeadLetters deadLetters,
                       UpstreamTls upstreamTls) {
        this.config = config;
        this.upstreamTls = upstreamTls;
        this.tuning = tuning;
        this.spool = spool;
        this.deadLetters = deadLetters;
        // One delivery timeout for both: the window counts an answer as lost when the HTTP client gives up on it.
        Duration deliveryTimeout = tuning.deliveryTimeout();
        this.board = new UpstreamBoard(config.relay().upstreams(), new UpstreamBoard.Settings(tuning.backoff(),
                tuning.upWindow(), config.delivery().maxInFlight(), deliveryTimeout,
                new ServiceState.Thresholds(config.health().healthyThreshold(),
                        config.health().unhealthyThreshold())), tuning.clock());
        this.upstreamHttp = new UpstreamHttp(board, config.delivery().maxInFlight(), upstreamTls, deliveryTimeout);
        this.kafkaUpstreams = new KafkaUpstreams(deliveryTimeout, InternalTuning.DEFAULT.connectTimeout(),
                config.listener().maxBodyBytes(), config.tls());
        this.workers = new DeliveryWorkers(config.delivery().workers());
        this.records = new EntryRecords(spool::holds, InstantSource.system());
        // Receive times are the wall clock's (the ingest route's), so their age is too.
        this.expiry = new SpoolExpiry(config.deadLetters().spoolMaxAge(), spool, deadLetters, fates, records,
                InstantSource.system());
        this.replayInbox = new ReplayInbox(config.relay().relaySpoolDir());
        this.rejectedItems = new RejectedItems(config.relay().upstreams().size());
        RelayMetrics.bind(metrics, spool, board, deadLetters, expiry::expired, rejectedItems, tuning.clock());
        ingestTally.bindTo(metrics);
        this.relaySync = new RelaySync(spool, deadLetters, new SenderKeyCheck(config.ingest().key()), metrics);
    }

    /** Opens the spool (recovering what an earlier run left) and its dead letters. */
    public static RelayBeans open(McpdConfig config, RelayApplication.Tuning tuning) throws IOException {
        UpstreamTls upstreamTls = UpstreamTls.read(config.tls()); // a bad file: one line, before the spool opens
        Spool spool = Spool.open(config.relay().relaySpoolDir(),
                Spool.Options.unbounded().withMaxBytes(config.relay().spoolMaxBytes()));
        try {
            DeadLetters dead = new DeadLetters(config.relay().relaySpoolDir());
            spool.countAgainstBound(() -> dead.recentCensus().bytes());
            return new RelayBeans(config, tuning, spool, dead, upstreamTls);
        } catch (IOException | RuntimeException e) {
            spool.close();
            throw e;
        }
    }

    /** Binds the relay's beans (beside the shared ones of {@code RoleHost.bindShared}). */
    public void bindTo(BiConsumer<String, Object> bind) {
        // ingest
        bind.accept("relayTargetCheck", new RelayTargetCheck());
        bind.accept("spoolAdmission", new SpoolAdmission(spool));
        bind.accept("idempotencyKey", new IdempotencyKey());
        bind.accept("beforeSpool", new ExtensionPoint("mcpd-before-spool"));
        bind.accept("ingestAnswer", new IngestAnswer(spool.id()));
        bind.accept("relayWait", new WaitRequest());
        bind.accept("streamHeaders", new StreamHeaders(config.streams()));
        bind.accept("awaitedAnswer", new AwaitedAnswer(fates));
        // delivery
        OrderedStreams streams = new OrderedStreams(config.streams(), config.delivery().batchMaxEntries(),
                config.delivery().batchMaxBytes());
        bind.accept("spoolRequest", new SpoolRequestStep(config.relay().upstreamKey().isEmpty()));
        // The shared answer to refusals, which also knows what a failed spool write means to a sender.
        bind.accept("refusalAnswer", new RefusalAnswer(SpoolRefusals::of));
        bind.accept("spool", new SpoolComponent(spool, fates, config.listener().maxBodyBytes(), new SpoolLanes(
                workers, DeliveryBudget.forHeap(config.listener().maxBodyBytes()), board,
                new ShipmentPacker(config.delivery().batchMaxEntries(), config.delivery().batchMaxBytes(),
                        config.relay().upstreamKey().isPresent()),
                records, streams, expiry)));
        bind.accept("upstreamRequest", new UpstreamRequest(config.relay().upstreamKey()));
        bind.accept("deliveryOutcome", new DeliveryOutcome(board, answerPolicy(), fates, rejectedItems, records,
                tuning.clock()));
        bind.accept("upstreamHttp", upstreamHttp);
        bind.accept("upstreamKafka", new UpstreamKafka(kafkaUpstreams, config.health().timeout(),
                config.relay().upstreamKey()));
        bind.accept("afterDelivery", new AfterDelivery());
        bind.accept("deadLetterStep", new DeadLetterStep(deadLetters, tuning.clock(), fates, expiry));
        bind.accept("spoolExpiry", expiry);
        bind.accept("replayIntake", new ReplayIntake(replayInbox, "spool:relay", InstantSource.system()));
        bind.accept("upstreamProbe", new UpstreamProbe(board, config.health().probePath(),
                config.health().upstreamProbes(),
                config.health().timeout(), probeInterval(), upstreamHttp, kafkaUpstreams));
        // visibility
        bind.accept("relayStatus", new RelayStatus(spool, board, deadLetters, replayInbox, expiry::expired, workers,
                tuning.clock()));
        bind.accept("relaySync", relaySync);
        bind.accept("relaySpool", new RelaySpoolAnswer(spool, records, InstantSource.system()));
        bind.accept("readiness", new ProbeAnswer(new RelayReadiness(spool, board))
                .detailOnlyFor(new SenderKeyCheck(config.ingest().key())));
        bind.accept("metricsScrape", new MetricsScrape(metrics));
        bind.accept("ingestTally", ingestTally);
    }

    /** The properties the relay's routes read as {@code {{…}}}, and the tuning's Camel settings. */
    public Map<String, String> properties() {
        Map<String, String> properties = new HashMap<>(tuning.camelProperties());
        properties.put("mcpd.probe.interval-ms", Long.toString(probeInterval().toMillis()));
        properties.put("mcpd.expiry.enabled", Boolean.toString(expiry.enabled()));
        properties.put("mcpd.expiry.interval-ms",
                Long.toString(SpoolExpiry.sweepInterval(config.deadLetters().spoolMaxAge()).toMillis()));
        return properties;
    }

    public Spool spool() {
        return spool;
    }

    private AnswerPolicy answerPolicy() {
        return new AnswerPolicy(config.relay().upstreamKey().isPresent(), config.deadLetters().retryableStatuses());
    }

    /** {@code --probe-interval-seconds}, unless the tuning (a test) sets one of its own. */
    private Duration probeInterval() {
        return tuning.probeInterval() != null ? tuning.probeInterval() : config.health().interval();
    }

    /** The relay's TLS to its upstreams, which the server's TLS reload watches beside its listener's. */
    public UpstreamTls upstreamTls() {
        return upstreamTls;
    }

    /** The relay's meter registry. */
    public PrometheusMeterRegistry metrics() {
        return metrics;
    }

    public UpstreamBoard board() {
        return board;
    }

    public DeadLetters deadLetters() {
        return deadLetters;
    }

    @Override
    public void close() throws IOException {
        upstreamHttp.stop();
        kafkaUpstreams.close();
        // What an operator stopping the relay wants to know: what it still holds, and that nothing of it is lost.
        long waiting = spool.entries();
        long dead = deadLetters.recentCensus().count();
        String held = waiting == 0 ? "the spool is empty" : waiting + " entries (" + spool.bytes()
                + " bytes) stay in the spool, delivered after the next start";
        LOG.info("stopped: {}{}", held, dead == 0 ? "" : "; " + dead + " dead letters in " + deadLetters.directory());
        spool.close();
    }
}
