package dev.mcpd.config;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * How the relay checks its upstreams: {@code mcpd config}'s {@code health} line.
 *
 * @param probePath          the path every upstream is checked with ({@code --probe-path})
 * @param upstreamProbes     where some upstreams are checked instead, or that they are not ({@code --upstream-probe})
 * @param interval           time between checks of one upstream ({@code --probe-interval-seconds})
 * @param timeout            a check answered later fails ({@code --probe-timeout-seconds}); shorter than the interval
 * @param healthyThreshold   successful checks in a row that bring an upstream back ({@code --healthy-threshold})
 * @param unhealthyThreshold failed checks in a row that take it out of service ({@code --unhealthy-threshold})
 */
public record HealthChecks(String probePath, List<UpstreamProbeAddress> upstreamProbes, Duration interval,
                           Duration timeout, int healthyThreshold, int unhealthyThreshold) {

    /** Checks further apart than an hour would leave a dead upstream in service for hours. */
    public static final long MAX_PROBE_SECONDS = 3_600;
    /** More checks in a row than this would take an upstream out (or bring it back) only after hours. */
    public static final int MAX_THRESHOLD = 100;
    private static final Pattern PROBE_PATH_FORM = Pattern.compile("/[\\x21-\\x7e]{0,1023}");

    public HealthChecks {
        Objects.requireNonNull(probePath, "probePath");
        Objects.requireNonNull(upstreamProbes, "upstreamProbes");
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(timeout, "timeout");
        String path = probePath;
        Duration every = interval;
        Duration within = timeout;
        int healthy = healthyThreshold;
        int unhealthy = unhealthyThreshold;
        OptionValues.check(Options.PROBE_PATH, () -> checkProbePath(path));
        OptionValues.check(Options.PROBE_INTERVAL_SECONDS, () -> checkProbeSeconds(every.toSeconds()));
        OptionValues.check(Options.PROBE_TIMEOUT_SECONDS, () -> checkProbeSeconds(within.toSeconds()));
        OptionValues.check(Options.PROBE_TIMEOUT_SECONDS, () -> checkProbeTimeout(within, every));
        OptionValues.check(Options.HEALTHY_THRESHOLD, () -> checkThreshold(healthy));
        OptionValues.check(Options.UNHEALTHY_THRESHOLD, () -> checkThreshold(unhealthy));
        upstreamProbes = List.copyOf(upstreamProbes);
    }

    /** Each names one of {@code upstreams} upstreams, at most once. */
    void checkUpstreamProbes(int upstreams) {
        OptionValues.check(Options.UPSTREAM_PROBE, () -> {
            Set<Integer> named = new HashSet<>();
            for (UpstreamProbeAddress probe : upstreamProbes) {
                if (probe.order() > upstreams) {
                    throw new IllegalArgumentException("upstream " + probe.order() + " does not exist: there "
                            + (upstreams == 1 ? "is 1 --upstream" : "are " + upstreams + " --upstream"));
                }
                if (!named.add(probe.order())) {
                    throw new IllegalArgumentException("upstream " + probe.order() + " is named twice");
                }
            }
            return upstreamProbes;
        });
    }

    static String checkProbePath(String path) {
        String stripped = path.strip();
        if (!PROBE_PATH_FORM.matcher(stripped).matches()) {
            throw new IllegalArgumentException("\"" + path + "\" is not a path: it starts with / and holds visible"
                    + " ASCII characters only (at most 1024)");
        }
        return stripped;
    }

    static Duration checkProbeSeconds(long seconds) {
        if (seconds < 1 || seconds > MAX_PROBE_SECONDS) {
            throw new IllegalArgumentException(seconds + " seconds is out of range: use 1 to " + MAX_PROBE_SECONDS);
        }
        return Duration.ofSeconds(seconds);
    }

    static Duration checkProbeTimeout(Duration timeout, Duration interval) {
        if (timeout.compareTo(interval) >= 0) {
            throw new IllegalArgumentException(timeout.toSeconds() + " seconds is not shorter than"
                    + " --probe-interval-seconds (" + interval.toSeconds() + "): a check must end before the next");
        }
        return timeout;
    }

    static int checkThreshold(long checks) {
        if (checks < 1 || checks > MAX_THRESHOLD) {
            throw new IllegalArgumentException(checks + " checks is out of range: use 1 to " + MAX_THRESHOLD);
        }
        return (int) checks;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return "GET " + probePath + " every " + interval.toSeconds() + " s, " + timeout.toSeconds()
                + " s timeout; out of service after " + unhealthyThreshold + " failed checks in a row, back after "
                + healthyThreshold + " successful ones"
                + upstreamProbes.stream().map(probe -> "; " + probe.describe()).collect(Collectors.joining());
    }
}
