package dev.mcpd.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

/**
 * How every answer is written: the message's headers cleared first (nothing of the request goes back to its sender),
 * then the status, the content type and the body.
 *
 * <p>The body is a {@link ByteBuffer}: the one form platform-http both writes at once and gives a
 * {@code Content-Length}. Any type it does not know — {@code byte[]} included — goes through its fallback, which turns
 * the body into an {@code InputStream} and pumps it into the response through an {@code AsyncInputStream}, several
 * hops between threads per answer (bench/profile.sh: about 7% of the relay's CPU at saturation). A fresh buffer per
 * answer: writing it consumes it.
 */
public final class Answers {

    public static final String TEXT = "text/plain; charset=utf-8";
    public static final String JSON = "application/json";

    private Answers() {
    }

    /** Writes the answer; returns the message, for headers of its own ({@code Retry-After}, {@code mcpd-relay}). */
    public static Message write(Message answer, int status, String contentType, ByteBuffer body) {
        answer.removeHeaders("*");
        answer.setHeader(Exchange.HTTP_RESPONSE_CODE, status);
        answer.setHeader(Exchange.CONTENT_TYPE, contentType);
        answer.setBody(body);
        return answer;
    }

    /** A one-line plain-text answer: {@code line} and a line break. */
    public static Message line(Message answer, int status, String line) {
        return write(answer, status, TEXT, text(line + "\n"));
    }

    public static ByteBuffer of(byte[] bytes) {
        return ByteBuffer.wrap(bytes);
    }

    public static ByteBuffer text(String text) {
        return of(text.getBytes(StandardCharsets.UTF_8));
    }
}
