package dev.mcpd.delivery;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hc.core5.http.io.entity.AbstractHttpEntity;

/**
 * A stored request's body as camel-http sends it: the bytes as received, with the content type and content encoding
 * strings as received. Handing camel-http an entity (rather than a byte[] and headers) keeps it from reformatting the
 * content type ({@code a;b=c} becomes {@code a; b=c}) and from gzip-compressing a body whose encoding is already gzip
 * — both found by the delivery tests.
 */
final class StoredBody extends AbstractHttpEntity {

    private final byte[] body;

    StoredBody(byte[] body, String contentType, String contentEncoding) {
        super(contentType.isEmpty() ? null : contentType, contentEncoding.isEmpty() ? null : contentEncoding, false);
        this.body = body;
    }

    @Override
    public InputStream getContent() {
        return new ByteArrayInputStream(body);
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
        out.write(body);
    }

    @Override
    public long getContentLength() {
        return body.length;
    }

    @Override
    public boolean isRepeatable() {
        return true;
    }

    @Override
    public boolean isStreaming() {
        return false;
    }

    @Override
    public void close() {
    }
}
