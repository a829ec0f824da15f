package dev.mcpd.relay;

import dev.mcpd.testing.TestTuning;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** What a {@link TestUpstream} put in front of a real collector does with a request: sends it on, answers as it did. */
public final class Forward {

    private Forward() {
    }

    /** Sends the relay's request on to the collector and returns the collector's answer (502 when it gave none). */
    public static TestUpstream.Answer to(URI collector, TestUpstream.Received r) {
        HttpRequest.Builder request = HttpRequest.newBuilder(collector.resolve(r.uri()))
                .timeout(Duration.ofSeconds(20))
                .method(r.method(), HttpRequest.BodyPublishers.ofByteArray(r.body()));
        for (String header : List.of("Content-Type", "Content-Encoding", "Idempotency-Key", "Authorization")) {
            String value = r.header(header);
            if (value != null) {
                request.header(header, value);
            }
        }
        try {
            HttpResponse<byte[]> answer = TestTuning.QUICK_TO_GIVE_UP_HTTP.send(request.build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            TestUpstream.Answer forwarded = TestUpstream.Answer.status(answer.statusCode())
                    .withBody(new String(answer.body(), StandardCharsets.UTF_8));
            for (String header : List.of("Content-Type", "Retry-After")) {
                String value = answer.headers().firstValue(header).orElse(null);
                if (value != null) {
                    forwarded = forwarded.withHeader(header, value);
                }
            }
            return forwarded;
        } catch (IOException e) {
            return TestUpstream.Answer.status(502).withBody(e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return TestUpstream.Answer.status(502).withBody("interrupted");
        }
    }
}
