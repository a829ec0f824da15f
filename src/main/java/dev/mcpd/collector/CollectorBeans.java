package dev.mcpd.collector;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.http.IngestTally;
import dev.mcpd.http.MetricsScrape;
import dev.mcpd.http.ProbeAnswer;
import dev.mcpd.http.RolePaths;
import dev.mcpd.http.SenderKeyCheck;
import dev.mcpd.routing.OnWorker;
import dev.mcpd.source.KafkaSource;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreLease;
import dev.mcpd.store.StoreLocation;
import dev.mcpd.wire.RelayBatch;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Everything the collector's routes refer to by name: the one place the collector is wired, used by
 * {@link CollectorApplication} and by the Camel JBang configuration ({@code jbang/serve/}). Closing it closes the
 * store.
 */
public final class CollectorBeans implements AutoCloseable {

    /** The collector's own path, beside the probes: {@code GET /v1/stats}. */
    public static final RolePaths PATHS = new RolePaths(Set.of("/v1/stats", "/collector/status"), List.of(),
            List.of("/v1/stats", "/collector/status"));

    /** Every time the collector reads: the quota's minute, a duplicate's stamp. */
    private static final InstantSource CLOCK = InstantSource.system();

    private final McpdConfig config;
    private final JdbcStore store;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CollectorMetrics metrics = new CollectorMetrics(registry);
    private final IngestTally ingestTally = new IngestTally();
    private final UpkeepPass upkeep;
    private final BatchReader batchReader;
    private final RelayBatchReader relayBatchReader;
    private final Optional<KafkaSource> source;
    /** Every way in — an HTTP request, a relay batch, the Kafka source — archives through it. */
    private final BatchArchiver archiver;

    private CollectorBeans(McpdConfig config, JdbcStore store) {
        this.config = config;
        this.store = store;
        ingestTally.bindTo(registry);
        StoreLease lease = new StoreLease(store, "upkeep", replicaId(), config.upkeep().leaseTerm());
        this.upkeep = new UpkeepPass(lease, store, config.upkeep(), metrics, CLOCK);
        this.batchReader = new BatchReader(config.listener().maxBodyBytes());
        this.relayBatchReader = new RelayBatchReader(batchReader, config.listener().maxBodyBytes());
        this.archiver = new BatchArchiver(store, metrics);
        this.source = config.source().address().map(address -> new KafkaSource(address, config.source().group(),
                archiver::archive, relayBatchReader::judge, registry, CLOCK));
    }

    /** Starts consuming the Kafka source, if there is one: once the routes serve. */
    public void startSource() {
        source.ifPresent(KafkaSource::start);
    }

    /** {@code HOST-PID}: the pod's name under Kubernetes, told apart from another process on the same machine. */
    static String replicaId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                host = "localhost";
            }
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    /** The properties the collector's routes read as {@code {{…}}}. */
    public Map<String, String> properties() {
        return Map.of("mcpd.lease.pass-ms", Long.toString(config.upkeep().leasePass().toMillis()));
    }

    /** Opens the store named by {@code --data} and brings its schema up to date. */
    public static CollectorBeans open(McpdConfig config) {
        // A replica frozen inside a transaction loses it within a pass: the lease then changes hands in time.
        return new CollectorBeans(config, JdbcStore.open(StoreLocation.of(config.data()), CLOCK,
                Optional.of(config.upkeep().leasePass())));
    }

    /**
     * Binds the collector's beans (beside the shared ones of {@code RoleHost.bindShared}). Its routes run on the
     * event loop; the steps that block — parsing a body, a transaction in the store, a query — are bound
     * {@link OnWorker}.
     */
    public void bindTo(BiConsumer<String, Object> bind) {
        bind.accept("collectorTargetCheck", new CollectorTargetCheck());
        bind.accept("quota", new QuotaPerMinute(config.ingest().quotaPerMinute(), CLOCK));
        bind.accept("batchReader", OnWorker.of(batchReader));
        bind.accept("archiveStep", OnWorker.of(new ArchiveStep(archiver)));
        bind.accept("collectorAnswer", new CollectorAnswer());
        bind.accept("relayBatchReader", OnWorker.of(relayBatchReader));
        bind.accept("relayBatchArchive", OnWorker.of(new RelayBatchArchive(archiver)));
        bind.accept("relayBatchAnswer", new RelayBatchAnswer());
        bind.accept("statsAnswer", OnWorker.of(new StatsAnswer(store)));
        bind.accept("upkeepPass", upkeep);
        bind.accept("collectorStatusAnswer", new CollectorStatusAnswer(upkeep));
        // What a relay may use: h2c with prior knowledge (the Vert.x server speaks it) and relay batches.
        bind.accept("readiness", OnWorker.of(new ProbeAnswer(new CollectorReadiness(store,
                () -> source.flatMap(KafkaSource::unreachable)),
                "h2c " + RelayBatch.CAPABILITY).detailOnlyFor(new SenderKeyCheck(config.ingest().key()))));
        bind.accept("metricsScrape", new MetricsScrape(registry));
        bind.accept("ingestTally", ingestTally);
    }

    public JdbcStore store() {
        return store;
    }

    @Override
    public void close() {
        source.ifPresent(KafkaSource::close); // the batch in hand archived and committed while the store is open
        upkeep.close(); // releases the lease while the store is still open
        store.close();
    }

    /** The collector's meter registry. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }
}
