package dev.mcpd.config;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A Kafka topic and the brokers to find it through: {@code kafka://HOST:PORT[,HOST:PORT…]/TOPIC}, or
 * {@code kafkas://…} for TLS. Java's {@link URI} reads such an address as one opaque authority (no host), so its
 * parts are read here.
 *
 * @param brokers the bootstrap brokers, as given, each {@code host:port}
 * @param topic   the topic
 * @param tls     whether the brokers are spoken to over TLS ({@code kafkas://})
 */
public record KafkaAddress(List<String> brokers, String topic, boolean tls) {

    /** Kafka's own rule for a topic's name. */
    private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\\[[0-9A-Fa-f:.]+]");

    public KafkaAddress {
        brokers = List.copyOf(brokers);
    }

    /** Whether {@code address} names a Kafka topic rather than an HTTP upstream. */
    public static boolean isKafka(URI address) {
        // Asked for every delivery: compared without a lower-cased copy.
        String scheme = address.getScheme();
        return "kafka".equalsIgnoreCase(scheme) || "kafkas".equalsIgnoreCase(scheme);
    }

    /** Reads {@code address}; {@link IllegalArgumentException} with a one-line reason when it is not one. */
    public static KafkaAddress parse(URI address) {
        if (!isKafka(address)) {
            throw new IllegalArgumentException("a Kafka address starts with kafka:// or kafkas://");
        }
        String rest = address.getRawSchemeSpecificPart();
        if (address.getRawFragment() != null || address.getRawQuery() != null || !rest.startsWith("//")) {
            throw new IllegalArgumentException("write a Kafka address as kafka://HOST:PORT[,HOST:PORT…]/TOPIC");
        }
        rest = rest.substring(2);
        int slash = rest.indexOf('/');
        if (slash < 0 || slash == rest.length() - 1) {
            throw new IllegalArgumentException("a Kafka address names its topic: kafka://HOST:PORT/TOPIC");
        }
        String topic = rest.substring(slash + 1);
        if (!TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
            throw new IllegalArgumentException("'" + abbreviate(topic) + "' is not a Kafka topic name (letters,"
                    + " digits, '.', '_' and '-', at most 249)");
        }
        List<String> brokers = new ArrayList<>();
        for (String broker : rest.substring(0, slash).split(",", -1)) {
            brokers.add(checkBroker(broker));
        }
        return new KafkaAddress(brokers, topic, address.getScheme().equalsIgnoreCase("kafkas"));
    }

    private static String checkBroker(String broker) {
        if (broker.contains("@")) {
            throw new IllegalArgumentException("a Kafka address carries no credentials: give TLS client files instead");
        }
        int colon = broker.lastIndexOf(':');
        String host = colon < 0 ? broker : broker.substring(0, colon);
        if (colon < 0 || !HOST.matcher(host).matches()) {
            throw new IllegalArgumentException("'" + abbreviate(broker) + "' is not a broker's HOST:PORT");
        }
        int port;
        try {
            port = Integer.parseInt(broker.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("'" + abbreviate(broker) + "' has no port from 1 to 65535");
        }
        return broker;
    }

    /** The brokers as a Kafka client's {@code bootstrap.servers}. */
    public String bootstrap() {
        return String.join(",", brokers);
    }

    @Override
    public String toString() {
        return (tls ? "kafkas://" : "kafka://") + bootstrap() + "/" + topic;
    }

    private static String abbreviate(String text) {
        return text.length() <= 64 ? text : text.substring(0, 64) + "…";
    }
}
