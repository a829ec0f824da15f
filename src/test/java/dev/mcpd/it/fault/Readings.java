package dev.mcpd.it.fault;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mcpd.it.PackagedJar;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the fault scenarios read of the processes they run: a collector's stats, a relay's status and metrics. */
final class Readings {

    private Readings() {
    }

    /** A sampler of one relay metric (a daemon thread), keeping its highest value. */
    static final class Peak implements AutoCloseable {
        private final AtomicLong max = new AtomicLong();
        private final Thread sampler;

        Peak(Callable<String> scrape, String metric, Duration every) {
            sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        long value = (long) metric(scrape.call(), metric);
                        max.accumulateAndGet(value, Math::max);
                        Thread.sleep(every.toMillis());
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // the relay is busy: sample again
                    }
                }
            }, metric + "-sampler");
            sampler.setDaemon(true);
            sampler.start();
        }

        long max() {
            return max.get();
        }

        @Override
        public void close() {
            sampler.interrupt();
        }
    }

    static JsonNode json(URI uri) throws IOException, InterruptedException {
        HttpResponse<String> answer = FaultRig.HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(15)).GET()
                .build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException(uri + " answered " + answer.statusCode() + ": " + answer.body());
        }
        return FaultRig.JSON.readTree(answer.body());
    }

    static JsonNode stats(PackagedJar collector) throws IOException, InterruptedException {
        return json(collector.uri("/v1/stats"));
    }

    static JsonNode relayStatus(PackagedJar relay) throws IOException, InterruptedException {
        return json(relay.uri("/relay/status"));
    }

    static String metrics(PackagedJar relay) throws IOException, InterruptedException {
        HttpResponse<String> answer = FaultRig.HTTP.send(HttpRequest.newBuilder(relay.uri("/metrics"))
                .timeout(Duration.ofSeconds(15)).GET().build(), HttpResponse.BodyHandlers.ofString());
        return answer.body();
    }

    private static final Pattern SAMPLE = Pattern.compile("^(\\w+)(\\{[^}]*})?\\s+(\\S+)");

    /** The value of {@code name} whose labels contain every one of {@code labels} ({@code order="1"}), or 0. */
    static double metric(String scrape, String name, String... labels) {
        double sum = 0;
        for (String line : scrape.lines().toList()) {
            Matcher m = SAMPLE.matcher(line);
            if (!m.find() || !m.group(1).equals(name)) {
                continue;
            }
            String labelSet = m.group(2) == null ? "" : m.group(2);
            boolean all = true;
            for (String label : labels) {
                all &= labelSet.contains(label);
            }
            if (all) {
                sum += Double.parseDouble(m.group(3));
            }
        }
        return sum;
    }
}
