package dev.mcpd.http;

import java.util.Locale;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

/** What both roles know of OTLP/HTTP: its export paths, and the answer an OpenTelemetry exporter expects. */
public final class Otlp {

    private static final Set<String> EXPORT_PATHS = Set.of("/v1/traces", "/v1/logs", "/v1/metrics");
    static final String JSON_PARTIAL_SUCCESS = "{\"partialSuccess\":{}}";

    private Otlp() {
    }

    /** {@code /v1/traces}, {@code /v1/logs}, {@code /v1/metrics}: answered with an OTLP partial-success response. */
    public static boolean isExportPath(String path) {
        return EXPORT_PATHS.contains(path);
    }

    /**
     * The answer an OpenTelemetry exporter expects: 200 with an empty partial-success response, JSON when the request
     * was JSON, else protobuf (an empty {@code Export*ServiceResponse}: all its fields absent, zero bytes); to a gRPC
     * Export call, {@code OK} with that empty response. Returns the message, for headers of its own.
     */
    public static Message partialSuccess(Exchange exchange) {
        if (GrpcCall.of(exchange) != null) {
            return GrpcAnswer.ok(exchange);
        }
        Message answer = exchange.getMessage();
        String requestContentType = VertxExchange.request(exchange).getHeader("Content-Type");
        if (requestContentType != null && requestContentType.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            return Answers.write(answer, 200, Answers.JSON, Answers.text(JSON_PARTIAL_SUCCESS));
        }
        return Answers.write(answer, 200, "application/x-protobuf", Answers.of(new byte[0]));
    }
}
