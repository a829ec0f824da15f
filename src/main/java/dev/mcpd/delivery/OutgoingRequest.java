package dev.mcpd.delivery;

import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;

/**
 * The request one attempt sends, whichever upstream it goes to: the method, the headers (nothing but what the
 * delivery rules put there) and the body, which the HTTP client sends as it is.
 */
record OutgoingRequest(HttpMethod method, MultiMap headers, Buffer body) {
}
