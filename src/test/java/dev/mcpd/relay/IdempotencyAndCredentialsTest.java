package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.Credential;
import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.ReliabilityReport;
import dev.mcpd.wire.DerivedIdempotencyKey;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Idempotency keys and credentials at accept: the key each entry carries, and which credential is kept with it. */
class IdempotencyAndCredentialsTest {


    @TempDir
    Path dir;

    private static HttpResponse<String> post(RunningRelay relay, String path, byte[] body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static SpoolEntry entryWithBody(RunningRelay relay, byte[] body) {
        return relay.spooled().stream().filter(e -> Arrays.equals(e.request().body(), body)).findFirst()
                .orElseThrow();
    }

    @Test
    void theSendersIdempotencyKeyIsKeptAsSent() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] body = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
            assertEquals(202, post(relay, "/v1/ingest", body, "Idempotency-Key", "sender-chosen-42").statusCode());
            assertEquals("sender-chosen-42", entryWithBody(relay, body).request().idempotencyKey());
        }
    }

    @Test
    void withoutASenderKeyTheRelayDerivesOneFromTheBytes() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] body = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
            assertEquals(200, post(relay, "/v1/traces?x=1", body, "Content-Encoding", "gzip",
                    "Content-Type", "application/x-protobuf").statusCode());
            assertEquals(DerivedIdempotencyKey.of("/v1/traces?x=1", "gzip", body),
                    entryWithBody(relay, body).request().idempotencyKey());
        }
    }

    @Test
    void anUnusableSenderKeyIsRefused400AndNothingIsWritten() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            for (String key : List.of("k".repeat(300), "two words")) {
                byte[] body = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
                HttpResponse<String> answer = post(relay, "/v1/ingest", body, "Idempotency-Key", key);
                assertEquals(400, answer.statusCode());
                assertTrue(answer.body().contains("Idempotency-Key"), answer.body());
            }
            assertTrue(relay.spooled().isEmpty());
        }
    }

    @Test
    void aKeyLargerThanTheHeaderLimitIsRefused431() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] body = UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
            assertEquals(431, post(relay, "/v1/ingest", body, "Idempotency-Key", "k".repeat(10_000)).statusCode());
            assertTrue(relay.spooled().isEmpty());
        }
    }

    @Test
    void withoutAnUpstreamKeyTheSendersCredentialIsKeptInAnOwnerOnlyFile() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] bearer = "with bearer".getBytes(StandardCharsets.UTF_8);
            byte[] header = "with x-mcpd-key".getBytes(StandardCharsets.UTF_8);
            post(relay, "/v1/ingest", bearer, "Authorization", "Bearer sender-token-1");
            post(relay, "/v1/ingest", header, "x-mcpd-key", "sender-token-2");
            SpoolEntry first = entryWithBody(relay, bearer);
            assertEquals("Authorization", first.request().credential().orElseThrow().header());
            assertEquals("Bearer sender-token-1", first.request().credential().orElseThrow().value());
            assertEquals("sender-token-2", entryWithBody(relay, header).request().credential().orElseThrow().value());
            List<Path> credentialFiles = Files.list(relay.spoolDir())
                    .filter(f -> f.getFileName().toString().endsWith(".cred")).toList();
            assertEquals(1, credentialFiles.size());
            assertEquals("rw-------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(credentialFiles.get(0))));
        }
    }

    @Test
    void withAnIngestKeyOnlyTheCredentialThatWasVerifiedIsKeptAndPassedOn() throws Exception {
        // Issue 12: a wrong Authorization beside a right x-mcpd-key is accepted, and the unverified one is dropped.
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_INGEST_KEY", "the-ingest-key"))) {
            byte[] both = "right x-mcpd-key, wrong bearer".getBytes(StandardCharsets.UTF_8);
            byte[] bearer = "right bearer, wrong x-mcpd-key".getBytes(StandardCharsets.UTF_8);
            assertEquals(202, post(relay, "/v1/ingest", both, "Authorization", "Bearer not-the-key",
                    "x-mcpd-key", "the-ingest-key").statusCode());
            assertEquals(202, post(relay, "/v1/ingest", bearer, "Authorization", "Bearer the-ingest-key",
                    "x-mcpd-key", "not-the-key").statusCode());
            var kept = entryWithBody(relay, both).request().credential().orElseThrow();
            ReliabilityReport.assertHostile("c1", "Authorization: Bearer WRONG and x-mcpd-key: KEY"
                            + " to a relay with --ingest-key KEY",
                    "202; only the verified x-mcpd-key is kept and passed on",
                    "202; kept " + kept.header() + (kept.value().equals("the-ingest-key") ? " (the verified key)"
                            : " (NOT the verified key)"),
                    kept.header().equals("x-mcpd-key") && kept.value().equals("the-ingest-key"));
            assertEquals(new Credential("Authorization", "Bearer the-ingest-key"),
                    entryWithBody(relay, bearer).request().credential().orElseThrow());
        }
    }

    @Test
    void withoutAnIngestKeyAuthorizationIsPassedOnBeforeXMcpdKey() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir)) {
            byte[] body = "both, unverified".getBytes(StandardCharsets.UTF_8);
            post(relay, "/v1/ingest", body, "Authorization", "Bearer a", "x-mcpd-key", "b");
            assertEquals(new Credential("Authorization", "Bearer a"),
                    entryWithBody(relay, body).request().credential().orElseThrow());
        }
    }

    @Test
    void withAnUpstreamKeyNoSenderCredentialIsStored() throws Exception {
        try (RunningRelay relay = RunningRelay.start(dir, Map.of("MCPD_UPSTREAM_KEY", "relay-own-key"))) {
            byte[] body = "sender key not needed upstream".getBytes(StandardCharsets.UTF_8);
            assertEquals(202, post(relay, "/v1/ingest", body, "Authorization", "Bearer sender-token-3").statusCode());
            assertTrue(entryWithBody(relay, body).request().credential().isEmpty());
            for (Path file : Files.list(relay.spoolDir()).filter(Files::isRegularFile).toList()) {
                assertFalse(file.getFileName().toString().endsWith(".cred"));
                assertFalse(Files.readString(file, StandardCharsets.ISO_8859_1).contains("sender-token-3"));
            }
        }
    }
}
