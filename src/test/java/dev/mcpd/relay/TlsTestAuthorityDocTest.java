package dev.mcpd.relay;

import static dev.mcpd.testing.TestTuning.PATIENCE;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpd.cli.WrittenCommand;
import dev.mcpd.collector.CollectorApplication;
import dev.mcpd.testing.DocExample;
import dev.mcpd.testing.Ports;
import dev.mcpd.testing.TestCertificates;
import dev.mcpd.testing.TestTuning;
import dev.mcpd.tls.TlsMaterial;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.AlgorithmParameters;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/tls.md's test authority, made by its openssl steps as written, and its {@code mcpd serve} and {@code mcpd relay}
 * commands, parsed by the real command line and started here with those very files: the relay delivers over mutual
 * TLS, and pointed at a host the collector's certificate does not name it says what the document quotes.
 */
class TlsTestAuthorityDocTest {

    private static final Path DOCUMENT = Path.of("docs/tls.md");
    private static final String WRONG_HOST = "TLS: the upstream's certificate does not name the host in its"
            + " --upstream URL (its subject alternative names must)";
    private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final int DIGITAL_SIGNATURE = 0;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    /** Where the document's steps ran: the operator's current directory. */
    private Path pki;

    private record Shell(int status, String output) {
    }

    @BeforeEach
    void makeTheAuthorityAsTheDocumentSays() throws Exception {
        assumeTrue(TestCertificates.available(), "openssl is not on the PATH: the document's steps run it (.ci/run"
                + " installs it)");
        pki = Files.createDirectories(dir.resolve("pki"));
        // -e: a step that fails fails here, though an operator's shell would go on to the next.
        Shell made = sh(DocExample.block(DOCUMENT, "tls-test-authority"), "-e");
        assertEquals(0, made.status(), made.output());
    }

    @Test
    void theStepsMakeTheFilesTheDocumentNamesWithTheirNamesAndUsages() throws Exception {
        try (Stream<Path> files = Files.list(pki)) {
            assertEquals(Set.of("ca.crt", "ca.key", "ca.srl", "collector.crt", "collector.key", "relay.crt",
                    "relay.key"), files.map(f -> f.getFileName().toString()).collect(Collectors.toSet()));
        }
        X509Certificate authority = certificate("ca.crt");
        X509Certificate collector = certificate("collector.crt");
        X509Certificate relay = certificate("relay.crt");
        assertTrue(authority.getBasicConstraints() >= 0, "the authority is a CA");
        for (X509Certificate signed : List.of(collector, relay)) {
            signed.verify(authority.getPublicKey());
            assertEquals(-1, signed.getBasicConstraints(), "not an authority");
            assertTrue(signed.getKeyUsage()[DIGITAL_SIGNATURE]);
        }
        assertEquals(Set.of(List.of(2, "localhost"), List.of(7, "127.0.0.1")), Set.copyOf(
                collector.getSubjectAlternativeNames()), "DNS and IP names");
        assertEquals(List.of(SERVER_AUTH), collector.getExtendedKeyUsage());
        assertEquals(List.of(CLIENT_AUTH), relay.getExtendedKeyUsage());
        assertNull(relay.getSubjectAlternativeNames(), "a client's certificate names no host");
        AlgorithmParameters named = AlgorithmParameters.getInstance("EC");
        named.init(new ECGenParameterSpec("secp256r1"));
        ECParameterSpec p256 = named.getParameterSpec(ECParameterSpec.class);
        for (X509Certificate certificate : List.of(authority, collector, relay)) {
            ECParameterSpec curve = ((ECPublicKey) certificate.getPublicKey()).getParams();
            assertEquals(p256.getOrder(), curve.getOrder(), "P-256");
            assertEquals(p256.getGenerator(), curve.getGenerator(), "P-256");
            assertTrue(Duration.between(certificate.getNotBefore().toInstant(), certificate.getNotAfter().toInstant())
                    .toDays() <= 825, "825 days or less");
        }
    }

    @Test
    void theDocumentedCommandsDeliverOverMutualTlsWithThoseFiles() throws Exception {
        int collectorPort = Ports.free();
        int relayPort = Ports.free();
        Map<String, String> ports = Map.of(":4318", ":" + collectorPort, ":4317", ":" + relayPort);
        WrittenCommand.Parsed serve = parse("serve", ports, "collector.db");
        WrittenCommand.Parsed relayCommand = parse("relay", ports, "relay.db");
        try (CollectorApplication collector = CollectorApplication.start(serve.config());
             RunningRelay relay = RunningRelay.start(relayCommand.config(), TlsTest.FAST)) {
            List<String> check = DocExample.block(DOCUMENT, "tls-mutual-check").strip().lines().toList();
            assertEquals(2, check.size(), "a request to the relay, a question to the collector");
            Shell sent = sh(written(check.get(0), ports));
            assertEquals(0, sent.status(), sent.output());
            HttpClient asTheRelay = clientPresenting("relay.crt", "relay.key");
            URI stats = URI.create("https://localhost:" + collectorPort + "/v1/stats");
            await().atMost(PATIENCE).until(() -> JSON.readTree(asTheRelay.send(HttpRequest.newBuilder(stats).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).get("batches").asLong() == 1);

            Shell asked = sh(written(check.get(1), ports));
            assertEquals(0, asked.status(), asked.output());
            assertEquals("{\"batches\":1,\"events\":1,\"duplicates\":0,\"conflicts\":0}", asked.output().strip());
            assertTrue(flowed().contains("prints `" + asked.output().strip() + "` once the relay delivered"),
                    "the document quotes what it prints");
            Shell withoutCertificate = sh(written(check.get(1), ports).replace("--cert relay.crt --key relay.key",
                    ""));
            assertTrue(withoutCertificate.status() != 0, "the collector admits no client without a certificate");
            assertEquals("", withoutCertificate.output());
            assertTrue(HealthCheckTest.upstream(relay, 1).get("inService").asBoolean());
        }
    }

    @Test
    void aRelayPointedAtAHostTheCertificateDoesNotNameSaysSoInTheDocumentsWords() throws Exception {
        assumeTrue(listensOn("127.0.0.2"), "127.0.0.2 is not a loopback address here: the collector that"
                + " certificate does not name cannot listen there");
        assertTrue(flowed().contains("`" + WRONG_HOST + "`"), "the document quotes the message");
        int collectorPort = Ports.free();
        // The same commands, the collector at a loopback address its certificate lacks and the relay's URL naming it.
        Map<String, String> elsewhere = new LinkedHashMap<>();
        elsewhere.put("127.0.0.1:4318", "127.0.0.2:" + collectorPort);
        elsewhere.put("localhost:4318", "127.0.0.2:" + collectorPort);
        elsewhere.put(":4317", ":" + Ports.free());
        WrittenCommand.Parsed serve = parse("serve", elsewhere, "collector.db");
        WrittenCommand.Parsed relayCommand = parse("relay", elsewhere, "relay.db");
        assertEquals(List.of(URI.create("https://127.0.0.2:" + collectorPort)),
                relayCommand.config().relay().upstreams());
        try (CollectorApplication collector = CollectorApplication.start(serve.config());
             // /readyz gives the reason once no upstream was up for its window: 2 s, not 30, for a quick answer.
             RunningRelay relay = RunningRelay.start(relayCommand.config(), TlsTest.FAST.withProbes(
                     Duration.ofMillis(200), Duration.ofSeconds(2)))) {
            assertEquals(202, DeliveryTest.post(relay, "/v1/ingest", "{\"events\":[{\"msg\":\"hello\"}]}"
                    .getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json"));
            await().atMost(PATIENCE).until(() -> HealthCheckTest.upstream(relay, 1).path("lastCheck").path("reason")
                    .asText().contains(WRONG_HOST) && readyz(relay).contains(WRONG_HOST));
            JsonNode upstream = HealthCheckTest.upstream(relay, 1);
            assertEquals("failure", upstream.get("lastCheck").get("result").asText(), upstream.toString());
            assertEquals(0, relay.application().deadLetters().count(), "a failed handshake is retried");
            assertEquals(1, relay.spooled().size(), "the request waits in the spool");
        }
    }

    /** The document's text with its line breaks undone, as a reader reads it. */
    private static String flowed() throws IOException {
        return Files.readString(DOCUMENT).replaceAll("\\s+", " ");
    }

    /** The documented {@code mcpd role …} command, its ports or hosts replaced, parsed by the real command line. */
    private WrittenCommand.Parsed parse(String role, Map<String, String> replacements, String dataFile)
            throws IOException {
        String block = DocExample.block(DOCUMENT, "tls-mutual-run");
        assertFalse(block.contains("'") || block.contains("\""), "nothing quoted: words are split at spaces");
        List<String> command = block.replace("\\\n", " ").lines().filter(line -> !line.isBlank())
                .map(line -> List.of(line.strip().split("\\s+")))
                .filter(words -> words.size() > 1 && words.get(1).equals(role)).findFirst()
                .orElseThrow(() -> new AssertionError("the document has no mcpd " + role));
        assertEquals("mcpd", command.get(0));
        List<String> words = new ArrayList<>();
        for (String word : command.subList(1, command.size())) {
            String replaced = written(word, replacements);
            // The files are named as the operator's current directory holds them: the one the steps ran in.
            words.add(Files.isRegularFile(pki.resolve(replaced)) ? pki.resolve(replaced).toString() : replaced);
        }
        WrittenCommand.Parsed parsed = WrittenCommand.parse(Map.of("MCPD_DATA", dir.resolve(dataFile).toString()),
                words);
        assertEquals(role, parsed.role());
        return parsed;
    }

    private static String written(String text, Map<String, String> replacements) {
        for (Map.Entry<String, String> replacement : replacements.entrySet()) {
            text = text.replace(replacement.getKey(), replacement.getValue());
        }
        return text;
    }

    private Shell sh(String script, String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of("sh"));
        command.addAll(List.of(options));
        command.addAll(List.of("-c", script));
        Process process = new ProcessBuilder(command).directory(pki.toFile()).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output;
        try (InputStream out = process.getInputStream()) {
            output = new String(out.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "sh finished: " + output);
        return new Shell(process.exitValue(), output);
    }

    private X509Certificate certificate(String file) throws Exception {
        try (InputStream in = Files.newInputStream(pki.resolve(file))) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private HttpClient clientPresenting(String cert, String key) {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .sslContext(TlsMaterial.sslContext(Optional.of(TlsMaterial.Identity.read("test", pki.resolve(cert),
                        pki.resolve(key))), Optional.of(TlsMaterial.Authorities.read("test", pki.resolve("ca.crt")))))
                .build();
    }

    private static String readyz(RunningRelay relay) throws Exception {
        return TestTuning.HTTP.send(HttpRequest.newBuilder(relay.uri("/readyz")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static boolean listensOn(String address) {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(address))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
