package dev.mcpd.http;

import org.apache.camel.Exchange;

/**
 * The content type and content encoding of an ingest request as both roles keep, key and read it: the request's own
 * headers ("" when absent), or for a gRPC Export call those of the OTLP/HTTP request it stands for
 * ({@code application/x-protobuf}, {@code gzip} when its message came compressed).
 */
public record RequestFormat(String contentType, String contentEncoding) {

    public static RequestFormat of(Exchange exchange) {
        GrpcCall call = GrpcCall.of(exchange);
        if (call != null) {
            return new RequestFormat(GrpcCall.PROTOBUF, call.compressed() ? "gzip" : "");
        }
        var request = VertxExchange.request(exchange);
        return new RequestFormat(orEmpty(request.getHeader("Content-Type")),
                orEmpty(request.getHeader("Content-Encoding")));
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
