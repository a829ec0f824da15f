package dev.mcpd.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The Kafka topic a collector consumes beside its HTTP ingest, and the consumer group it reads it as.
 *
 * @param url   {@code kafka://HOST:PORT[,HOST:PORT…]/TOPIC} ({@code --source}), or none
 * @param group the consumer group ({@code --source-group}): the collectors of one store share it, and so share the
 *              topic's partitions
 */
public record SourceTopic(Optional<URI> url, String group) {

    /** Kafka's own rule for a group id is "any string"; this keeps it to what reads well in logs and tools. */
    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9._-]{1,249}");

    public SourceTopic {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(group, "group");
        url.ifPresent(source -> OptionValues.check(Options.SOURCE, () -> checkSource(source)));
        String name = group;
        OptionValues.check(Options.SOURCE_GROUP, () -> checkGroup(name));
    }

    /** No source: the collector takes HTTP alone. */
    public static SourceTopic none() {
        return new SourceTopic(Optional.empty(), Options.SOURCE_GROUP.defaultValue().orElseThrow());
    }

    /** The topic and its brokers, when there is a source. */
    public Optional<KafkaAddress> address() {
        return url.map(KafkaAddress::parse);
    }

    static URI parseSource(String text) {
        try {
            return checkSource(new URI(text.strip()));
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("\"" + text.strip() + "\" is not a Kafka address: use"
                    + " kafka://HOST:PORT[,HOST:PORT]/TOPIC");
        }
    }

    private static URI checkSource(URI source) {
        if (!"kafka".equalsIgnoreCase(source.getScheme())) {
            throw new IllegalArgumentException("\"" + source + "\" is not a Kafka address: use"
                    + " kafka://HOST:PORT[,HOST:PORT]/TOPIC (the collector speaks to its brokers in plain Kafka)");
        }
        KafkaAddress.parse(source);
        return source;
    }

    static String checkGroup(String group) {
        if (!GROUP.matcher(group).matches()) {
            throw new IllegalArgumentException("\"" + group + "\" is not a group name: use letters, digits, '.', '_'"
                    + " and '-', at most 249");
        }
        return group;
    }

    /** What {@code mcpd config} says of it. */
    String describe() {
        return url.map(source -> "consumes " + KafkaAddress.parse(source) + " as group " + group
                        + " (each record archived as its request; offsets committed after the store's)")
                .orElse("HTTP only (consume a Kafka topic too with --source)");
    }
}
