package dev.mcpd.http;

import dev.mcpd.wire.Capabilities;
import java.util.function.Supplier;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.Processor;

/**
 * Answers a probe with a status and one short line of text, and, when the role has any, the header that names what
 * it takes beyond plain HTTP/1.1 ({@code Mcpd-Capabilities}: an mcpd collector says {@code h2c}, so a relay delivers
 * to it over HTTP/2 with prior knowledge).
 */
public final class ProbeAnswer implements Processor {

    /** What a probe reports. */
    public record Verdict(int status, String line) {
    }


    private final Supplier<Verdict> verdict;
    private final String capabilities;
    private final SenderKeyCheck detailFor;

    public ProbeAnswer(Supplier<Verdict> verdict) {
        this(verdict, "");
    }

    /** @param capabilities space-separated tokens for {@code Mcpd-Capabilities}, or empty for none */
    public ProbeAnswer(Supplier<Verdict> verdict, String capabilities) {
        this(verdict, capabilities, null);
    }

    private ProbeAnswer(Supplier<Verdict> verdict, String capabilities, SenderKeyCheck detailFor) {
        this.verdict = verdict;
        this.capabilities = capabilities;
        this.detailFor = detailFor;
    }

    /**
     * This probe, telling its detail (upstreams, the spool's path and fill) only to a caller that presents the
     * ingest key when one is set; anyone else — a load balancer — reads the verdict's first word ({@code ok},
     * {@code degraded}, {@code unavailable}) and the same status.
     */
    public ProbeAnswer detailOnlyFor(SenderKeyCheck keys) {
        return new ProbeAnswer(verdict, capabilities, keys);
    }

    /** {@code /healthz}: the process is alive and serving, whatever its upstreams do. */
    public static ProbeAnswer liveness() {
        return new ProbeAnswer(() -> new Verdict(200, "ok"));
    }

    @Override
    public void process(Exchange exchange) {
        Verdict v = verdict.get();
        Message answer = exchange.getMessage();
        String line = v.line();
        if (detailFor != null && !detailFor.admits(VertxExchange.request(exchange)) && line.indexOf(':') > 0) {
            line = line.substring(0, line.indexOf(':'));
        }
        Answers.line(answer, v.status(), line);
        if (!capabilities.isEmpty()) {
            answer.setHeader(Capabilities.HEADER, capabilities);
        }
    }
}
