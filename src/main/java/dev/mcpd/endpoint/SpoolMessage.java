package dev.mcpd.endpoint;

import dev.mcpd.config.Streams;
import dev.mcpd.spool.EntryFates;
import dev.mcpd.spool.SpoolRequest;
import dev.mcpd.wire.DerivedIdempotencyKey;
import dev.mcpd.wire.FieldContent;
import dev.mcpd.wire.RequestTarget;
import dev.mcpd.wire.SenderIdempotencyKey;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

/**
 * What a message sent to {@code spool:NAME} says, and what the producer leaves on it.
 *
 * <p>A {@link SpoolRequest} body is written as it is: the relay's ingest route puts one there, built from what the
 * sender sent. Any other message is written as a POST of its body (bytes, or what Camel converts to bytes) to the path
 * and query in {@value #TARGET}, with its {@code Content-Type} and {@code Content-Encoding}, its
 * {@code Idempotency-Key} (or one derived from the target, the encoding and the body, as for a sender that sent none),
 * no credential and no forwarded header; {@code X-Prometheus-Remote-Write-Version} makes it part of an ordered stream.
 * A message that cannot be written so (no target, a header that could not be sent upstream, a body past
 * {@code --max-body-bytes}) fails with {@link IllegalArgumentException} and nothing is written.
 *
 * <p>Once the entry is durable, header {@value #SEQ} holds its sequence number; when the exchange asked for it
 * ({@link #awaitFate}), {@link #fate} is the future of what becomes of it (delivered, or moved to dead/).
 */
public final class SpoolMessage {

    /** The path and query the entry is delivered to, as the relay keeps and forwards them. */
    public static final String TARGET = "McpdTarget";
    /** The entry's sequence number in the spool, set once it is durable. */
    public static final String SEQ = "McpdSeq";
    /** Exchange properties, never headers: a sender cannot set them. */
    private static final String AWAIT_FATE = "mcpd.awaitFate";
    private static final String FATE = "mcpd.fate";

    private SpoolMessage() {
    }

    /** Asks the producer to register the entry's fate before delivery can take it ({@code mcpd-relay-wait}). */
    public static void awaitFate(Exchange exchange) {
        exchange.setProperty(AWAIT_FATE, Boolean.TRUE);
    }

    /** The entry's sequence number, once the spool wrote it. */
    public static long seq(Exchange exchange) {
        return exchange.getMessage().getHeader(SEQ, Long.class);
    }

    /** The future fate of the entry, when the exchange asked for it ({@link #awaitFate}). */
    @SuppressWarnings("unchecked")
    public static Optional<CompletableFuture<EntryFates.Fate>> fate(Exchange exchange) {
        return Optional.ofNullable(exchange.getProperty(FATE, CompletableFuture.class));
    }

    static boolean awaitsFate(Exchange exchange) {
        return Boolean.TRUE.equals(exchange.getProperty(AWAIT_FATE, Boolean.class));
    }

    static void setFate(Exchange exchange, CompletableFuture<EntryFates.Fate> fate) {
        exchange.setProperty(FATE, fate);
    }

    /** The request the message stands for (see the class comment). */
    static SpoolRequest request(Exchange exchange, long maxBodyBytes) {
        Message message = exchange.getIn();
        if (message.getBody() instanceof SpoolRequest request) {
            return request;
        }
        String rawTarget = message.getHeader(TARGET, String.class);
        if (rawTarget == null) {
            throw refused("no " + TARGET + " header: the path (and query) the entry is delivered to");
        }
        String target;
        try {
            target = RequestTarget.parse(rawTarget).text();
        } catch (RequestTarget.InvalidTarget e) {
            throw refused(TARGET + " is not a path and query: " + e.getMessage());
        }
        byte[] body = message.getBody(byte[].class);
        if (body == null) {
            throw refused("the message has no body");
        }
        if (body.length > maxBodyBytes) {
            throw refused("the body is " + body.length + " bytes, past --max-body-bytes (" + maxBodyBytes + ")");
        }
        String contentType = field(message, "Content-Type");
        String contentEncoding = field(message, "Content-Encoding");
        String key = message.getHeader(SenderIdempotencyKey.HEADER, String.class);
        if (key == null) {
            key = DerivedIdempotencyKey.of(target, contentEncoding, body);
        } else if (!SenderIdempotencyKey.isValid(key)) {
            throw refused(SenderIdempotencyKey.RULE);
        }
        return new SpoolRequest("POST", target, contentType, contentEncoding, key, Optional.empty(),
                exchange.getClock().getCreated(), body, List.of(),
                message.getHeader(Streams.REMOTE_WRITE_VERSION) != null);
    }

    private static String field(Message message, String name) {
        String value = message.getHeader(name, "", String.class);
        if (!FieldContent.isValid(value)) {
            throw refused(name + " holds a control character (CR, LF, NUL, …): it could not be sent upstream");
        }
        return value;
    }

    private static IllegalArgumentException refused(String why) {
        return new IllegalArgumentException("spool: cannot write the message: " + why);
    }
}
