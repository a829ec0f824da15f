package dev.mcpd.http;

import java.util.Arrays;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.support.SynchronizationAdapter;

/**
 * For a gRPC call, makes its one message the body, as the equivalent OTLP/HTTP request would carry it; an
 * HTTP request passes untouched. A unary call's body is one message behind a five-byte prefix (a compressed flag, a
 * big-endian length); anything else — a short prefix, a length that disagrees with the body, a second message, a
 * compressed message without a {@code grpc-encoding} — is {@code INVALID_ARGUMENT}; a compressed message in an
 * encoding other than gzip is {@code UNIMPLEMENTED}; a message over {@code --max-body-bytes} is
 * {@code RESOURCE_EXHAUSTED}. A compressed message is kept compressed: it becomes a body with
 * {@code Content-Encoding: gzip}.
 *
 * <p>Why not Vert.x's gRPC server ({@code vertx-grpc-server}): it is a request handler that answers the call itself,
 * so gRPC calls would leave the ingest route — the ingest checks, the operators' extension points, the refusal
 * log would all be needed a second time; and its 4.5 reader throws on a compressed message sent without a
 * {@code grpc-encoding}. Reading the prefix here is a few lines; the answers are {@link GrpcAnswer}'s.
 */
public final class GrpcMessageReader implements Processor {

    /** The length prefix of every gRPC message: a compressed flag and a 32-bit length. */
    static final int PREFIX_BYTES = 5;

    private final long maxMessageBytes;
    private final BodyBudget budget;

    GrpcMessageReader(long maxMessageBytes, BodyBudget budget) {
        this.maxMessageBytes = maxMessageBytes;
        this.budget = budget;
    }

    @Override
    public void process(Exchange exchange) {
        GrpcCall call = GrpcCall.of(exchange);
        if (call == null) {
            return;
        }
        byte[] framed = exchange.getIn().getBody(byte[].class);
        if (framed.length < PREFIX_BYTES) {
            throw invalid("a gRPC call carries one length-prefixed message; this one has " + framed.length
                    + " bytes");
        }
        int flag = framed[0] & 0xff;
        long length = ((framed[1] & 0xffL) << 24) | ((framed[2] & 0xffL) << 16) | ((framed[3] & 0xffL) << 8)
                | (framed[4] & 0xffL);
        if (flag > 1) {
            throw invalid("a gRPC message's compressed flag is 0 or 1, not " + flag);
        }
        if (length > maxMessageBytes) {
            throw IngestRefusal.tooLarge(maxMessageBytes);
        }
        long rest = framed.length - PREFIX_BYTES;
        if (length < rest) {
            throw invalid("a unary gRPC call carries exactly one message; more bytes follow it");
        }
        if (length > rest) {
            throw invalid("the gRPC message is shorter than its length prefix says");
        }
        if (flag == 1 && call.messageEncoding().equals("identity")) {
            throw invalid("a compressed gRPC message needs a grpc-encoding");
        }
        if (flag == 1 && !call.messageEncoding().equals("gzip")) {
            throw IngestRefusal.notImplemented("this grpc-encoding is not supported: send gzip or identity");
        }
        exchange.getIn().setBody(copyHeld(exchange, framed));
        GrpcCall.carry(exchange, call.withMessage(flag == 1));
    }

    /** The message's bytes, held against the body budget while the framed body they came from is still alive. */
    private byte[] copyHeld(Exchange exchange, byte[] framed) {
        long bytes = framed.length - PREFIX_BYTES;
        if (!budget.tryTake(bytes)) {
            throw IngestRefusal.unavailable("too many request bodies are being read at once; retry later");
        }
        exchange.getExchangeExtension().addOnCompletion(new SynchronizationAdapter() {
            @Override
            public void onDone(Exchange done) {
                budget.give(bytes);
            }
        });
        return Arrays.copyOfRange(framed, PREFIX_BYTES, framed.length);
    }

    private static IngestRefusal invalid(String reason) {
        return IngestRefusal.badRequest(IngestRefusal.Kind.BAD_BODY, reason);
    }
}
