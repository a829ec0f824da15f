package dev.mcpd.collector;

import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import dev.mcpd.testing.CapturedLog;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.testing.TestKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The brokers go away between a poll and its commit for longer than the source waits for a commit (the session's 10 s):
 * the commit fails, and the source goes on — it once ended its thread there, and the collector consumed nothing more
 * until a restart while its {@code /readyz} said ok. A broker of its own (the test stops it), PostgreSQL as the store,
 * and a lock the test holds on {@code batches} to keep the poll's archive waiting until the broker is down.
 */
@Timeout(240)
class KafkaSourceCommitOutageTest {

    private static final byte[] EMPTY = "{\"events\":[]}".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private static long stored(TestPostgres postgres, String schema, String key) throws Exception {
        try (Connection connection = postgres.connect(schema);
             PreparedStatement count = connection.prepareStatement("SELECT count(*) FROM batches WHERE"
                     + " idempotency_key = ?")) {
            count.setString(1, key);
            try (ResultSet rs = count.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Whether a session other than {@code mine} waits for a lock with a statement on {@code batches}. */
    private static boolean archiveWaitsForTheLock(Connection mine) throws Exception {
        try (Statement statement = mine.createStatement(); ResultSet rs = statement.executeQuery("SELECT count(*)"
                + " FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%batches%'"
                + " AND pid <> pg_backend_pid()")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    @Test
    void aCommitTheBrokersNeverAnswerIsWarnedAboutAndTheSourceGoesOn() throws Exception {
        TestPostgres postgres = TestPostgres.require();
        String schema = postgres.createSchema("mcpd_commit_");
        String topic = "commit-outage-" + UUID.randomUUID();
        String group = "group-" + UUID.randomUUID();
        try (TestKafka kafka = TestKafka.start(dir.resolve("kafka"))) {
            kafka.createTopic(topic, 1, Map.of());
            try (CapturedLog log = new CapturedLog();
                 RunningCollector collector = RunningCollector.start(dir, Map.of("MCPD_SOURCE", "kafka://"
                         + kafka.bootstrap() + "/" + topic, "MCPD_SOURCE_GROUP", group, "MCPD_DATA",
                         postgres.url(schema)))) {
                KafkaSourceTest.send(kafka, List.of(KafkaSourceTest.record(topic, "/v1/ingest", "application/json",
                        "", "before", 1, EMPTY)));
                await("the source runs").atMost(PATIENCE).until(() -> stored(postgres, schema, "before") == 1);

                try (Connection lock = postgres.connect(schema)) {
                    lock.setAutoCommit(false);
                    try (Statement statement = lock.createStatement()) {
                        statement.execute("LOCK TABLE batches IN ACCESS EXCLUSIVE MODE");
                    }
                    KafkaSourceTest.send(kafka, List.of(KafkaSourceTest.record(topic, "/v1/ingest",
                            "application/json", "", "polled-before-the-outage", 1, EMPTY)));
                    await("the poll's archive waits for the lock").atMost(PATIENCE)
                            .until(() -> archiveWaitsForTheLock(lock));
                    kafka.stop();
                    lock.commit(); // the archive goes through; its commit meets no broker
                }
                await("the failed commit is warned about, within the session and not the client's minute")
                        .atMost(Duration.ofSeconds(30)).until(() -> log
                        .events("dev.mcpd.source.KafkaSource", Level.WARN).stream().anyMatch(e -> e
                                .getFormattedMessage().contains("offsets not committed")));
                kafka.restart();
                KafkaSourceTest.send(kafka, List.of(KafkaSourceTest.record(topic, "/v1/ingest", "application/json",
                        "", "after", 1, EMPTY)));
                boolean consumedAfter;
                try {
                    await("the source goes on").atMost(Duration.ofSeconds(60))
                            .until(() -> stored(postgres, schema, "after") == 1);
                    consumedAfter = true;
                } catch (ConditionTimeoutException e) {
                    consumedAfter = false;
                }
                long polled = stored(postgres, schema, "polled-before-the-outage");
                ReliabilityReport.assertHostile("a3-h4", "the broker stopped between a poll and its commit, for"
                                + " longer than the source waits for a commit (collector on PostgreSQL)",
                        "the commit warned about, the source goes on: the next record archived once the broker is"
                                + " back; the polled one stored once",
                        "commit warned; next record " + (consumedAfter ? "archived" : "NOT archived within 60 s")
                                + "; the polled one stored " + polled + "×", consumedAfter && polled == 1);
            }
        } finally {
            postgres.execute(null, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }
}
