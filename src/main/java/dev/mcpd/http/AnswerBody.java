package dev.mcpd.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * An answer's body in the one form platform-http both writes at once and gives a {@code Content-Length}: a
 * {@link ByteBuffer}. Any type it does not know — {@code byte[]} included — goes through its fallback, which turns the
 * body into an {@code InputStream} and pumps it into the response through an {@code AsyncInputStream}, several hops
 * between threads per answer (bench/profile.sh: about 7% of the relay's CPU at saturation). A fresh buffer per answer:
 * writing it consumes it.
 */
public final class AnswerBody {

    private AnswerBody() {
    }

    public static ByteBuffer of(byte[] bytes) {
        return ByteBuffer.wrap(bytes);
    }

    public static ByteBuffer text(String text) {
        return of(text.getBytes(StandardCharsets.UTF_8));
    }
}
