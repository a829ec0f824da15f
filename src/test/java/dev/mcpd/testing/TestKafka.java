package dev.mcpd.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A real Kafka broker for the tests: one KRaft node (broker and controller in one) in this JVM, on loopback ports,
 * its log in a folder of its own. A test parameter of this type, with {@code @ExtendWith(TestKafka.Shared.class)},
 * is the broker every test of the run shares (each test makes its own topics); a test that stops or restarts the
 * broker starts one of its own with {@link #start(Path)}. A restart keeps the ports and the log, as a broker that comes back does.
 */
public final class TestKafka implements AutoCloseable {

    private final Path dir;
    private final boolean ownsDir;
    private final int brokerPort;
    private final int controllerPort;
    private KafkaRaftServer server;

    private TestKafka(Path dir, boolean ownsDir) {
        this(dir, ownsDir, Ports.free(), Ports.free());
    }

    /** The certificate and key of its TLS listener, and the authority its clients' certificates come from; or null. */
    private TestCertificates.Pair tlsIdentity;
    private Path clientAuthority;
    private int tlsPort;

    /**
     * A broker of its own with a TLS listener too ({@link #tlsBootstrap()}): {@code identity} its certificate and key,
     * and clients must present a certificate of {@code clientAuthority}. Its plain listener stays, for the tests'
     * own clients.
     */
    public static TestKafka startWithTls(Path dir, TestCertificates.Pair identity, Path clientAuthority) {
        TestKafka kafka = new TestKafka(dir, false);
        kafka.tlsIdentity = identity;
        kafka.clientAuthority = clientAuthority;
        kafka.tlsPort = Ports.free();
        kafka.startServer();
        return kafka;
    }

    /** {@code 127.0.0.1:port} of the TLS listener ({@link #startWithTls}). */
    public String tlsBootstrap() {
        return "127.0.0.1:" + tlsPort;
    }

    private TestKafka(Path dir, boolean ownsDir, int brokerPort, int controllerPort) {
        this.dir = dir;
        this.ownsDir = ownsDir;
        this.brokerPort = brokerPort;
        this.controllerPort = controllerPort;
    }

    /**
     * The same broker as a process of its own, for the benchmarks (bench/kafka.py): {@code DIR BROKER_PORT
     * CONTROLLER_PORT [TOPIC PARTITIONS]}; says {@code ready} on standard output once it serves (and the topic exists),
     * and runs until it is killed. Started again on the same folder and ports, it keeps its log.
     */
    public static void main(String[] args) throws Exception {
        TestKafka kafka = new TestKafka(Path.of(args[0]), false, Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        kafka.startServer();
        if (args.length > 4) {
            try (Admin admin = kafka.admin()) {
                if (!admin.listTopics().names().get().contains(args[3])) {
                    kafka.createTopic(args[3], Integer.parseInt(args[4]), Map.of());
                }
            }
        }
        System.out.println("ready " + kafka.bootstrap());
        Thread.currentThread().join();
    }

    /** A broker of its own, with its log in {@code dir}, running when this returns. */
    public static TestKafka start(Path dir) {
        TestKafka kafka = new TestKafka(dir, false);
        kafka.startServer();
        return kafka;
    }

    /** Resolves a {@code TestKafka} parameter to the broker every test of the run shares. */
    public static final class Shared implements ParameterResolver {

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == TestKafka.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return shared(context);
        }
    }

    /** The broker every test of this run shares, started at the first call and stopped when the run ends. */
    private static TestKafka shared(ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(TestKafka.class, key -> {
                    try {
                        TestKafka kafka = new TestKafka(Files.createTempDirectory("mcpd-kafka"), true);
                        kafka.startServer();
                        return kafka;
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, TestKafka.class);
    }

    /** {@code host:port} of the broker, as a client's bootstrap servers. */
    public String bootstrap() {
        return "127.0.0.1:" + brokerPort;
    }

    /** Creates a topic with {@code partitions} partitions and the given topic settings, and waits until it exists. */
    public void createTopic(String name, int partitions, Map<String, String> settings) {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(settings))).all().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topic " + name + ": " + e.getCause().getMessage(), e);
        }
    }

    /**
     * Every record of {@code topic}, read from the start by a consumer of its own until there are {@code expected}
     * (or 30 s have passed: then the test fails on the count), in partition order.
     */
    public List<ConsumerRecord<String, byte[]>> read(String topic, int expected) {
        List<ConsumerRecord<String, byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(), ConsumerConfig.GROUP_ID_CONFIG,
                "test-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (read.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        if (read.size() != expected) {
            throw new AssertionError(topic + " holds " + read.size() + " records read, not " + expected);
        }
        return read;
    }

    /** How many records {@code topic} holds now: the sum of its partitions' end offsets (no transactions here). */
    public long recordCount(String topic) {
        try (Admin admin = admin()) {
            var partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            partitions.forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
            return admin.listOffsets(latest).all().get().values().stream()
                    .mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset).sum();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot count " + topic + ": " + e.getCause().getMessage(), e);
        }
    }

    /** An admin client of this broker: the caller closes it. */
    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000));
    }

    /** Stops the broker (a controlled shutdown); its log stays for {@link #restart()}. */
    public void stop() {
        if (server != null) {
            server.shutdown();
            server.awaitShutdown();
            server = null;
        }
    }

    /** Starts the broker again on the same ports and log. */
    public void restart() {
        stop();
        startServer();
    }

    private void startServer() {
        Properties settings = new Properties();
        settings.put("process.roles", "broker,controller");
        settings.put("node.id", "1");
        settings.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        settings.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        settings.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        settings.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        settings.put("controller.listener.names", "CONTROLLER");
        settings.put("inter.broker.listener.name", "PLAINTEXT");
        settings.put("log.dirs", dir.resolve("log").toString());
        settings.put("offsets.topic.replication.factor", "1");
        settings.put("offsets.topic.num.partitions", "1");
        settings.put("transaction.state.log.replication.factor", "1");
        settings.put("transaction.state.log.min.isr", "1");
        settings.put("transaction.state.log.num.partitions", "1");
        settings.put("group.initial.rebalance.delay.ms", "0");
        settings.put("group.min.session.timeout.ms", "1000");
        settings.put("auto.create.topics.enable", "false");
        settings.put("broker.heartbeat.interval.ms", "500");
        settings.put("broker.session.timeout.ms", "3000");
        settings.put("log.cleaner.dedupe.buffer.size", "2097152");
        settings.put("num.network.threads", "2");
        settings.put("num.io.threads", "2");
        if (tlsIdentity != null) {
            settings.put("listeners", settings.get("listeners") + ",SSL://127.0.0.1:" + tlsPort);
            settings.put("advertised.listeners", settings.get("advertised.listeners") + ",SSL://127.0.0.1:" + tlsPort);
            settings.put("listener.security.protocol.map", settings.get("listener.security.protocol.map")
                    + ",SSL:SSL");
            try {
                settings.put("ssl.keystore.type", "PEM");
                settings.put("ssl.keystore.certificate.chain", Files.readString(tlsIdentity.cert()));
                settings.put("ssl.keystore.key", Files.readString(tlsIdentity.key()));
                settings.put("ssl.truststore.type", "PEM");
                settings.put("ssl.truststore.certificates", Files.readString(clientAuthority));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            settings.put("ssl.client.auth", "required");
        }
        KafkaConfig config = new KafkaConfig(settings, false);
        try {
            if (!Files.exists(dir.resolve("log").resolve("meta.properties"))) {
                Files.createDirectories(dir.resolve("log"));
                new Formatter().setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                        .setNodeId(1).setClusterId(Uuid.randomUuid().toString())
                        .addDirectory(dir.resolve("log").toString()).setMetadataLogDirectory(config.metadataLogDir())
                        .setControllerListenerName("CONTROLLER").run();
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot format the broker's log in " + dir + ": " + e.getMessage(), e);
        }
        server = new KafkaRaftServer(config, Time.SYSTEM);
        server.startup();
    }

    @Override
    public void close() {
        stop();
        if (ownsDir) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
