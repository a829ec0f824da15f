package dev.mcpd.wire;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The headers of a Kafka record that carries one request: what a collector needs to archive it as the request it
 * was. The record's value is the body bytes exactly, its key the idempotency key. Values are UTF-8 text; the
 * receive time is decimal epoch milliseconds. The sender's headers the relay forwards ({@code --forward-header}) come
 * after them under their own names. No credential is ever among them: a sender is named by its
 * credential's digest.
 */
public final class KafkaRecordHeaders {

    public static final String METHOD = "mcpd-method";
    public static final String TARGET = "mcpd-target";
    public static final String CONTENT_TYPE = "content-type";
    /** Only when the request had one. */
    public static final String CONTENT_ENCODING = "content-encoding";
    public static final String IDEMPOTENCY_KEY = "idempotency-key";
    public static final String RECEIVED_AT = "mcpd-received-at";
    /**
     * Whose keys the record's are ({@link SenderDigest}): only when the request presented a credential, or the relay
     * its {@code --upstream-key} — what an HTTP upstream would have seen.
     */
    public static final String SENDER = "mcpd-sender";

    private KafkaRecordHeaders() {
    }

    /** The headers of the record for a request; {@code contentType} and {@code contentEncoding} may be "". */
    public static Map<String, String> of(String method, String target, String contentType, String contentEncoding,
                                         String idempotencyKey, long receivedAtMillis) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(METHOD, method);
        headers.put(TARGET, target);
        headers.put(CONTENT_TYPE, contentType);
        if (!contentEncoding.isEmpty()) {
            headers.put(CONTENT_ENCODING, contentEncoding);
        }
        headers.put(IDEMPOTENCY_KEY, idempotencyKey);
        headers.put(RECEIVED_AT, Long.toString(receivedAtMillis));
        return headers;
    }
}
