package dev.mcpd.collector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.ProbeAnswer;
import dev.mcpd.store.JdbcStore;
import dev.mcpd.store.StoreLocation;
import dev.mcpd.testing.ReliabilityReport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A collector's {@code /readyz} says the store does not answer, in time, however many ask and however it hangs. */
@Timeout(60)
class CollectorReadinessTest {

    @RegisterExtension
    final SchemaStore pg = new SchemaStore("mcpd_ready_");

    @Test
    void aFrozenPostgresIsUnavailableWithinTheChecksTimeForEveryConcurrentProbe() throws Exception {
        try (FreezingProxy proxy = new FreezingProxy(pg.postgres().port())) {
            String url = pg.postgres().url(pg.schema()).replace(":" + pg.postgres().port() + "/",
                    ":" + proxy.port() + "/");
            try (JdbcStore store = JdbcStore.open(StoreLocation.of(url))) {
                CollectorReadiness readiness = new CollectorReadiness(store);
                assertEquals(200, readiness.get().status(), "answering: ready");
                proxy.freeze();
                long started = System.nanoTime();
                List<CompletableFuture<ProbeAnswer.Verdict>> probes = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    probes.add(CompletableFuture.supplyAsync(readiness::get));
                }
                List<String> answers = new ArrayList<>();
                for (CompletableFuture<ProbeAnswer.Verdict> probe : probes) {
                    try {
                        ProbeAnswer.Verdict verdict = probe.get(10, TimeUnit.SECONDS);
                        answers.add(verdict.status() + " " + verdict.line());
                    } catch (TimeoutException | ExecutionException e) {
                        answers.add("no answer in 10 s");
                    }
                }
                long tookMillis = (System.nanoTime() - started) / 1_000_000;
                boolean pass = answers.stream().allMatch(a -> a.startsWith("503 unavailable: the store does not"
                        + " answer")) && tookMillis < 2 * CollectorReadiness.STORE_TIMEOUT.toMillis() + 2_000;
                ReliabilityReport.assertHostile("a3-l2", "PostgreSQL frozen (no byte passes, connections stay"
                                + " open); three /readyz at once", "each answered 503 within the check's "
                                + CollectorReadiness.STORE_TIMEOUT.toSeconds() + " s (and a margin)",
                        "in " + tookMillis + " ms: " + answers, pass);
                assertTrue(pass);
            }
        }
    }
}
