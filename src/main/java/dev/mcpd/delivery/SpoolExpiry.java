package dev.mcpd.delivery;

import dev.mcpd.config.DurationText;
import dev.mcpd.spool.DeadLetter;
import dev.mcpd.spool.DeadLetters;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.Spool;
import dev.mcpd.spool.SpoolEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --spool-max-age}: an entry that has waited longer is moved to dead/ with the reason
 * {@code expired} — kept, listed and replayable, never dropped. The sweep (route {@code spool-expiry}) takes the
 * expired entries no lane holds; a lane holding one while it waits for an upstream gives it up as a
 * {@link PermanentRefusal} ({@link #refusal}), which the dead-letter step keeps. Either way it is counted here, and
 * each sweep that found any logs one line with the count, not one per entry.
 */
public final class SpoolExpiry implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger("dev.mcpd.delivery.expiry");
    /** Entries taken from the spool at a time, so that a sweep of a large backlog never holds much in memory. */
    private static final int TAKE_AT_ONCE = 64;
    /** What a sender waiting for an expired entry's fate is told ({@code mcpd-relay-wait}). */
    static final int STATUS = 504;

    private final Optional<Duration> maxAge;
    private final Spool spool;
    private final DeadLetters deadLetters;
    private final EntryFates fates;
    private final InstantSource clock;
    private final EntryRecords records;
    private final AtomicLong expired = new AtomicLong();
    private final AtomicLong sinceLastLine = new AtomicLong();

    public SpoolExpiry(Optional<Duration> maxAge, Spool spool, DeadLetters deadLetters, EntryFates fates,
                       EntryRecords records, InstantSource clock) {
        this.records = records;
        this.maxAge = maxAge;
        this.spool = spool;
        this.deadLetters = deadLetters;
        this.fates = fates;
        this.clock = clock;
    }

    /** How often the sweep runs: a tenth of the age, from one second to a minute. */
    public static Duration sweepInterval(Optional<Duration> maxAge) {
        long tenth = maxAge.map(age -> age.toMillis() / 10).orElse(60_000L);
        return Duration.ofMillis(Math.max(1_000, Math.min(60_000, tenth)));
    }

    public boolean enabled() {
        return maxAge.isPresent();
    }

    /** Entries moved to dead/ as expired since start ({@code mcpd_relay_expired_total}). */
    public long expired() {
        return expired.get();
    }

    /** Whether any entry of the shipment has waited longer than the age. */
    boolean anyExpired(Shipment shipment) {
        return maxAge.isPresent() && shipment.entries().stream().anyMatch(this::isExpired);
    }

    private boolean isExpired(SpoolEntry entry) {
        return clock.millis() - entry.request().receivedAtMillis() > maxAge.orElseThrow().toMillis();
    }

    /** Why an expired entry goes to dead/: a refusal by no upstream. */
    PermanentRefusal refusal(SpoolEntry entry) {
        return PermanentRefusal.expired(reason(entry));
    }

    /** The dead-letter step kept an expired entry a lane gave up. */
    void counted() {
        expired.incrementAndGet();
        sinceLastLine.incrementAndGet();
    }

    @Override
    public void process(Exchange exchange) throws IOException {
        if (maxAge.isEmpty()) {
            return;
        }
        long cutoff = clock.millis() - maxAge.get().toMillis();
        List<SpoolEntry> taken;
        do {
            taken = spool.takeReceivedBefore(cutoff, TAKE_AT_ONCE);
            for (int i = 0; i < taken.size(); i++) {
                SpoolEntry entry = taken.get(i);
                try {
                    expire(entry);
                } catch (IOException | RuntimeException e) {
                    taken.subList(i, taken.size()).forEach(left -> spool.release(left.seq()));
                    LOG.error("could not move expired entries to dead/ ({}); they stay in the spool and are tried"
                            + " again at the next sweep", e.toString());
                    line();
                    return;
                }
            }
        } while (taken.size() == TAKE_AT_ONCE);
        line();
    }

    private void expire(SpoolEntry entry) throws IOException {
        String reason = reason(entry);
        deadLetters.keep(entry, PermanentRefusal.expired(reason).refusal(clock.instant()));
        fates.deadLettered(entry.seq(), STATUS, "text/plain; charset=utf-8", reason.getBytes(StandardCharsets.UTF_8));
        spool.done(entry.seq());
        records.finished(entry.seq());
        counted();
    }

    private void line() {
        long count = sinceLastLine.getAndSet(0);
        if (count > 0) {
            LOG.warn("expired {} entr{} that waited longer than --spool-max-age {}: moved to {} (see 'mcpd relay dead"
                    + " list'; replay them with 'mcpd relay dead replay')", count, count == 1 ? "y" : "ies",
                    DurationText.format(maxAge.orElseThrow()), deadLetters.directory());
        }
    }

    private String reason(SpoolEntry entry) {
        long waited = Math.max(0, clock.millis() - entry.request().receivedAtMillis());
        return DeadLetter.EXPIRED + ": waited " + DurationText.format(Duration.ofSeconds(waited / 1000))
                + " in the spool, longer than --spool-max-age " + DurationText.format(maxAge.orElseThrow());
    }
}
