package dev.mcpd.deploy;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.mcpd.cli.Mcpd;
import dev.mcpd.config.Option;
import dev.mcpd.config.Options;
import dev.mcpd.testing.LocalTool;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The deployment files under {@code deploy/} as the tests read them: the repository root, YAML (SnakeYAML Engine,
 * YAML 1.2, duplicate keys refused), the Dockerfile's instructions, the MCPD_* variables mcpd really reads, and the
 * real command line run in this JVM.
 */
final class DeployFiles {

    /** A name of an MCPD_* variable, as written in a file. */
    static final Pattern MCPD_VARIABLE = Pattern.compile("\\bMCPD_[A-Z0-9_]+\\b");
    /** A Prometheus metric name of mcpd's, as written in a PromQL expression. */
    static final Pattern MCPD_METRIC = Pattern.compile("\\bmcpd_[a-z0-9_]+\\b");

    private DeployFiles() {
    }

    /** The repository root: the nearest folder, from the working directory up, holding pom.xml and deploy/. */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("pom.xml")) && Files.isDirectory(d.resolve("deploy"))) {
                return d;
            }
        }
        throw new IllegalStateException("no pom.xml with a deploy/ folder above " + dir);
    }

    static Path file(String relative) {
        Path path = root().resolve(relative);
        assertTrue(Files.isRegularFile(path), relative + " exists");
        return path;
    }

    static String read(String relative) {
        try {
            return Files.readString(file(relative), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One YAML document; a syntax error or a duplicate key fails the test with the file's name. */
    static Object yaml(String relative) {
        LoadSettings settings = LoadSettings.builder().setLabel(relative).setAllowDuplicateKeys(false).build();
        try {
            return new Load(settings).loadFromString(read(relative));
        } catch (RuntimeException e) {
            return fail(relative + " is not valid YAML: " + e.getMessage());
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> yamlMap(String relative) {
        Object document = yaml(relative);
        assertTrue(document instanceof Map, relative + " is a YAML mapping");
        return (Map<String, Object>) document;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value, String what) {
        assertTrue(value instanceof Map, what + " is a mapping, not " + value);
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value, String what) {
        assertTrue(value instanceof List, what + " is a list, not " + value);
        return (List<Object>) value;
    }

    /**
     * A tool the deploy tests run when the machine has it: the executable {@code environmentVariable} names (.ci/run
     * sets it), else {@code name} on the PATH; empty when neither is there.
     */
    static Optional<String> tool(String environmentVariable, String name) {
        return LocalTool.find(environmentVariable, name);
    }

    // ---- what mcpd reads

    /** The variables of mcpd's options, as the configuration defines them. */
    static Set<String> optionVariables() {
        return Options.ALL.stream().map(Option::environmentVariable).collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * The variables the launcher and the logging read beside the options: those {@code bin/mcpd} expands
     * ({@code MCPD_JAR}, {@code MCPD_JAVA_OPTS}) and those logback.xml substitutes ({@code MCPD_LOG_LEVEL}).
     */
    static Set<String> launcherVariables() {
        Set<String> names = new TreeSet<>();
        Matcher launcher = Pattern.compile("\\$\\{?(MCPD_[A-Z0-9_]+)").matcher(read("bin/mcpd"));
        while (launcher.find()) {
            names.add(launcher.group(1));
        }
        try (InputStream logback = DeployFiles.class.getResourceAsStream("/logback.xml")) {
            assertTrue(logback != null, "logback.xml is on the classpath");
            Matcher logging = Pattern.compile("\\$\\{(MCPD_[A-Z0-9_]+)")
                    .matcher(new String(logback.readAllBytes(), StandardCharsets.UTF_8));
            while (logging.find()) {
                names.add(logging.group(1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return names;
    }

    /** Every MCPD_* variable something in mcpd reads: the options' and the launcher's. */
    static Set<String> knownVariables() {
        Set<String> known = new TreeSet<>(optionVariables());
        known.addAll(launcherVariables());
        return known;
    }

    /** Every MCPD_* name written in a text. */
    static Set<String> variablesIn(String text) {
        return matches(MCPD_VARIABLE, text);
    }

    static Set<String> matches(Pattern pattern, String text) {
        Set<String> found = new TreeSet<>();
        Matcher matcher = pattern.matcher(text);
        while (matcher.find()) {
            found.add(matcher.group());
        }
        return found;
    }

    /** What one run of the real {@code mcpd} command line printed, and its exit status. */
    record CliRun(int status, String out, String err) {
        String section(String name) {
            return out.lines().filter(line -> line.startsWith(name + " ")).findFirst()
                    .orElseGet(() -> fail("no '" + name + "' line in:\n" + out));
        }
    }

    /** Runs {@code mcpd args} in this JVM against exactly {@code environment}. */
    static CliRun mcpd(Map<String, String> environment, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Mcpd.execute(environment, new PrintWriter(out), new PrintWriter(err), args);
        return new CliRun(status, out.toString(), err.toString());
    }

    // ---- the Dockerfile

    /** One instruction: its keyword (upper case) and its arguments, continuation lines joined. */
    record Instruction(String keyword, String arguments) {
    }

    static List<Instruction> dockerfile(String relative) {
        List<Instruction> instructions = new ArrayList<>();
        StringBuilder pending = new StringBuilder();
        for (String line : read(relative).split("\n", -1)) {
            String stripped = line.strip();
            if (stripped.startsWith("#") || (stripped.isEmpty() && pending.length() == 0)) {
                continue; // comments, also between continuation lines, as Docker reads them
            }
            if (stripped.endsWith("\\")) {
                pending.append(stripped, 0, stripped.length() - 1).append(' ');
                continue;
            }
            pending.append(stripped);
            String text = pending.toString().strip();
            pending.setLength(0);
            if (text.isEmpty()) {
                continue;
            }
            int space = text.indexOf(' ');
            instructions.add(space < 0 ? new Instruction(text.toUpperCase(), "")
                    : new Instruction(text.substring(0, space).toUpperCase(), text.substring(space + 1).strip()));
        }
        return instructions;
    }

    /** The variables the ENV instructions set, in order ({@code ENV K=V K2="V 2"} or the legacy {@code ENV K V}). */
    static Map<String, String> dockerfileEnvironment(List<Instruction> instructions) {
        Map<String, String> environment = new LinkedHashMap<>();
        Pattern pair = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\\S*)");
        for (Instruction instruction : instructions) {
            if (!instruction.keyword().equals("ENV")) {
                continue;
            }
            String arguments = instruction.arguments();
            if (!arguments.matches("^[A-Za-z_][A-Za-z0-9_]*=.*")) {
                String[] legacy = arguments.split("\\s+", 2);
                environment.put(legacy[0], legacy.length > 1 ? legacy[1] : "");
                continue;
            }
            Matcher matcher = pair.matcher(arguments);
            while (matcher.find()) {
                String value = matcher.group(2);
                if (value.length() >= 2 && (value.startsWith("\"") || value.startsWith("'"))) {
                    value = value.substring(1, value.length() - 1);
                }
                environment.put(matcher.group(1), value);
            }
        }
        return environment;
    }

}
