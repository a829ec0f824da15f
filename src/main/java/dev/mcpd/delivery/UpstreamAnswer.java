package dev.mcpd.delivery;

/**
 * What came back from one attempt: the upstream's answer, or why there was none.
 *
 * @param status      the HTTP status, or 0 when there was no answer
 * @param contentType the answer's {@code Content-Type}, or null
 * @param retryAfter  its {@code Retry-After}, or null
 * @param body        the answer's body (at most {@link UpstreamHttp#MAX_ANSWER_BYTES}); empty when there was none
 * @param failure     why there was no answer (a refused connection, a timeout, an answer too large), or null
 */
record UpstreamAnswer(int status, String contentType, String retryAfter, byte[] body, Throwable failure) {

    static final byte[] NO_BODY = new byte[0];

    static UpstreamAnswer failed(Throwable failure) {
        return new UpstreamAnswer(0, null, null, NO_BODY, failure);
    }
}
