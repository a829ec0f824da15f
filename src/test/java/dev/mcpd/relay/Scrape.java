package dev.mcpd.relay;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalDouble;

/** A Prometheus text exposition, read back: each sample's value and each family's TYPE and HELP. */
record Scrape(String text, Map<String, Double> samples, Map<String, String> types, Map<String, String> helps) {

    static Scrape of(String text) {
        Map<String, Double> samples = new HashMap<>();
        Map<String, String> types = new HashMap<>();
        Map<String, String> helps = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                types.put(parts[2], parts[3]);
            } else if (line.startsWith("# HELP ")) {
                String rest = line.substring(7);
                int space = rest.indexOf(' ');
                helps.put(rest.substring(0, space), rest.substring(space + 1));
            } else if (!line.isBlank() && !line.startsWith("#")) {
                int space = line.lastIndexOf(' ');
                samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        return new Scrape(text, samples, types, helps);
    }

    /** The value of a sample, e.g. {@code mcpd_relay_delivered_total{order="2",upstream="http://…"}}. */
    OptionalDouble value(String sample) {
        Double value = samples.get(sample);
        return value == null ? OptionalDouble.empty() : OptionalDouble.of(value);
    }

    /** The sample of a family for one upstream, labels as Micrometer orders them (alphabetically). */
    static String upstreamSample(String family, int order, String url) {
        return family + "{order=\"" + order + "\",upstream=\"" + url + "\"}";
    }
}
