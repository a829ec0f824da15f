package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import java.time.Instant;
import java.time.InstantSource;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * {@code --quota-per-minute N}: past N ingest requests in the current minute (wall clock, this replica),
 * a request gets 429 with {@code Retry-After} set to the seconds left in the minute. With several replicas, divide
 * the cap you want by their number. 0 means no quota. A relay batch counts as its entries, all or none: a batch that
 * does not fit in what is left of the minute is refused whole (the relay sends it elsewhere or later).
 */
public final class QuotaPerMinute implements Processor {

    private final long quota;
    private final InstantSource clock;
    private long minute = Long.MIN_VALUE;
    private long taken;

    public QuotaPerMinute(long quota, InstantSource clock) {
        this.quota = quota;
        this.clock = clock;
    }

    @Override
    public void process(Exchange exchange) {
        if (quota <= 0) {
            return;
        }
        Instant now = clock.instant();
        if (!take(now, RelayBatchReader.size(exchange))) {
            int secondsLeft = (int) (60 - now.getEpochSecond() % 60);
            throw IngestRefusal.quotaExceeded(quota, secondsLeft);
        }
    }

    private synchronized boolean take(Instant now, int requests) {
        long current = now.getEpochSecond() / 60;
        if (current != minute) {
            minute = current;
            taken = 0;
        }
        if (taken + requests > quota) {
            return false;
        }
        taken += requests;
        return true;
    }
}
