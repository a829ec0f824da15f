package dev.mcpd.http;

import dev.mcpd.routing.Resume;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.RuntimeCamelException;
import org.apache.camel.support.AsyncProcessorSupport;

/**
 * {@code GET /metrics}: the Prometheus text exposition of every meter. Each scrape is made on one thread of its own,
 * one at a time, while the route waits without holding its event loop: a scrape of every meter is CPU work of
 * milliseconds, and scrapes pipelined on many connections — anyone may ask on an open relay — would otherwise hold the
 * event loops and keep {@code /healthz} and ingest waiting. Every request gets a scrape made after it arrived.
 */
public final class MetricsScrape extends AsyncProcessorSupport {

    /** One for the process: scrapes never take more than one core, whatever asks for them. */
    private static final ExecutorService SCRAPES = Executors.newSingleThreadExecutor(work -> {
        Thread thread = new Thread(work, "mcpd-metrics-scrape");
        thread.setDaemon(true);
        return thread;
    });

    private final PrometheusMeterRegistry registry;

    public MetricsScrape(PrometheusMeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        CompletableFuture<String> text = CompletableFuture.supplyAsync(registry::scrape, SCRAPES);
        return Resume.after(text, exchange, callback, (scraped, failure) -> {
            if (failure != null) {
                throw new RuntimeCamelException("the scrape failed: " + failure.getMessage(), failure);
            }
            Answers.write(exchange.getMessage(), 200, "text/plain; version=0.0.4; charset=utf-8",
                    Answers.text(scraped));
        });
    }
}
