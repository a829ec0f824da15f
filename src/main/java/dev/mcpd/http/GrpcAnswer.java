package dev.mcpd.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

/**
 * The answers to a gRPC call, in gRPC's terms: HTTP 200, {@code application/grpc}, and the outcome in the
 * trailers — {@code grpc-status}, {@code grpc-message} (percent-encoded), and for a refusal the sender should retry a
 * {@code grpc-status-details-bin} with a {@code google.rpc.RetryInfo}, which is how OTLP exporters learn when to
 * come back. A refusal's gRPC status follows from its HTTP status, so every refusal of both roles has one.
 */
public final class GrpcAnswer {

    /** The gRPC status codes mcpd answers with. */
    enum Status {
        OK(0), INVALID_ARGUMENT(3), DEADLINE_EXCEEDED(4), PERMISSION_DENIED(7), RESOURCE_EXHAUSTED(8),
        UNIMPLEMENTED(12), INTERNAL(13), UNAVAILABLE(14), UNAUTHENTICATED(16);

        final int code;

        Status(int code) {
            this.code = code;
        }
    }

    static final String CONTENT_TYPE = "application/grpc";
    private static final String RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

    private GrpcAnswer() {
    }

    /** {@code OK} with an empty export response: the call's message is durable (or archived). */
    public static Message ok(Exchange exchange) {
        return ok(exchange, new byte[0]);
    }

    /** {@code OK} with this (uncompressed) response message: an upstream's own {@code Export*ServiceResponse}. */
    public static Message ok(Exchange exchange, byte[] responseMessage) {
        byte[] framed = new byte[GrpcMessageReader.PREFIX_BYTES + responseMessage.length];
        framed[1] = (byte) (responseMessage.length >>> 24);
        framed[2] = (byte) (responseMessage.length >>> 16);
        framed[3] = (byte) (responseMessage.length >>> 8);
        framed[4] = (byte) responseMessage.length;
        System.arraycopy(responseMessage, 0, framed, GrpcMessageReader.PREFIX_BYTES, responseMessage.length);
        Message answer = Answers.write(exchange.getMessage(), 200, CONTENT_TYPE, Answers.of(framed));
        answer.setHeader("grpc-accept-encoding", "gzip");
        VertxExchange.response(exchange).putTrailer("grpc-status", Integer.toString(Status.OK.code));
        return answer;
    }

    /** An upstream's refusal of the call's message, as the gRPC status of its HTTP status, with one line of it. */
    public static Message upstreamRefused(Exchange exchange, int httpStatus, String message) {
        Message answer = Answers.write(exchange.getMessage(), 200, CONTENT_TYPE, Answers.of(new byte[0]));
        answer.setHeader("grpc-accept-encoding", "gzip");
        var response = VertxExchange.response(exchange);
        response.putTrailer("grpc-status", Integer.toString(statusOf(httpStatus).code));
        response.putTrailer("grpc-message", percentEncoded(message));
        return answer;
    }

    /** The refusal, as a gRPC status with its one-line reason: no message, nothing written. */
    static void refused(Exchange exchange, IngestRefusal refusal) {
        Status status = statusOf(refusal.status());
        Message answer = Answers.write(exchange.getMessage(), 200, CONTENT_TYPE, Answers.of(new byte[0]));
        answer.setHeader("grpc-accept-encoding", "gzip");
        var response = VertxExchange.response(exchange);
        response.putTrailer("grpc-status", Integer.toString(status.code));
        response.putTrailer("grpc-message", percentEncoded(refusal.reason()));
        refusal.retryAfterSeconds().ifPresent(seconds -> response.putTrailer("grpc-status-details-bin",
                Base64.getEncoder().withoutPadding().encodeToString(
                        statusWithRetryInfo(status, refusal.reason(), seconds))));
    }

    /** gRPC's own reading of HTTP statuses, made exact for the refusals mcpd gives. */
    static Status statusOf(int httpStatus) {
        return switch (httpStatus) {
            case 400, 415 -> Status.INVALID_ARGUMENT;
            case 401 -> Status.UNAUTHENTICATED;
            case 403 -> Status.PERMISSION_DENIED;
            case 404, 405, 501 -> Status.UNIMPLEMENTED;
            case 408 -> Status.DEADLINE_EXCEEDED;
            case 413, 429 -> Status.RESOURCE_EXHAUSTED;
            case 503 -> Status.UNAVAILABLE;
            default -> Status.INTERNAL;
        };
    }

    /** gRPC's {@code grpc-message} encoding: UTF-8, every byte outside printable ASCII and {@code %} as {@code %XX}. */
    static String percentEncoded(String message) {
        StringBuilder encoded = new StringBuilder(message.length());
        for (byte b : message.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 0x20 && c <= 0x7e && c != '%') {
                encoded.append((char) c);
            } else {
                encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return encoded.toString();
    }

    /**
     * A {@code google.rpc.Status} {code, message, details: [Any(RetryInfo{retry_delay: seconds})]} in protobuf's
     * wire format — a fixed shape of six fields, written here rather than by adding protobuf-java for it.
     */
    static byte[] statusWithRetryInfo(Status status, String message, int retryDelaySeconds) {
        byte[] duration = field(new ByteArrayOutputStream(), 1, retryDelaySeconds).toByteArray(); // seconds
        byte[] retryInfo = bytesField(new ByteArrayOutputStream(), 1, duration).toByteArray();    // retry_delay
        ByteArrayOutputStream any = new ByteArrayOutputStream();
        bytesField(any, 1, RETRY_INFO_TYPE.getBytes(StandardCharsets.US_ASCII));                   // type_url
        bytesField(any, 2, retryInfo);                                                              // value
        ByteArrayOutputStream statusBytes = new ByteArrayOutputStream();
        field(statusBytes, 1, status.code);                                                         // code
        bytesField(statusBytes, 2, message.getBytes(StandardCharsets.UTF_8));                       // message
        bytesField(statusBytes, 3, any.toByteArray());                                              // details
        return statusBytes.toByteArray();
    }

    /** A varint field (wire type 0) of a non-negative value. */
    private static ByteArrayOutputStream field(ByteArrayOutputStream out, int number, long value) {
        varint(out, (long) number << 3);
        varint(out, value);
        return out;
    }

    /** A length-delimited field (wire type 2). */
    private static ByteArrayOutputStream bytesField(ByteArrayOutputStream out, int number, byte[] bytes) {
        varint(out, ((long) number << 3) | 2);
        varint(out, bytes.length);
        out.writeBytes(bytes);
        return out;
    }

    private static void varint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7fL) != 0) {
            out.write((int) ((value & 0x7f) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }
}
