package dev.mcpd.http;

import io.vertx.core.http.HttpServerRequest;
import java.util.Locale;
import java.util.Map;
import org.apache.camel.Exchange;

/**
 * An OTLP/gRPC Export call, taken on the same listener as HTTP: a gRPC call is an HTTP/2 {@code POST} with
 * {@code Content-Type: application/grpc}, its path naming the method, its body one length-prefixed message. Both
 * roles take it as the OTLP/HTTP request it is equivalent to — {@code POST /v1/traces|metrics|logs},
 * {@code application/x-protobuf}, the message bytes, {@code Content-Encoding: gzip} when the message came gzip-encoded
 * — so keys, the spool, delivery and the store see no difference; only the answer is given in gRPC's terms
 * ({@link GrpcAnswer}).
 *
 * @param method           the gRPC method, as its path ({@code /opentelemetry.proto.collector.trace.v1.TraceService/Export})
 * @param equivalentPath   the OTLP/HTTP path it stands for, or null for a method that is not an OTLP Export
 * @param messageEncoding  {@code grpc-encoding} as sent, or {@code identity}
 * @param protobuf         true when its messages are protobuf ({@code application/grpc}, {@code application/grpc+proto})
 * @param compressed       true once its message was read and found compressed (with {@code messageEncoding})
 */
public record GrpcCall(String method, String equivalentPath, String messageEncoding, boolean protobuf,
                       boolean compressed) {

    /** Exchange property holding the call, set by the first ingest step for a gRPC call only. */
    private static final String PROPERTY = "mcpd.grpcCall";
    /** The content type of the message an Export call carries, as OTLP/HTTP sends it. */
    public static final String PROTOBUF = "application/x-protobuf";

    private static final Map<String, String> EXPORT_METHODS = Map.of(
            "/opentelemetry.proto.collector.trace.v1.TraceService/Export", "/v1/traces",
            "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", "/v1/metrics",
            "/opentelemetry.proto.collector.logs.v1.LogsService/Export", "/v1/logs");

    /**
     * True for a request that says it is a gRPC call: its content type is {@code application/grpc}, alone or with a
     * {@code +codec} or parameters. gRPC-Web ({@code application/grpc-web…}) is another protocol and is not one.
     */
    public static boolean isGrpc(HttpServerRequest request) {
        String type = request.getHeader("Content-Type");
        if (type == null) {
            return false;
        }
        String lower = type.strip().toLowerCase(Locale.ROOT);
        return lower.equals("application/grpc") || lower.startsWith("application/grpc+")
                || lower.startsWith("application/grpc;");
    }

    /** The call a gRPC request makes; the caller has checked {@link #isGrpc}. */
    static GrpcCall of(HttpServerRequest request) {
        String type = request.getHeader("Content-Type").strip().toLowerCase(Locale.ROOT);
        String encoding = request.getHeader("grpc-encoding");
        return new GrpcCall(request.path(), EXPORT_METHODS.get(request.path()),
                encoding == null ? "identity" : encoding.strip().toLowerCase(Locale.ROOT),
                type.equals("application/grpc") || type.startsWith("application/grpc;")
                        || type.startsWith("application/grpc+proto"), false);
    }

    /** This call, its message read: compressed or not. */
    GrpcCall withMessage(boolean messageCompressed) {
        return new GrpcCall(method, equivalentPath, messageEncoding, protobuf, messageCompressed);
    }

    /** The refusal of a call mcpd does not serve, or null when it is an OTLP Export call. */
    IngestRefusal refusal() {
        if (!protobuf) {
            return IngestRefusal.badRequestBeforeBody(IngestRefusal.Kind.BAD_FRAMING,
                    "only protobuf messages are taken (application/grpc or application/grpc+proto)");
        }
        if (equivalentPath == null) {
            return IngestRefusal.notImplemented("unknown gRPC method: only the OTLP Export methods of traces,"
                    + " metrics and logs are served");
        }
        return null;
    }

    /** The exchange carries this gRPC call from now on. */
    static void carry(Exchange exchange, GrpcCall call) {
        exchange.setProperty(PROPERTY, call);
    }

    /** The gRPC call the exchange carries, or null for an HTTP request. */
    public static GrpcCall of(Exchange exchange) {
        return exchange.getProperty(PROPERTY, GrpcCall.class);
    }
}
