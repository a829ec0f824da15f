package dev.mcpd.ingest;

import dev.mcpd.delivery.EntryFates;
import dev.mcpd.http.Answers;
import dev.mcpd.http.GrpcAnswer;
import dev.mcpd.http.GrpcCall;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * For a sender that asked with {@code mcpd-relay-wait} (SPEC §10.4), after its entry is durable: waits for the
 * entry's fate up to the duration and answers with it — the upstream's own status, content type and body when
 * delivered ({@code mcpd-relay: delivered}), its refusal when dead-lettered ({@code mcpd-relay: dead-lettered}); when
 * the time is up, the ordinary answer stands ({@code mcpd-relay: spooled}). A gRPC call gets the upstream's response
 * message, or its refusal as a gRPC status.
 *
 * <p>A waiting sender holds one of the HTTP worker threads; so that ingest never runs out of them, at most
 * {@link #MAX_WAITING} senders wait at once, and one more gets the ordinary answer at once.
 */
public final class AwaitedAnswer implements Processor {

    /** Senders waiting at once, at most: well below the 200 HTTP worker threads, which ingest needs. */
    public static final int MAX_WAITING = 64;

    private final EntryFates fates;
    private final Semaphore waiting = new Semaphore(MAX_WAITING);

    public AwaitedAnswer(EntryFates fates) {
        this.fates = fates;
    }

    @Override
    public void process(Exchange exchange) throws InterruptedException {
        @SuppressWarnings("unchecked")
        CompletableFuture<EntryFates.Fate> fate = exchange.getProperty(SpoolWriteStep.FATE, CompletableFuture.class);
        Duration wait = exchange.getProperty(WaitRequest.PROPERTY, Duration.class);
        if (fate == null || wait == null) {
            return;
        }
        long seq = exchange.getProperty(SpoolWriteStep.SEQ, Long.class);
        if (!waiting.tryAcquire()) {
            fates.forget(seq);
            return;
        }
        EntryFates.Fate known;
        try {
            known = fate.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            fates.forget(seq);
            return; // spooled, and delivered later
        } catch (ExecutionException e) {
            return;
        } finally {
            waiting.release();
        }
        Message answer = exchange.getMessage();
        Object seqHeader = answer.getHeader(IngestAnswer.SEQ_HEADER);
        Object idHeader = answer.getHeader(IngestAnswer.ID_HEADER);
        if (GrpcCall.of(exchange) != null) {
            answer = known.deadLettered() || known.status() / 100 != 2
                    ? GrpcAnswer.upstreamRefused(exchange, known.status(), firstLine(known.body()))
                    : GrpcAnswer.ok(exchange, known.contentType().startsWith("application/x-protobuf")
                            ? known.body() : new byte[0]);
        } else {
            answer = Answers.write(answer, known.status(), known.contentType().isEmpty()
                    ? "application/octet-stream" : known.contentType(), Answers.of(known.body()));
        }
        answer.setHeader("mcpd-relay", known.deadLettered() ? "dead-lettered" : "delivered");
        answer.setHeader(IngestAnswer.SEQ_HEADER, seqHeader);
        answer.setHeader(IngestAnswer.ID_HEADER, idHeader);
    }

    private static String firstLine(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8).strip();
        int end = text.indexOf('\n');
        String line = end < 0 ? text : text.substring(0, end).strip();
        return line.length() > 300 ? line.substring(0, 300) + "…" : line;
    }
}
