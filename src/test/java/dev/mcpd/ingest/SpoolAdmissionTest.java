package dev.mcpd.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.http.IngestRefusal;
import dev.mcpd.spool.Spool;
import dev.mcpd.testing.RawHttp;
import dev.mcpd.testing.StepServer;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SpoolAdmission}: a declared body the spool cannot take is 503 on the head, before it is read. */
class SpoolAdmissionTest {

    private static final long BOUND = 10_000;

    @TempDir
    Path dir;
    private Spool spool;
    private StepServer server;

    @BeforeEach
    void start() throws Exception {
        spool = Spool.open(dir.resolve("spool"), new Spool.Options(Spool.DEFAULT_SEGMENT_TARGET_BYTES, BOUND));
        server = StepServer.running(new SpoolAdmission(spool));
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
        spool.close();
    }

    @Test
    void aBodyThatFitsIsAdmitted() throws Exception {
        send("Content-Length: 100\r\n");
        assertTrue(server.next().passed());
        assertEquals(0, spool.refusedFull());
    }

    @Test
    void aDeclaredBodyAsLargeAsTheWholeSpoolIs503RetryAfterAndCounted() throws Exception {
        // The head alone: the body is never sent, since it could not be kept.
        send("Content-Length: " + BOUND + "\r\n");
        IngestRefusal refusal = server.next().refused();
        assertEquals(503, refusal.status());
        assertEquals(IngestRefusal.Kind.SPOOL_FULL, refusal.kind());
        assertEquals("the relay's spool is full; retry later", refusal.reason());
        assertEquals(Optional.of(IngestRefusal.RETRY_AFTER_SECONDS), refusal.retryAfterSeconds());
        assertTrue(refusal.bodyUnread());
        assertEquals(1, spool.refusedFull());
    }

    @Test
    void aHugeDeclaredLengthCannotOverflowTheBound() throws Exception {
        send("Content-Length: " + Long.MAX_VALUE + "\r\n");
        assertEquals(503, server.next().refused().status());
    }

    @Test
    void withoutAContentLengthTheEntryIsCountedAsEmpty() throws Exception {
        send("Transfer-Encoding: chunked\r\n");
        assertTrue(server.next().passed());
    }

    @Test
    void aFullSpoolRefusesEvenAnEmptyBody() throws Exception {
        spool.close();
        spool = Spool.open(dir.resolve("tiny"), new Spool.Options(Spool.DEFAULT_SEGMENT_TARGET_BYTES, 1));
        try (StepServer tiny = StepServer.running(new SpoolAdmission(spool))) {
            try (RawHttp http = new RawHttp(tiny.port(), 5_000)) {
                http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").readResponse();
            }
            assertEquals(IngestRefusal.Kind.SPOOL_FULL, tiny.next().refused().kind());
        }
    }

    private void send(String headers) throws Exception {
        try (RawHttp http = new RawHttp(server.port(), 5_000)) {
            http.send("POST /v1/ingest HTTP/1.1\r\nHost: h\r\n" + headers + "\r\n").readResponse();
        }
    }
}
