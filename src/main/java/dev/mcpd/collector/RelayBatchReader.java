package dev.mcpd.collector;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.http.VertxExchange;
import dev.mcpd.store.ReadEntry;
import dev.mcpd.wire.RelayBatch;
import dev.mcpd.wire.RequestTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

/**
 * Reads a relay batch ({@link RelayBatch}, POST {@code /v1/relay-batches}) into its entries, each judged as the same
 * request sent alone would be — its target, its size, its body read as a native batch or taken as an OTLP export —
 * so one bad entry is refused alone and the others are archived. Framing that cannot be read refuses the whole
 * batch: 400, or 413 when it inflates past {@code --max-body-bytes} (plus what the framing itself adds). Each entry
 * is archived with the relay's receive time ({@link #receivedAt}).
 */
public final class RelayBatchReader implements Processor {

    /** Exchange property holding the {@code List<ReadEntry>}. */
    static final String ENTRIES = "mcpd.relay-batch";

    private final BatchReader reader;
    private final long maxBodyBytes;

    public RelayBatchReader(BatchReader reader, long maxBodyBytes) {
        this.reader = reader;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public void process(Exchange exchange) {
        var request = VertxExchange.request(exchange);
        if (!RelayBatch.CONTENT_TYPE.equals(request.getHeader("Content-Type"))) {
            throw IngestRefusal.badRequest(IngestRefusal.Kind.MALFORMED_BATCH,
                    RelayBatch.PATH + " takes " + RelayBatch.CONTENT_TYPE);
        }
        String encoding = request.getHeader("Content-Encoding") == null ? "" : request.getHeader("Content-Encoding");
        List<RelayBatch.Entry> entries;
        try {
            entries = RelayBatch.decode(exchange.getIn().getBody(byte[].class), encoding,
                    maxBodyBytes + RelayBatch.FRAMING_ALLOWANCE);
        } catch (RelayBatch.Malformed e) {
            throw IngestRefusal.badRequest(IngestRefusal.Kind.MALFORMED_BATCH, e.getMessage());
        } catch (RelayBatch.TooLarge e) {
            throw IngestRefusal.tooLargeDecompressed(maxBodyBytes + RelayBatch.FRAMING_ALLOWANCE);
        }
        long received = exchange.getClock().getCreated();
        List<ReadEntry> judged = new ArrayList<>(entries.size());
        for (RelayBatch.Entry entry : entries) {
            judged.add(judge(entry, received));
        }
        exchange.setProperty(ENTRIES, judged);
    }

    ReadEntry judge(RelayBatch.Entry entry, long received) {
        try {
            if (!entry.method().equals("POST")) {
                throw IngestRefusal.notAllowed("ingest takes POST");
            }
            RequestTarget target;
            try {
                target = RequestTarget.parse(entry.target());
            } catch (RequestTarget.InvalidTarget e) {
                throw IngestRefusal.badRequest(IngestRefusal.Kind.BAD_TARGET, e.getMessage());
            }
            CollectorTargetCheck.check(target);
            if (entry.body().length > maxBodyBytes) {
                throw IngestRefusal.tooLarge(maxBodyBytes);
            }
            return ReadEntry.readable(reader.read(target, entry.contentType(), entry.contentEncoding(),
                    Optional.of(entry.idempotencyKey()), receivedAt(entry, received), entry.body()));
        } catch (IngestRefusal refusal) {
            return ReadEntry.refused(refusal.status(), refusal.reason());
        }
    }

    /**
     * When the entry was received, as archived ({@code received_at_ms}), by this host's clock: the time the batch
     * arrived less how long the relay says it held the entry — never the relay's own clock, which may be days off
     * (retention would delete a late relay's entries at once, and keep an early one's for ever). From a relay that
     * does not say it: the relay's receive time, never later than the batch's arrival; else (missing, or 0) the
     * batch's arrival.
     */
    static long receivedAt(RelayBatch.Entry entry, long batchReceivedAtMillis) {
        if (entry.heldMillis() >= 0) {
            return batchReceivedAtMillis - Math.min(entry.heldMillis(), batchReceivedAtMillis);
        }
        return entry.receivedAtMillis() > 0 ? Math.min(entry.receivedAtMillis(), batchReceivedAtMillis)
                : batchReceivedAtMillis;
    }

    /** How many entries the batch holds, for the quota: set once it was read. */
    static int size(Exchange exchange) {
        List<?> entries = exchange.getProperty(ENTRIES, List.class);
        return entries == null ? 1 : entries.size();
    }
}
