package dev.mcpd.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Where the relay sends, as whom, and through which spool: {@code mcpd config}'s {@code relay} line.
 *
 * @param upstreams     collectors (or Kafka topics) to deliver to, primary first ({@code --upstream})
 * @param upstreamKey   the key the relay presents to every upstream; empty means each sender's own key is passed on
 *                      ({@code --upstream-key})
 * @param spoolDir      where spools live; the relay spools in {@link #relaySpoolDir()} ({@code --spool-dir})
 * @param spoolMaxBytes the spool's bound ({@code --spool-max-bytes})
 */
public record Relaying(List<URI> upstreams, Optional<Secret> upstreamKey, Path spoolDir, long spoolMaxBytes) {

    public Relaying {
        Objects.requireNonNull(upstreams, "upstreams");
        Objects.requireNonNull(upstreamKey, "upstreamKey");
        Objects.requireNonNull(spoolDir, "spoolDir");
        for (URI upstream : upstreams) {
            OptionValues.check(Options.UPSTREAM, () -> UpstreamUrls.checkUpstream(upstream));
        }
        long bytes = spoolMaxBytes;
        OptionValues.check(Options.SPOOL_MAX_BYTES, () -> OptionValues.atLeastOneByte(bytes));
        upstreams = List.copyOf(upstreams);
    }

    /** Where the relay spools: {@code <spool-dir>/relay}. */
    public Path relaySpoolDir() {
        return spoolDir.resolve("relay");
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        String to = upstreams.isEmpty() ? "no upstream (name one with --upstream or MCPD_UPSTREAMS)"
                : upstreams.size() + " upstream(s) in order, " + upstreams.stream()
                .map(upstream -> OptionValues.redact(upstream.toString())).collect(Collectors.joining(", "));
        return to + "; " + (upstreamKey.isPresent() ? "upstream key presented to every upstream"
                : "each sender's key passed on") + "; spool at " + relaySpoolDir() + ", "
                + ByteSize.format(spoolMaxBytes);
    }
}
