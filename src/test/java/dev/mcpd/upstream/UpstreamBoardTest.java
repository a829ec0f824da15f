package dev.mcpd.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class UpstreamBoardTest {

    private static final URI PRIMARY = URI.create("http://mcpd.eu.internal:4317");
    private static final URI SECONDARY = URI.create("http://mcpd.us.internal:4317");
    private static final Duration LATENCY = Duration.ofMillis(12);

    /** A clock the test moves by hand. */
    private static final class MutableClock implements InstantSource {
        private Instant now;

        MutableClock(Instant start) {
            this.now = start;
        }

        @Override
        public Instant instant() {
            return now;
        }

        void advance(Duration by) {
            now = now.plus(by);
        }

        void set(Instant instant) {
            now = instant;
        }
    }

    /** A random source returning whatever the test last set. */
    private static final class FixedRandom implements DoubleSupplier {
        double value;

        FixedRandom(double value) {
            this.value = value;
        }

        @Override
        public double getAsDouble() {
            return value;
        }
    }

    private final Instant start = Instant.parse("2025-03-01T12:00:00Z");
    private final MutableClock clock = new MutableClock(start);
    private final FixedRandom random = new FixedRandom(0.5);
    private final Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), random);
    private final UpstreamBoard board = new UpstreamBoard(List.of(PRIMARY, SECONDARY),
            UpstreamBoard.Settings.defaults(backoff), clock);
    private final Upstream primary = board.upstreams().get(0);
    private final Upstream secondary = board.upstreams().get(1);
    private ExecutorService executor;

    @AfterEach
    void stopExecutor() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    private Duration failWith503(Upstream upstream, Optional<Duration> retryAfter) {
        return board.failed(upstream, "503", OptionalInt.of(503), retryAfter, LATENCY, 1);
    }

    private UpstreamView view(Upstream upstream) {
        return board.views().get(upstream.order() - 1);
    }

    // --- probes -------------------------------------------------------------------------------------------------

    @Test
    void aDeliveryBeforeAnyProbeSaidWhatTheUpstreamOffersAsksForACheckAtOnceAtMostOnceASecond() {
        List<Upstream> asked = new ArrayList<>();
        board.whenOfferUnknown(asked::add);
        board.delivered(primary, 200, LATENCY, 1);
        board.delivered(primary, 200, LATENCY, 1);
        assertEquals(List.of(primary), asked, "once a second at most");
        clock.advance(Duration.ofSeconds(1));
        board.delivered(primary, 200, LATENCY, 1);
        assertEquals(List.of(primary, primary), asked);
        board.offers(primary, new UpstreamOffer(UpstreamOffer.Http2.PRIOR_KNOWLEDGE, true));
        clock.advance(Duration.ofSeconds(1));
        board.delivered(primary, 200, LATENCY, 1);
        assertEquals(List.of(primary, primary), asked, "a probe said what it offers: nothing more to ask");
    }

    @Test
    void goodProbesInARowEndABackoffWaitSoTrafficReturnsToThePrimaryAtOnce() {
        failWith503(primary, Optional.empty()); // backoff: 500 ms with this random
        assertEquals(Optional.of(secondary), board.firstReady());
        board.probed(primary, OptionalInt.of(200), LATENCY);
        assertEquals(Optional.of(secondary), board.firstReady(), "one good check is not the healthy threshold (2)");
        board.probed(primary, OptionalInt.of(200), LATENCY);
        assertEquals(Optional.of(primary), board.firstReady());
        assertTrue(view(primary).waiting().isEmpty());
    }

    @Test
    void failedChecksInARowTakeAnUpstreamOutOfServiceAndDeliveryPassesOverIt() {
        board.probed(primary, OptionalInt.of(503), LATENCY);
        board.probed(primary, OptionalInt.of(503), LATENCY);
        assertTrue(view(primary).checks().inService(), "2 of the 3 failed checks the unhealthy threshold asks");
        board.probed(primary, OptionalInt.empty(), LATENCY);
        assertFalse(view(primary).checks().inService());
        assertTrue(view(primary).waiting().isEmpty(), "out of service is not a wait: no backoff is running");
        assertEquals(Optional.of(secondary), board.firstReady());
        assertEquals(3, view(primary).checks().failuresInARow());
        assertEquals(3, view(primary).checks().failed());
    }

    @Test
    void whenEveryUpstreamIsOutOfServiceDeliveryFailsOpenInOrder() {
        for (int i = 0; i < 3; i++) {
            board.probed(primary, OptionalInt.of(503), LATENCY);
            board.probed(secondary, OptionalInt.of(503), LATENCY);
        }
        assertFalse(view(primary).checks().inService() || view(secondary).checks().inService());
        assertEquals(Optional.of(primary), board.firstReady(), "fail open: the primary first");
    }

    @Test
    void aSuccessStartsTheCountOfFailuresAgain() {
        board.probed(primary, OptionalInt.of(503), LATENCY);
        board.probed(primary, OptionalInt.of(503), LATENCY);
        board.delivered(primary, 200, LATENCY, 1);
        board.probed(primary, OptionalInt.of(503), LATENCY);
        board.probed(primary, OptionalInt.of(503), LATENCY);
        assertTrue(view(primary).checks().inService(), "never 3 failures in a row");
    }

    @Test
    void aGoodProbeNeverEndsAWaitTheUpstreamAskedForWithRetryAfter() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        board.probed(primary, OptionalInt.of(200), LATENCY);
        assertEquals(Optional.of(secondary), board.firstReady());
        assertTrue(view(primary).waiting().isPresent());
    }

    @Test
    void aFailedProbeEndsNoWait() {
        failWith503(primary, Optional.empty());
        board.probed(primary, OptionalInt.of(503), LATENCY);
        board.probed(primary, OptionalInt.empty(), LATENCY);
        assertEquals(Optional.of(secondary), board.firstReady());
    }

    @Test
    void anUpstreamWhoseDeliveriesFailManyTimesInARowIsNotUpHoweverItsProbesAnswer() {
        for (int i = 1; i < UpstreamState.FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES; i++) {
            board.probed(primary, OptionalInt.of(200), LATENCY);
            board.failed(primary, "Http2Exception", OptionalInt.empty(), Optional.empty(), LATENCY, 1);
        }
        assertTrue(view(primary).answers().up(), "a few failed deliveries between good probes");
        board.failed(primary, "Http2Exception", OptionalInt.empty(), Optional.empty(), LATENCY, 1);
        board.probed(primary, OptionalInt.of(200), LATENCY);
        assertFalse(view(primary).answers().up(), "its probes answer, its deliveries have not for many attempts");
        assertFalse(board.anyUp());
        board.delivered(primary, 200, LATENCY, 1);
        assertTrue(view(primary).answers().up());
    }

    @Test
    void waitsTheUpstreamAskedForDoNotOutweighItsProbes() {
        for (int i = 0; i < UpstreamState.FAILED_DELIVERIES_THAT_OUTWEIGH_PROBES; i++) {
            failWith503(primary, Optional.of(Duration.ZERO));
            board.probed(primary, OptionalInt.of(200), LATENCY);
        }
        assertTrue(view(primary).answers().up(), "it answers, and asks for time: it is up");
    }

    // --- order and choice ---------------------------------------------------------------------------------------

    @Test
    void aRequestMovesToTheNextUpstreamEvenWhenTheOneThatFailedDrewAZeroWait() throws Exception {
        random.value = 0.0; // full jitter can draw a wait of nothing
        failWith503(primary, Optional.empty());
        Set<Integer> tried = new HashSet<>(List.of(primary.order()));
        assertEquals(secondary, board.awaitReady(tried, () -> false, Duration.ofMillis(10)));
        assertEquals(Optional.of(primary), board.firstReady(), "other requests may use the primary again");
    }

    @Test
    void aRequestThatFailedEverywhereStartsOverAtTheFirstReadyUpstream() throws Exception {
        Set<Integer> tried = new HashSet<>(List.of(primary.order(), secondary.order()));
        assertEquals(primary, board.awaitReady(tried, () -> false, Duration.ofMillis(10)));
        assertTrue(tried.isEmpty(), "a new round begins");
    }

    @Test
    void aRequestGoesBackToATriedUpstreamWhenTheUntriedOnesAllWait() throws Exception {
        random.value = 0.0;
        failWith503(primary, Optional.empty());
        failWith503(secondary, Optional.of(Duration.ofSeconds(30)));
        Set<Integer> tried = new HashSet<>(List.of(primary.order()));
        assertEquals(primary, board.awaitReady(tried, () -> false, Duration.ofMillis(10)));
    }

    @Test
    void theUpstreamsAreNumberedInTheOrderTheyWereGiven() {
        assertEquals(1, primary.order());
        assertEquals(PRIMARY, primary.url());
        assertEquals(2, secondary.order());
        assertEquals(SECONDARY, secondary.url());
    }

    @Test
    void thePrimaryIsChosenWhileItIsNotWaiting() {
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void thePrimaryIsStillChosenWhenOnlyTheSecondaryWaits() {
        failWith503(secondary, Optional.of(Duration.ofSeconds(30)));
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void aRetryableFailureOfThePrimaryMovesTheNextRequestToTheSecondaryAtOnce() {
        failWith503(primary, Optional.empty());
        assertEquals(Optional.of(secondary), board.firstReady());
    }

    @Test
    void aFailureWithoutAnyAnswerAlsoPutsTheUpstreamIntoAWait() {
        board.failed(primary, "connection refused", OptionalInt.empty(), Optional.empty(), LATENCY, 1);
        assertEquals(Optional.of(secondary), board.firstReady());
    }

    // --- how long a wait lasts ----------------------------------------------------------------------------------

    @Test
    void theWaitIsExactlyTheRetryAfterTheUpstreamNamed() {
        Duration wait = failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        assertEquals(Duration.ofSeconds(30), wait);
        assertEquals(Optional.of(start.plusSeconds(30)), view(primary).waiting().map(w -> w.until()));
    }

    @Test
    void nothingIsSentToTheWaitingPrimaryBeforeItsRetryAfterEnds() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        clock.set(start.plusSeconds(30).minusMillis(1));
        assertEquals(Optional.of(secondary), board.firstReady());
    }

    @Test
    void trafficReturnsToThePrimaryByItselfWhenItsWaitEnds() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        clock.set(start.plusSeconds(30));
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void aRetryAfterOfZeroLeavesTheUpstreamReadyAtOnce() {
        assertEquals(Duration.ZERO, failWith503(primary, Optional.of(Duration.ZERO)));
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void withoutRetryAfterTheWaitIsTheBackoffDraw() {
        random.value = 0.5;
        Duration wait = failWith503(primary, Optional.empty());
        assertEquals(Duration.ofMillis(500), wait, "half of the 1 s ceiling after the first failure");
        clock.advance(Duration.ofMillis(499));
        assertEquals(Optional.of(secondary), board.firstReady());
        clock.advance(Duration.ofMillis(1));
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void aRetryAfterOverridesTheBackoffDraw() {
        random.value = 0.999;
        assertEquals(Duration.ofSeconds(7), failWith503(primary, Optional.of(Duration.ofSeconds(7))));
    }

    @Test
    void consecutiveFailuresDoubleTheBackoffCeilingUpToTheCap() {
        random.value = 0.999999;
        List<Long> expectedMillis = List.of(999L, 1999L, 3999L, 7999L, 15999L, 31999L, 59999L, 59999L);
        for (int i = 0; i < expectedMillis.size(); i++) {
            Duration wait = failWith503(primary, Optional.empty());
            assertEquals(Duration.ofMillis(expectedMillis.get(i)), wait, "wait after failure " + (i + 1));
            clock.advance(wait);
        }
    }

    @Test
    void aDeliveryResetsTheConsecutiveFailuresSoTheBackoffStartsAgainFromTheBase() {
        random.value = 0.999999;
        for (int i = 0; i < 4; i++) {
            clock.advance(failWith503(primary, Optional.empty()));
        }
        board.delivered(primary, 200, LATENCY, 1);
        assertEquals(0, view(primary).answers().consecutiveFailures());
        assertEquals(Duration.ofMillis(999), failWith503(primary, Optional.empty()));
    }

    @Test
    void aDeliveryEndsTheWaitOfThatUpstream() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        board.delivered(primary, 200, LATENCY, 1);
        assertEquals(Optional.of(primary), board.firstReady());
        assertTrue(view(primary).waiting().isEmpty());
    }

    @Test
    void whenEveryUpstreamWaitsNoneIsReady() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        failWith503(secondary, Optional.of(Duration.ofSeconds(10)));
        assertEquals(Optional.empty(), board.firstReady());
    }

    @Test
    void whenEveryUpstreamWaitsTheOneWhoseWaitEndsFirstIsReadyFirst() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        failWith503(secondary, Optional.of(Duration.ofSeconds(10)));
        clock.set(start.plusSeconds(10));
        assertEquals(Optional.of(secondary), board.firstReady());
        clock.set(start.plusSeconds(30));
        assertEquals(Optional.of(primary), board.firstReady());
    }

    @Test
    void aPermanentRefusalDoesNotPutTheUpstreamIntoAWait() {
        board.refusedPermanently(primary, OptionalInt.of(400), LATENCY, 1);
        assertEquals(Optional.of(primary), board.firstReady());
        UpstreamView view = view(primary);
        assertFalse(view.waiting().isPresent());
        assertEquals(Optional.empty(), view.waiting().map(w -> w.until()));
        assertEquals(0, view.answers().consecutiveFailures());
    }

    // --- views --------------------------------------------------------------------------------------------------

    @Test
    void aFreshBoardReportsEveryUpstreamReadyAndUnused() {
        for (UpstreamView view : board.views()) {
            assertFalse(view.waiting().isPresent());
            assertEquals(Optional.empty(), view.waiting().map(w -> w.until()));
            assertEquals(Optional.empty(), view.waiting().map(w -> w.cause()));
            assertEquals(0, view.answers().consecutiveFailures());
            assertEquals(OptionalInt.empty(), view.answers().lastStatus());
            assertEquals(Optional.empty(), view.answers().lastLatency());
            assertEquals(Optional.empty(), view.answers().lastAnswer());
            assertEquals(0, view.answers().delivered());
            assertEquals(0, view.answers().failedAttempts());
        }
        assertEquals(List.of(primary, secondary), board.views().stream().map(UpstreamView::upstream).toList());
    }

    @Test
    void theViewOfAWaitingUpstreamSaysUntilWhenAndWhy() {
        board.failed(primary, "503 Service Unavailable", OptionalInt.of(503), Optional.of(Duration.ofSeconds(30)),
                LATENCY, 1);
        UpstreamView view = view(primary);
        assertTrue(view.waiting().isPresent());
        assertEquals(Optional.of(start.plusSeconds(30)), view.waiting().map(w -> w.until()));
        assertEquals(Optional.of("503 Service Unavailable"), view.waiting().map(w -> w.cause()));
        assertEquals(1, view.answers().consecutiveFailures());
        assertEquals(OptionalInt.of(503), view.answers().lastStatus());
        assertEquals(Optional.of(LATENCY), view.answers().lastLatency());
        assertEquals(Optional.of(start), view.answers().lastAnswer());
        assertEquals(0, view.answers().delivered());
        assertEquals(1, view.answers().failedAttempts());
    }

    @Test
    void theViewOfAnotherUpstreamIsUntouchedByAFailure() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        UpstreamView view = view(secondary);
        assertFalse(view.waiting().isPresent());
        assertEquals(0, view.answers().failedAttempts());
        assertEquals(OptionalInt.empty(), view.answers().lastStatus());
    }

    @Test
    void theViewNoLongerReportsAWaitOnceItHasEndedButKeepsTheFailureCounts() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        clock.advance(Duration.ofSeconds(30));
        UpstreamView view = view(primary);
        assertFalse(view.waiting().isPresent());
        assertEquals(Optional.empty(), view.waiting().map(w -> w.until()));
        assertEquals(Optional.empty(), view.waiting().map(w -> w.cause()));
        assertEquals(1, view.answers().consecutiveFailures());
        assertEquals(1, view.answers().failedAttempts());
    }

    @Test
    void theViewCountsDeliveriesAndFailedAttempts() {
        board.delivered(primary, 200, LATENCY, 1);
        board.delivered(primary, 202, LATENCY, 1);
        failWith503(primary, Optional.of(Duration.ZERO));
        board.refusedPermanently(primary, OptionalInt.of(422), LATENCY, 1);
        board.delivered(primary, 204, Duration.ofMillis(3), 1);
        UpstreamView view = view(primary);
        assertEquals(3, view.answers().delivered());
        assertEquals(2, view.answers().failedAttempts());
        assertEquals(OptionalInt.of(204), view.answers().lastStatus());
        assertEquals(Optional.of(Duration.ofMillis(3)), view.answers().lastLatency());
        assertEquals(0, view.answers().consecutiveFailures());
    }

    @Test
    void theViewCountsConsecutiveFailures() {
        failWith503(primary, Optional.of(Duration.ZERO));
        failWith503(primary, Optional.of(Duration.ZERO));
        failWith503(primary, Optional.of(Duration.ZERO));
        assertEquals(3, view(primary).answers().consecutiveFailures());
        assertEquals(3, view(primary).answers().failedAttempts());
    }

    @Test
    void aPermanentRefusalIsCountedAsAFailedAttemptWithItsStatus() {
        board.refusedPermanently(primary, OptionalInt.of(413), LATENCY, 1);
        UpstreamView view = view(primary);
        assertEquals(1, view.answers().failedAttempts());
        assertEquals(OptionalInt.of(413), view.answers().lastStatus());
        assertEquals(Optional.of(start), view.answers().lastAnswer());
        assertEquals(0, view.answers().delivered());
    }

    @Test
    void aFailureWithoutAnAnswerDoesNotCountAsTheUpstreamAnswering() {
        board.delivered(primary, 200, LATENCY, 1);
        clock.advance(Duration.ofSeconds(5));
        board.failed(primary, "connection refused", OptionalInt.empty(), Optional.empty(), Duration.ofSeconds(2), 1);
        UpstreamView view = view(primary);
        assertEquals(Optional.of(start), view.answers().lastAnswer(), "the last answer is still the delivery");
        assertEquals(OptionalInt.of(200), view.answers().lastStatus());
        assertEquals(Optional.of(Duration.ofSeconds(2)), view.answers().lastLatency());
        assertEquals(Optional.of("connection refused"), view.waiting().map(w -> w.cause()));
    }

    @Test
    void theLastAnswerIsWhenTheUpstreamLastAnswered() {
        clock.advance(Duration.ofSeconds(42));
        board.delivered(secondary, 200, LATENCY, 1);
        assertEquals(Optional.of(start.plusSeconds(42)), view(secondary).answers().lastAnswer());
    }

    // --- awaitReady -------------------------------------------------------------------------------------------

    @Test
    void awaitReadyReturnsTheFirstReadyUpstreamWithoutWaiting() throws InterruptedException {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        AtomicInteger asked = new AtomicInteger();
        Upstream ready = board.awaitReady(() -> asked.incrementAndGet() > 0, Duration.ofMillis(50));
        assertEquals(secondary, ready);
        assertEquals(0, asked.get(), "no stop check is needed when an upstream is ready");
    }

    @Test
    void whenEveryUpstreamWaitsAwaitReadySleepsUntilTheEarliestWaitEndsWithoutBusyLooping() {
        UpstreamBoard real = new UpstreamBoard(List.of(PRIMARY, SECONDARY), UpstreamBoard.Settings.defaults(backoff),
                InstantSource.system());
        Upstream realPrimary = real.upstreams().get(0);
        Upstream realSecondary = real.upstreams().get(1);
        real.failed(realPrimary, "503", OptionalInt.of(503), Optional.of(Duration.ofSeconds(30)), LATENCY, 1);
        real.failed(realSecondary, "503", OptionalInt.of(503), Optional.of(Duration.ofMillis(300)), LATENCY, 1);
        AtomicInteger asked = new AtomicInteger();

        long began = System.nanoTime();
        Upstream ready = assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> real.awaitReady(() -> {
                    asked.incrementAndGet();
                    return false;
                }, Duration.ofMillis(50)));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);

        assertEquals(realSecondary, ready, "the upstream whose wait ends first");
        assertTrue(tookMillis >= 250, "it waited for the wait to end, took " + tookMillis + " ms");
        assertTrue(asked.get() < 20, "checked " + asked.get() + " times in " + tookMillis + " ms: a busy loop");
        assertTrue(asked.get() >= 2, "the stop request is checked while sleeping, checked " + asked.get());
    }

    @Test
    void aStopRequestedWhileEveryUpstreamWaitsEndsAwaitReadyPromptly() {
        UpstreamBoard real = new UpstreamBoard(List.of(PRIMARY, SECONDARY), UpstreamBoard.Settings.defaults(backoff),
                InstantSource.system());
        for (Upstream upstream : real.upstreams()) {
            real.failed(upstream, "503", OptionalInt.of(503), Optional.of(Duration.ofMinutes(10)), LATENCY, 1);
        }
        AtomicInteger asked = new AtomicInteger();

        long began = System.nanoTime();
        DeliveryStopped stopped = assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> assertThrows(DeliveryStopped.class,
                        () -> real.awaitReady(() -> asked.incrementAndGet() >= 3, Duration.ofMillis(50))));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);

        assertEquals(3, asked.get(), "gives up at the first check that sees the stop");
        assertTrue(tookMillis < 2000, "took " + tookMillis + " ms, the waits were 10 minutes");
        assertEquals("the relay is stopping", stopped.getMessage());
    }

    @Test
    void closingTheBoardWakesAWaiterWhichThenStops() throws Exception {
        UpstreamBoard real = new UpstreamBoard(List.of(PRIMARY, SECONDARY), UpstreamBoard.Settings.defaults(backoff),
                InstantSource.system());
        for (Upstream upstream : real.upstreams()) {
            real.failed(upstream, "503", OptionalInt.of(503), Optional.of(Duration.ofMinutes(10)), LATENCY, 1);
        }
        CountDownLatch aboutToSleep = new CountDownLatch(1);
        executor = Executors.newSingleThreadExecutor();
        // checkEvery of a minute: only close() can end this wait within the test's few seconds
        Future<Upstream> waiter = executor.submit(() -> real.awaitReady(() -> {
            aboutToSleep.countDown();
            return false;
        }, Duration.ofMinutes(1)));
        assertTrue(aboutToSleep.await(5, TimeUnit.SECONDS), "the waiter started waiting");

        // the waiter holds the board's lock until it sleeps on it, so close() signals a sleeping waiter
        long began = System.nanoTime();
        real.close();
        ExecutionException failure = assertThrows(ExecutionException.class, () -> waiter.get(5, TimeUnit.SECONDS));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);

        assertInstanceOf(DeliveryStopped.class, failure.getCause());
        assertTrue(tookMillis < 5000, "woken by close(), took " + tookMillis + " ms");
    }

    @Test
    void afterCloseAwaitReadyGivesUpAtOnceWhenEveryUpstreamWaits() {
        failWith503(primary, Optional.of(Duration.ofSeconds(30)));
        failWith503(secondary, Optional.of(Duration.ofSeconds(30)));
        board.close();
        assertThrows(DeliveryStopped.class, () -> board.awaitReady(() -> false, Duration.ofMinutes(1)));
    }

    @Test
    void aNewShorterWaitWakesASleepingWaiterSoItDoesNotOversleep() throws Exception {
        // Both upstreams wait 10 minutes and the waiter sleeps up to a minute; a new failure of the secondary with
        // Retry-After 0 replaces its wait, and failed() signals the waiter, which takes the secondary at once.
        UpstreamBoard real = new UpstreamBoard(List.of(PRIMARY, SECONDARY), UpstreamBoard.Settings.defaults(backoff),
                InstantSource.system());
        Upstream realPrimary = real.upstreams().get(0);
        Upstream realSecondary = real.upstreams().get(1);
        real.failed(realPrimary, "503", OptionalInt.of(503), Optional.of(Duration.ofMinutes(10)), LATENCY, 1);
        real.failed(realSecondary, "503", OptionalInt.of(503), Optional.of(Duration.ofMinutes(10)), LATENCY, 1);
        AtomicInteger asked = new AtomicInteger();
        CountDownLatch firstCheck = new CountDownLatch(1);
        executor = Executors.newSingleThreadExecutor();
        Future<Upstream> waiter = executor.submit(() -> real.awaitReady(() -> {
            asked.incrementAndGet();
            firstCheck.countDown();
            return false;
        }, Duration.ofMinutes(1)));
        assertTrue(firstCheck.await(5, TimeUnit.SECONDS));

        real.failed(realSecondary, "timeout", OptionalInt.empty(), Optional.of(Duration.ZERO), LATENCY, 1);

        assertEquals(realSecondary, waiter.get(5, TimeUnit.SECONDS));
        assertEquals(1, asked.get(), "woken by the signal, not by a timeout");
    }
}
