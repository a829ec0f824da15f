package dev.mcpd.wire;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/** What both roles know of OTLP/HTTP: its export paths, and the form of the answer an OpenTelemetry exporter expects. */
public final class Otlp {

    private static final Set<String> EXPORT_PATHS = Set.of("/v1/traces", "/v1/logs", "/v1/metrics");
    static final String JSON_PARTIAL_SUCCESS = "{\"partialSuccess\":{}}";

    private Otlp() {
    }

    /** {@code /v1/traces}, {@code /v1/logs}, {@code /v1/metrics}: answered with an OTLP partial-success response. */
    public static boolean isExportPath(String path) {
        return EXPORT_PATHS.contains(path);
    }

    /** The content type of the answer to an OTLP request of this content type: JSON for JSON, else protobuf. */
    public static String answerContentType(String requestContentType) {
        return isJson(requestContentType) ? "application/json" : "application/x-protobuf";
    }

    /** An empty partial-success response in the answer's form: {@code {"partialSuccess":{}}}, or zero bytes. */
    public static byte[] emptyAnswer(String requestContentType) {
        return isJson(requestContentType) ? JSON_PARTIAL_SUCCESS.getBytes(StandardCharsets.UTF_8) : new byte[0];
    }

    private static boolean isJson(String contentType) {
        return contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/json");
    }
}
