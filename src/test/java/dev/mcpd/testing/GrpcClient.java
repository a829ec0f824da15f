package dev.mcpd.testing;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A gRPC client at the byte level (h2c with prior knowledge, as gRPC senders connect): it sends one call — any
 * method, any metadata, any body, framed or not — and gives back the answer with its trailers, so a test can read the
 * exact {@code grpc-status}, {@code grpc-message} and status details a server sent. A call that never ends its stream
 * ({@link #callStalled}) is made with Vert.x's HTTP/2 client.
 */
public final class GrpcClient implements AutoCloseable {

    public static final String TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
    public static final String METRICS = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
    public static final String LOGS = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

    /** What came back: the HTTP status, the headers, the body, and the trailers (or the headers, if trailers-only). */
    public record Reply(int httpStatus, MultiMap headers, byte[] body, MultiMap trailers) {

        /** {@code grpc-status}, from the trailers or, for a trailers-only answer, the headers; -1 when absent. */
        public int grpcStatus() {
            String status = trailers.get("grpc-status") != null ? trailers.get("grpc-status")
                    : headers.get("grpc-status");
            return status == null ? -1 : Integer.parseInt(status);
        }

        /** {@code grpc-message}, percent-decoded, or "". */
        public String grpcMessage() {
            String message = trailers.get("grpc-message") != null ? trailers.get("grpc-message")
                    : headers.get("grpc-message");
            return message == null ? "" : URLDecoder.decode(message.replace("+", "%2B"), StandardCharsets.UTF_8);
        }

        /** {@code grpc-status-details-bin}, base64-decoded, or null. */
        public byte[] statusDetails() {
            String details = trailers.get("grpc-status-details-bin") != null ? trailers.get("grpc-status-details-bin")
                    : headers.get("grpc-status-details-bin");
            return details == null ? null : Base64.getDecoder().decode(details);
        }
    }

    private final Vertx vertx = Vertx.vertx();
    private final HttpClient client;
    private final OkHttpClient okHttp;
    private final int port;

    public GrpcClient(int port) {
        this.port = port;
        this.client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false));
        this.okHttp = new OkHttpClient.Builder().protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
                .callTimeout(20, TimeUnit.SECONDS).retryOnConnectionFailure(false).build();
    }

    /**
     * One unary call with {@code application/grpc} and these headers (metadata); the body is sent as given. Made with
     * OkHttp over HTTP/2 with prior knowledge, the stack the OpenTelemetry SDK's gRPC exporter sends with, on one
     * connection for all the calls of this client. (Vert.x's HTTP/2 client, used here before, now and then never
     * completed a call on a shared connection — a refused one, once in 700 to 4 500 calls of a loop of taken and
     * refused calls, while a new connection was answered at once; OkHttp made 13 500 of them on one connection without
     * a miss. Not traced further: the relay's answer to the SDK, which sends with OkHttp, is what matters.)
     */
    public Reply call(String method, Map<String, String> metadata, byte[] body) {
        boolean ownType = metadata.keySet().stream().anyMatch("content-type"::equalsIgnoreCase);
        Request.Builder request = new Request.Builder().url("http://127.0.0.1:" + port + method)
                .header("te", "trailers")
                .post(RequestBody.create(body, ownType ? null : MediaType.get("application/grpc")));
        metadata.forEach(request::header);
        try (Response response = okHttp.newCall(request.build()).execute()) {
            byte[] answer = response.body().bytes();
            return new Reply(response.code(), multiMap(response.headers()), answer, multiMap(response.trailers()));
        } catch (IOException e) {
            throw new IllegalStateException("gRPC call " + method + " failed: " + e, e);
        }
    }

    private static MultiMap multiMap(Headers headers) {
        MultiMap map = MultiMap.caseInsensitiveMultiMap();
        headers.forEach(header -> map.add(header.getFirst(), header.getSecond()));
        return map;
    }

    /** A call that sends the first bytes of its body and then nothing more, never ending its stream. */
    public Reply callStalled(String method, byte[] firstBytes) {
        MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("content-type", "application/grpc")
                .add("te", "trailers");
        try {
            return client.request(new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                            .setURI(method).setHeaders(headers))
                    .compose(request -> {
                        request.setChunked(true).write(Buffer.buffer(firstBytes));
                        return request.response();
                    })
                    .compose(response -> response.body().map(answer -> new Reply(response.statusCode(),
                            response.headers(), answer.getBytes(), response.trailers())))
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("gRPC call " + method + " failed: " + e, e);
        }
    }

    /** A message behind its gRPC length prefix (compressed flag 0). */
    public static byte[] framed(byte[] message) {
        return framed(0, message);
    }

    /** A message behind a length prefix with this compressed flag. */
    public static byte[] framed(int compressedFlag, byte[] message) {
        return ByteBuffer.allocate(5 + message.length).put((byte) compressedFlag).putInt(message.length).put(message)
                .array();
    }

    @Override
    public void close() {
        okHttp.dispatcher().executorService().shutdown();
        okHttp.connectionPool().evictAll();
        client.close();
        vertx.close();
    }
}
