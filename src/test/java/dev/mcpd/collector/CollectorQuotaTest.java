package dev.mcpd.collector;

import static dev.mcpd.collector.CollectorHttp.postJson;
import static dev.mcpd.collector.CollectorHttp.send;
import static dev.mcpd.collector.CollectorHttp.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.collector.CollectorHttp.Stats;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --quota-per-minute 3} over real HTTP: the 4th request in the wall-clock minute gets 429 with
 * {@code Retry-After} set to the seconds left in the minute.
 *
 * <p>The quota counts per wall-clock minute, so a run that happens to cross a minute boundary proves nothing: it is
 * repeated once, on a fresh collector (a run takes well under a second, so the second one cannot cross another).
 */
class CollectorQuotaTest {

    static final int QUOTA = 3;

    @TempDir
    Path dir;

    /** Four requests sent within one minute (checked by the clock before the first and after the last). */
    record Run(List<HttpResponse<String>> answers, Instant beforeLast, Instant afterLast, Stats stats,
               boolean crossedAMinute) {
    }

    private Run fourRequests(Path folder) {
        try (RunningCollector collector = RunningCollector.start(folder,
                Map.of("MCPD_QUOTA_PER_MINUTE", Integer.toString(QUOTA)))) {
            long minute = Instant.now().getEpochSecond() / 60;
            List<HttpResponse<String>> answers = new ArrayList<>();
            for (int i = 0; i < QUOTA; i++) {
                answers.add(send(postJson(collector.uri("/v1/ingest"), "{\"events\":[{\"n\":" + i + "}]}")));
            }
            Instant beforeLast = Instant.now();
            answers.add(send(postJson(collector.uri("/v1/ingest"), "{\"events\":[{\"n\":3}]}")));
            Instant afterLast = Instant.now();
            boolean crossed = afterLast.getEpochSecond() / 60 != minute;
            return new Run(answers, beforeLast, afterLast, stats(collector), crossed);
        }
    }

    private Run fourRequestsWithinOneMinute() {
        Run run = fourRequests(dir.resolve("first"));
        if (run.crossedAMinute()) {
            run = fourRequests(dir.resolve("second"));
        }
        assertFalse(run.crossedAMinute(), "two runs in a row crossed a minute boundary");
        return run;
    }

    @Test
    void theFirstThreeRequestsOfAMinuteAreTakenAndTheFourthIsRefused429() {
        Run run = fourRequestsWithinOneMinute();

        assertEquals(List.of(200, 200, 200, 429), run.answers().stream().map(HttpResponse::statusCode).toList(),
                () -> run.answers().get(3).body());
        assertTrue(run.answers().get(3).body().contains("quota of 3 requests per minute"),
                () -> run.answers().get(3).body());
    }

    @Test
    void theRetryAfterOfThe429IsTheSecondsLeftInTheCurrentMinute() {
        Run run = fourRequestsWithinOneMinute();

        HttpResponse<String> refused = run.answers().get(3);
        assertEquals(429, refused.statusCode());
        int retryAfter = Integer.parseInt(refused.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retryAfter >= 1 && retryAfter <= 60, "between 1 and 60: " + retryAfter);
        long atMost = 60 - run.beforeLast().getEpochSecond() % 60;
        long atLeast = 60 - run.afterLast().getEpochSecond() % 60;
        assertTrue(retryAfter >= atLeast && retryAfter <= atMost,
                "Retry-After " + retryAfter + " is the seconds left in the minute, between " + atLeast + " and "
                        + atMost);
    }

    @Test
    void aRequestRefusedByTheQuotaIsNotStored() {
        Run run = fourRequestsWithinOneMinute();

        assertEquals(429, run.answers().get(3).statusCode());
        assertEquals(new Stats(3, 3, 0), run.stats());
    }
}
