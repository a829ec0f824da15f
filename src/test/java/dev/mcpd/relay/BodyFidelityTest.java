package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.HTTP;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpd.spool.SpoolEntry;
import dev.mcpd.testing.RawHttp;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every body is kept byte for byte whatever its content type; only what delivery needs is stored. */
class BodyFidelityTest {

    @RegisterExtension
    static final SharedRelay relay = new SharedRelay();



    private static SpoolEntry postAndFind(HttpClient client, String path, String contentType, byte[] body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(relay.uri(path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        HttpResponse<String> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode(), answer.body());
        List<SpoolEntry> matching = relay.spooled().stream().filter(e -> e.request().target().equals(path)).toList();
        assertEquals(1, matching.size(), "one entry for " + path);
        return matching.get(0);
    }

    @Test
    void aFormEncodedBodyIsKeptAsItsRawBytes() throws Exception {
        byte[] body = "a=1&b=%C3%A9t%C3%A9&a=2&empty=&plus=x+y".getBytes(StandardCharsets.US_ASCII);
        SpoolEntry entry = postAndFind(HTTP, "/form", "application/x-www-form-urlencoded", body);
        assertArrayEquals(body, entry.request().body());
        assertEquals("application/x-www-form-urlencoded", entry.request().contentType());
    }

    @Test
    void aMultipartBodyIsKeptAsItsRawBytes() throws Exception {
        String boundary = "----mcpdBoundary7MA4YWxkTrZu0gW";
        byte[] file = new byte[3000];
        new Random(7).nextBytes(file);
        byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] body = concat(head, file, tail);
        SpoolEntry entry = postAndFind(HTTP, "/multipart", "multipart/form-data; boundary=" + boundary, body);
        assertArrayEquals(body, entry.request().body());
    }

    @Test
    void aBinaryBodyWithEveryByteValueIsKept() throws Exception {
        byte[] body = new byte[256 * 64];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
        }
        SpoolEntry entry = postAndFind(HTTP, "/binary", "application/octet-stream", body);
        assertArrayEquals(body, entry.request().body());
    }

    @Test
    void anEmptyBodyIsKeptAsEmpty() throws Exception {
        SpoolEntry entry = postAndFind(HTTP, "/empty", null, new byte[0]);
        assertArrayEquals(new byte[0], entry.request().body());
        assertEquals("", entry.request().contentType(), "no content type sent, none invented");
    }

    @Test
    void aSenderUpgradingToCleartextHttp2IsServed() throws Exception {
        // Java's HttpClient, like the OpenTelemetry JDK sender, asks for h2c on every request over http://
        // (Upgrade: h2c, Connection: Upgrade, HTTP2-Settings).
        HttpClient http2 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
        byte[] body = "{\"events\":[{\"over\":\"h2c\"}]}".getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> answer = http2.send(HttpRequest.newBuilder(relay.uri("/h2c"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, answer.statusCode());
        assertEquals(HttpClient.Version.HTTP_2, answer.version(), "the upgrade was taken");
        SpoolEntry entry = relay.spooled().stream().filter(e -> e.request().target().equals("/h2c")).findFirst()
                .orElseThrow();
        assertArrayEquals(body, entry.request().body());
        // A second request on the upgraded connection.
        HttpResponse<String> again = http2.send(HttpRequest.newBuilder(relay.uri("/h2c-again"))
                .POST(HttpRequest.BodyPublishers.ofString("again")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, again.statusCode());
    }

    @Test
    void hopByHopAndOtherHeadersAreNeverStoredForForwarding() throws Exception {
        try (RawHttp raw = new RawHttp(relay.port(), 5000)) {
            String answer = raw.send("POST /hop HTTP/1.1\r\nHost: relay\r\nContent-Type: text/plain\r\n"
                    + "Connection: keep-alive, X-Hop-Marker\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n"
                    + "X-Hop-Marker: hop-by-hop-value\r\nX-Custom-Header: custom-value\r\n"
                    + "Content-Length: 4\r\n\r\nbody").readResponse();
            assertTrue(answer.startsWith("HTTP/1.1 202 "), answer);
        }
        assertTrue(relay.spooled().stream().anyMatch(e -> e.request().target().equals("/hop")));
        for (Path file : Files.list(relay.spoolDir()).filter(Files::isRegularFile).toList()) {
            String stored = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            for (String marker : List.of("hop-by-hop-value", "custom-value", "timeout=5", "trailers", "keep-alive")) {
                assertFalse(stored.contains(marker), file.getFileName() + " stores " + marker);
            }
        }
    }

    private static byte[] concat(byte[]... parts) {
        int length = Arrays.stream(parts).mapToInt(p -> p.length).sum();
        byte[] all = new byte[length];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        return all;
    }
}
