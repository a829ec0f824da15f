package dev.mcpd.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.config.ListenAddress;
import dev.mcpd.config.McpdConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The attempts and last failures a running relay keeps in memory for the entries of its spool, asked for at {@code
 * GET /relay/spool} on the configured listen address. The spool's files do not hold them; when no relay of this
 * spool answers there, they are unknown, and {@link #unknownBecause} says why in one line.
 *
 * @param bySeq          each entry's failed attempts, for the entries that have any
 * @param unknownBecause why the relay could not tell (empty when it did)
 */
record RelayAttempts(Map<Long, Failed> bySeq, Optional<String> unknownBecause) {

    /** How long the relay may take to connect and answer: it answers from memory, at once. */
    private static final Duration PATIENCE = Duration.ofSeconds(5);
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One entry's failed attempts, as the relay counts them.
     *
     * @param attempts    how many failed
     * @param lastFailure the last one, in one line (as the upstream or the connection said it: escape it to print it)
     */
    record Failed(int attempts, String lastFailure) {
    }

    static RelayAttempts unknown(String why) {
        return new RelayAttempts(Map.of(), Optional.of(why));
    }

    /** Asks the relay at {@code --listen} about the {@code limit} oldest entries of the spool {@code spoolId}. */
    static RelayAttempts ask(McpdConfig config, Optional<String> spoolId, int limit) {
        ListenAddress at = connectable(config.listener().address());
        if (config.tls().listenerTls()) {
            // The listener's certificate names the host senders use, and it may ask for a client certificate: the
            // command does not guess which name and trust would do.
            return unknown("the relay's listener at " + at + " speaks HTTPS (--tls-cert), which spool list does not"
                    + " connect to, so attempts are unknown (GET https://" + at + "/relay/spool shows them)");
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + at + "/relay/spool?limit=" + limit))
                .timeout(PATIENCE).GET();
        config.ingest().key().ifPresent(key -> request.header("Authorization", "Bearer " + key.reveal()));
        HttpResponse<byte[]> answer;
        try {
            answer = HttpClient.newBuilder().connectTimeout(PATIENCE).build()
                    .send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            return unknown("no relay answered at " + at + ", so attempts are unknown");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return unknown("interrupted while asking the relay at " + at + ", so attempts are unknown");
        }
        if (answer.statusCode() == 401) {
            return unknown("the relay at " + at + " answered 401: give its --ingest-key (or MCPD_INGEST_KEY) to see"
                    + " attempts; they are unknown");
        }
        return read(at, answer, spoolId);
    }

    private static RelayAttempts read(ListenAddress at, HttpResponse<byte[]> answer, Optional<String> spoolId) {
        JsonNode root;
        try {
            root = answer.statusCode() == 200 ? JSON.readTree(answer.body()) : null;
        } catch (IOException e) {
            root = null;
        }
        if (root == null || !root.path("entries").isArray() || !root.path("relay").isTextual()) {
            return unknown("what answered at " + at + " is not a relay's /relay/spool (status " + answer.statusCode()
                    + "), so attempts are unknown");
        }
        if (spoolId.isEmpty() || !spoolId.get().equals(root.get("relay").asText())) {
            return unknown("the relay at " + at + " runs another spool (" + root.path("directory").asText("?")
                    + "), so attempts are unknown");
        }
        Map<Long, Failed> bySeq = new HashMap<>();
        for (JsonNode entry : root.get("entries")) {
            bySeq.put(entry.path("seq").asLong(), new Failed(entry.path("attempts").asInt(),
                    entry.path("lastFailure").asText("")));
        }
        return new RelayAttempts(Map.copyOf(bySeq), Optional.empty());
    }

    /** A listener on every interface is reached on this host's loopback. */
    private static ListenAddress connectable(ListenAddress listen) {
        return switch (listen.host()) {
            case "0.0.0.0" -> new ListenAddress("127.0.0.1", listen.port());
            case "::", "0:0:0:0:0:0:0:0" -> new ListenAddress("::1", listen.port());
            default -> listen;
        };
    }
}
