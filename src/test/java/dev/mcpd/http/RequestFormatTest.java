package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.RawHttp2;
import dev.mcpd.testing.StepServer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link RequestFormat}: the request's own type and encoding, or for a gRPC call those of its OTLP/HTTP twin. */
class RequestFormatTest {

    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.running(new IngestTargetCheck(new RolePaths(Set.of(), List.of(), List.of())),
                new GrpcMessageReader(1_000, new BodyBudget(10_000)),
                exchange -> exchange.setProperty("format", RequestFormat.of(exchange))).readingBody();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void anHttpRequestKeepsItsOwnHeadersAsSent() throws Exception {
        assertEquals(new RequestFormat("application/json; charset=utf-8", "gzip"),
                http("Content-Type: application/json; charset=utf-8\r\nContent-Encoding: gzip\r\n"));
    }

    @Test
    void anAbsentHeaderIsEmpty() throws Exception {
        assertEquals(new RequestFormat("", ""), http(""));
    }

    @Test
    void aGrpcCallIsProtobufAndGzipOnlyWhenItsMessageCameCompressed() throws Exception {
        String export = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post(export, Map.of("content-type", "application/grpc", "grpc-encoding", "gzip",
                    "content-encoding", "br"), new byte[] {0, 0, 0, 0, 1, 42});
            assertEquals(new RequestFormat("application/x-protobuf", ""),
                    server.next().exchange().getProperty("format"));
            h2.post(export, Map.of("content-type", "application/grpc+proto", "grpc-encoding", "gzip"),
                    new byte[] {1, 0, 0, 0, 1, 42});
            assertEquals(new RequestFormat("application/x-protobuf", "gzip"),
                    server.next().exchange().getProperty("format"));
        }
    }

    private static RequestFormat http(String headers) throws Exception {
        try (RawHttp raw = new RawHttp(server.port(), 5_000)) {
            raw.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n" + headers + "\r\n{}").readResponse();
        }
        return server.next().exchange().getProperty("format", RequestFormat.class);
    }
}
