package dev.mcpd.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/** {@code GET /metrics}: the Prometheus text exposition of every meter. */
public final class MetricsScrape implements Processor {

    private final PrometheusMeterRegistry registry;

    public MetricsScrape(PrometheusMeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void process(Exchange exchange) {
        Message answer = exchange.getMessage();
        Answers.write(answer, 200, "text/plain; version=0.0.4; charset=utf-8", Answers.text(registry.scrape()));
    }
}
