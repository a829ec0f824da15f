package dev.mcpd.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.RawHttp2;
import dev.mcpd.testing.StepServer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link IngestTargetCheck}: the target read once, normalised, kept for the steps after; the role's paths are 405. */
class IngestTargetCheckTest {

    private static final String TRACE_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
    private static StepServer server;

    @BeforeAll
    static void start() {
        server = StepServer.running(new IngestTargetCheck(new RolePaths(Set.of("/v1/stats"), List.of("/relay"),
                List.of())));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void theTargetIsKeptForTheStepsAfterWithItsQuery() throws Exception {
        Exchange passed = passing("/v1/ingest?tenant=a");
        assertEquals("/v1/ingest?tenant=a", IngestTargetCheck.of(passed).text());
        assertEquals("/v1/ingest?tenant=a", passed.getIn().getHeader(IngestTargetCheck.TARGET_HEADER));
        assertEquals("/v1/ingest?tenant=a", passed.getIn().getHeader(Exchange.HTTP_URI));
        assertEquals("/v1/ingest", passed.getIn().getHeader(Exchange.HTTP_PATH));
        assertNull(GrpcCall.of(passed), "an HTTP request carries no gRPC call");
    }

    @Test
    void whatTheStepsAfterReadIsTheNormalisedTarget() throws Exception {
        assertEquals("/v1/ingest", passing("/v1/x/../ingest").getIn().getHeader(IngestTargetCheck.TARGET_HEADER));
        assertEquals("/v1/logs", passing("/v1/%6Cogs").getIn().getHeader(Exchange.HTTP_PATH));
        assertEquals("/v1/logs?x=1", passing("http://other.example:9999/v1/logs?x=1")
                .getIn().getHeader(IngestTargetCheck.TARGET_HEADER));
    }

    @Test
    void theProbesMetricsAndTheRolesOwnPathsAre405WithAllowGet() throws Exception {
        for (String path : new String[] {"/healthz", "/readyz", "/metrics", "/v1/stats", "/relay", "/relay/sync?seq=1",
                "/v1/../healthz", "/%72elay/status"}) {
            String answer = send(path);
            IngestRefusal refusal = server.next().refused();
            assertEquals(405, refusal.status(), path);
            assertEquals(IngestRefusal.Kind.NOT_ALLOWED, refusal.kind());
            assertEquals("this path is not an ingest path; it answers GET", refusal.reason());
            assertTrue(refusal.bodyUnread());
            assertTrue(answer.toLowerCase().contains("\r\nallow: get\r\n"), path + ": " + answer);
        }
    }

    @Test
    void aPathThatOnlyStartsLikeAPrefixIsIngest() throws Exception {
        assertEquals("/relayed", passing("/relayed").getIn().getHeader(Exchange.HTTP_PATH));
        assertEquals("/v1/stats/x", passing("/v1/stats/x").getIn().getHeader(Exchange.HTTP_PATH));
    }

    @Test
    void aTargetWithABrokenEscapeOrAForbiddenCharacterIs400BeforeTheBody() throws Exception {
        send("/v1/%zz");
        IngestRefusal refusal = server.next().refused();
        assertEquals(400, refusal.status());
        assertEquals(IngestRefusal.Kind.BAD_TARGET, refusal.kind());
        assertEquals("the request target has a '%' that does not start a %HH escape", refusal.reason());
        assertTrue(refusal.bodyUnread());
        send("/v1/{x}");
        assertEquals("the request target holds a character a URL may not carry (0x7b): percent-encode it",
                server.next().refused().reason());
    }

    @Test
    void aGrpcContentTypeOverHttp1IsNotAGrpcCall() throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST " + TRACE_EXPORT + " HTTP/1.1\r\nHost: h\r\nContent-Type: application/grpc\r\n"
                    + "Content-Length: 0\r\n\r\n").readResponse();
        }
        IngestRefusal refusal = server.next().refused();
        assertEquals(400, refusal.status());
        assertEquals(IngestRefusal.Kind.BAD_FRAMING, refusal.kind());
        assertEquals("a gRPC call (Content-Type: application/grpc) is carried by HTTP/2, not HTTP/1.x",
                refusal.reason());
    }

    @Test
    void anExportCallsTargetIsTheOtlpPathItStandsForAndTheCallIsCarried() throws Exception {
        Map<String, String> paths = Map.of(TRACE_EXPORT, "/v1/traces",
                "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", "/v1/metrics",
                "/opentelemetry.proto.collector.logs.v1.LogsService/Export", "/v1/logs");
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            for (var method : paths.entrySet()) {
                h2.post(method.getKey(), Map.of("content-type", "application/grpc+proto", "grpc-encoding", " GZIP "),
                        new byte[0]);
                Exchange passed = server.next().exchange();
                assertEquals(method.getValue(), IngestTargetCheck.of(passed).text());
                assertEquals(method.getValue(), passed.getIn().getHeader(IngestTargetCheck.TARGET_HEADER));
                GrpcCall call = GrpcCall.of(passed);
                assertEquals(new GrpcCall(method.getKey(), method.getValue(), "gzip", true, false), call);
            }
        }
    }

    @Test
    void anUnknownGrpcMethodIs501AndANonProtobufCodec400() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post("/grpc.health.v1.Health/Check", Map.of("content-type", "application/grpc"), new byte[0]);
            StepServer.Outcome unknown = server.next();
            assertEquals(501, unknown.refused().status());
            assertEquals(IngestRefusal.Kind.NOT_IMPLEMENTED, unknown.refused().kind());
            assertEquals("unknown gRPC method: only the OTLP Export methods of traces, metrics and logs are served",
                    unknown.refused().reason());
            // Carried all the same: the refusal is answered in gRPC's terms.
            assertEquals("identity", GrpcCall.of(unknown.exchange()).messageEncoding());

            h2.post(TRACE_EXPORT, Map.of("content-type", "application/grpc+json"), new byte[0]);
            IngestRefusal json = server.next().refused();
            assertEquals(400, json.status());
            assertEquals("only protobuf messages are taken (application/grpc or application/grpc+proto)",
                    json.reason());
        }
    }

    @Test
    void grpcWebIsNotGrpcItsPathIsAnIngestPathAsItIs() throws Exception {
        try (RawHttp2 h2 = new RawHttp2(server.port(), 5_000)) {
            h2.post(TRACE_EXPORT, Map.of("content-type", "application/grpc-web"), new byte[0]);
            Exchange passed = server.next().exchange();
            assertEquals(TRACE_EXPORT, IngestTargetCheck.of(passed).text());
            assertNull(GrpcCall.of(passed));
        }
    }

    @Test
    void theTargetIsReadOnlyAfterThisStepRan() throws Exception {
        try (DefaultCamelContext camel = new DefaultCamelContext()) {
            assertThrows(IllegalStateException.class, () -> IngestTargetCheck.of(new DefaultExchange(camel)));
        }
    }

    private static Exchange passing(String target) throws Exception {
        send(target);
        StepServer.Outcome outcome = server.next();
        assertTrue(outcome.passed(), target + ": " + outcome);
        return outcome.exchange();
    }

    private static String send(String target) throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            return http.send("POST " + target + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").readResponse();
        }
    }
}
