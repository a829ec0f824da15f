package dev.mcpd.http;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.http.HttpMethod;
import java.util.concurrent.atomic.LongAdder;
import org.apache.camel.Exchange;

/**
 * Ingest requests answered, by protocol ({@code http}, {@code grpc}) and outcome ({@code accepted}: spooled or
 * archived; {@code refused}: any refusal of the ingest route), exported as {@code mcpd_ingest_requests_total}. A
 * meter of its own, so the documented meters keep their names and series; the ingest routes call it after each answer.
 */
public final class IngestTally {

    private final LongAdder[] counts = new LongAdder[4];

    public IngestTally() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** Registers {@code mcpd.ingest.requests} with its four series. */
    public void bindTo(MeterRegistry registry) {
        for (String protocol : new String[] {"http", "grpc"}) {
            for (String outcome : new String[] {"accepted", "refused"}) {
                LongAdder count = counts[index(protocol.equals("grpc"), outcome.equals("refused"))];
                FunctionCounter.builder("mcpd.ingest.requests", count, LongAdder::sum)
                        .description("Ingest requests answered, by protocol and outcome")
                        .tags("protocol", protocol, "outcome", outcome).register(registry);
            }
        }
    }

    public void accepted(Exchange exchange) {
        counts[index(GrpcCall.of(exchange) != null, false)].increment();
    }

    /** A refusal of an ingest request; the other routes that share the refusal answers (a GET) are not counted. */
    public void refused(Exchange exchange) {
        if (VertxExchange.request(exchange).method() != HttpMethod.POST) {
            return;
        }
        counts[index(GrpcCall.of(exchange) != null, true)].increment();
    }

    private static int index(boolean grpc, boolean refused) {
        return (grpc ? 2 : 0) + (refused ? 1 : 0);
    }
}
