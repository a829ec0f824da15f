package dev.mcpd.tls;

import dev.mcpd.config.ConfigException;
import dev.mcpd.logs.RateLimitedLog;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Certificate rotation without a restart: every 10 s (route {@code tls-reload}) each use of TLS files
 * reads them again and takes what changed — cert-manager, or an operator, replaces them in place. Files that changed
 * into something unusable (a key that is not the certificate's, half a file) leave the old ones in use, said once a
 * minute. Also the {@code mcpd_tls_certificate_expiry_seconds} gauge of each use.
 */
public final class TlsReload implements Processor {

    private static final Logger LOG = LoggerFactory.getLogger(TlsReload.class);
    /** Once a minute per use: each process's own (a process-wide one let one relay's line silence another's). */
    private final RateLimitedLog refused = new RateLimitedLog(LOG, Duration.ofMinutes(1));

    private final List<TlsUse> uses = new CopyOnWriteArrayList<>();

    public TlsReload watch(TlsUse use) {
        uses.add(use);
        return this;
    }

    /** Registers {@code mcpd_tls_certificate_expiry_seconds{use}} for each use that presents a certificate. */
    public void bindTo(MeterRegistry registry) {
        for (TlsUse use : uses) {
            if (use.notAfter().isPresent()) {
                Gauge.builder("mcpd.tls.certificate.expiry.seconds", use, u -> u.notAfter()
                                .map(end -> (double) Duration.between(Instant.now(), end).toSeconds()).orElse(0.0))
                        .description("Seconds until the certificate this use presents expires (negative: expired)")
                        .tag("use", use.name()).register(registry);
            }
        }
    }

    @Override
    public void process(Exchange exchange) {
        for (TlsUse use : uses) {
            try {
                use.reloadIfChanged().ifPresent(change -> LOG.info("tls reloaded {}", change));
            } catch (ConfigException e) {
                refused.warn("tls-" + use.name(), "tls: " + use.name() + " keeps the files it has: "
                        + e.getMessage());
            }
        }
    }
}
