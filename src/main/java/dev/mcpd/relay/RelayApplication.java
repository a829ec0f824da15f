package dev.mcpd.relay;

import dev.mcpd.config.McpdConfig;
import dev.mcpd.delivery.Backoff;
import dev.mcpd.delivery.DeadLetterStep;
import dev.mcpd.delivery.DeliveryOutcome;
import dev.mcpd.delivery.DeliveryWorkers;
import dev.mcpd.delivery.SpoolComponent;
import dev.mcpd.delivery.UpstreamBoard;
import dev.mcpd.delivery.UpstreamFailover;
import dev.mcpd.delivery.UpstreamProbe;
import dev.mcpd.delivery.UpstreamRequest;
import dev.mcpd.ingest.IdempotencyKey;
import dev.mcpd.ingest.IngestAnswer;
import dev.mcpd.ingest.IngestServer;
import dev.mcpd.ingest.SpoolAdmission;
import dev.mcpd.ingest.SpoolWriteStep;
import dev.mcpd.observability.RelayMetrics;
import dev.mcpd.observability.RelayReadiness;
import dev.mcpd.observability.RelayStatus;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.Spool;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import org.apache.camel.main.Main;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles the relay: opens the spool, binds the beans the YAML routes under {@code routes/relay/} refer to by name,
 * and runs them on the shared {@link IngestServer}. The routes say what happens; the beans bound here say how.
 */
public final class RelayApplication implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RelayApplication.class);

    /** Upstreams' /readyz are asked this often (SPEC §6). */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(5);

    private final Main main;
    private final Spool spool;
    private final UpstreamBoard board;
    private final DeadLetters deadLetters;

    private RelayApplication(Main main, Spool spool, UpstreamBoard board, DeadLetters deadLetters) {
        this.main = main;
        this.spool = spool;
        this.board = board;
        this.deadLetters = deadLetters;
    }

    /**
     * What is fixed in production but a test must make shorter: the upstream backoff, the probe interval and up
     * window, and Camel properties such as the HTTP read timeout.
     */
    public record Tuning(Backoff backoff, Duration probeInterval, Duration upWindow,
                         Map<String, String> camelProperties) {
        public static Tuning standard() {
            return new Tuning(Backoff.standard(), PROBE_INTERVAL, UpstreamBoard.DEFAULT_UP_WINDOW, Map.of());
        }

        public Tuning withProbes(Duration interval, Duration window) {
            return new Tuning(backoff, interval, window, camelProperties);
        }
    }

    /** Runs the relay in the foreground until it is stopped (SIGTERM, SIGINT); returns the process exit status. */
    public static int run(McpdConfig config) {
        RelayApplication relay;
        try {
            relay = start(config);
        } catch (IngestServer.StartFailure e) {
            System.err.println("mcpd: " + e.getMessage());
            return 1;
        }
        return IngestServer.runUntilStopped(relay.main, "relay");
    }

    /** Starts the relay and returns once it serves. */
    public static RelayApplication start(McpdConfig config) {
        return start(config, Tuning.standard());
    }

    /** Starts the relay, tuned, and returns once it serves. */
    public static RelayApplication start(McpdConfig config, Tuning tuning) {
        IngestServer server = IngestServer.forRole("relay", config);
        Spool spool;
        DeadLetters deadLetters;
        try {
            spool = Spool.open(config.relaySpoolDir(), Spool.Options.unbounded().withMaxBytes(config.spoolMaxBytes()));
        } catch (IOException e) {
            throw new IngestServer.StartFailure("cannot open the spool at " + config.relaySpoolDir() + ": "
                    + e.getMessage(), e);
        }
        server.closeWith(spool);
        try {
            deadLetters = new DeadLetters(config.relaySpoolDir());
        } catch (IOException e) {
            closeQuietly(spool);
            throw new IngestServer.StartFailure("cannot open " + config.relaySpoolDir().resolve("dead") + ": "
                    + e.getMessage(), e);
        }
        UpstreamBoard board = new UpstreamBoard(config.upstreams(), tuning.backoff(), InstantSource.system(),
                tuning.upWindow());
        DeliveryWorkers workers = new DeliveryWorkers(config.workers());
        PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        RelayMetrics.bind(metrics, spool, board, deadLetters);
        server.property("mcpd.workers", Integer.toString(config.workers()))
                .property("mcpd.probe.interval-ms", Long.toString(tuning.probeInterval().toMillis()))
                // ingest
                .bind("spoolAdmission", new SpoolAdmission(spool))
                .bind("idempotencyKey", new IdempotencyKey())
                .bind("spoolWriteStep", new SpoolWriteStep(spool, config.upstreamKey().isEmpty()))
                .bind("ingestAnswer", new IngestAnswer())
                // delivery
                .bind("spool", new SpoolComponent(spool, workers))
                .bind("upstreamRequest", new UpstreamRequest(config.upstreamKey()))
                .bind("upstreamFailover", new UpstreamFailover(board, config.upstreamKey().isPresent()))
                .bind("deliveryOutcome", new DeliveryOutcome())
                .bind("deadLetterStep", new DeadLetterStep(deadLetters))
                .bind("upstreamProbe", new UpstreamProbe(board))
                // visibility
                .bind("relayStatus", new RelayStatus(spool, board, deadLetters, workers))
                .readiness(new RelayReadiness(spool, board))
                .metrics(metrics);
        tuning.camelProperties().forEach(server::property);
        Main main = server.start();
        LOG.info("relay listening on {}, spooling in {}, {} upstream(s)", config.listen(), config.relaySpoolDir(),
                config.upstreams().size());
        return new RelayApplication(main, spool, board, deadLetters);
    }

    /** Stops the relay: routes first (in-flight requests finish), then the spool. */
    @Override
    public void close() {
        main.stop();
    }

    public Spool spool() {
        return spool;
    }

    public UpstreamBoard upstreams() {
        return board;
    }

    public DeadLetters deadLetters() {
        return deadLetters;
    }

    private static void closeQuietly(Spool spool) {
        try {
            spool.close();
        } catch (IOException e) {
            LOG.warn("closing the spool failed: {}", e.toString());
        }
    }
}
