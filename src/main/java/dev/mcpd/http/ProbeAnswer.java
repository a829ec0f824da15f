package dev.mcpd.http;

import java.util.function.Supplier;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/** Answers a probe with a status and one short line of text. */
public final class ProbeAnswer implements Processor {

    /** What a probe reports. */
    public record Verdict(int status, String line) {
    }

    private final Supplier<Verdict> verdict;

    public ProbeAnswer(Supplier<Verdict> verdict) {
        this.verdict = verdict;
    }

    /** {@code /healthz}: the process is alive and serving, whatever its upstreams do. */
    public static ProbeAnswer liveness() {
        return new ProbeAnswer(() -> new Verdict(200, "ok"));
    }

    @Override
    public void process(Exchange exchange) {
        Verdict v = verdict.get();
        Message answer = exchange.getMessage();
        Answers.line(answer, v.status(), v.line());
    }
}
