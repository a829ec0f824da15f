package dev.mcpd.config;

import java.net.URI;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where one upstream is checked, in place of {@code <upstream><--probe-path>} ({@code --upstream-probe}):
 * {@code 2=http://gateway:13133/} (an OpenTelemetry Collector's health-check extension listens on a port of its own)
 * or {@code 2=off} (no active check: its deliveries alone say how it is). {@code order} is the upstream's place in
 * the {@code --upstream} list, from 1.
 */
public record UpstreamProbeAddress(int order, Optional<URI> url) {

    private static final Pattern FORM = Pattern.compile("(\\d{1,4})=(.+)");

    public static UpstreamProbeAddress parse(String text) {
        Matcher form = FORM.matcher(text.strip());
        if (!form.matches()) {
            throw new IllegalArgumentException("\"" + OptionValues.redact(text.strip()) + "\" is not ORDER=URL or"
                    + " ORDER=off (such as 2=http://gateway:13133/ for the second --upstream)");
        }
        int order = Integer.parseInt(form.group(1));
        if (order < 1) {
            throw new IllegalArgumentException("upstream " + order + " does not exist: upstreams count from 1");
        }
        String where = form.group(2).strip();
        if (where.equalsIgnoreCase("off")) {
            return new UpstreamProbeAddress(order, Optional.empty());
        }
        URI url = UpstreamUrls.parseProbeAddress(where);
        return new UpstreamProbeAddress(order, Optional.of(url));
    }

    /** As {@code mcpd config} says it. */
    String describe() {
        return "upstream " + order + url.map(u -> " checked at " + OptionValues.redact(u.toString()))
                .orElse(" not probed");
    }
}
