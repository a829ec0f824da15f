package dev.mcpd.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * podman as the container tests run it: {@code --runtime runc} (crun refuses this kernel's hybrid cgroups),
 * ulimits set explicitly (podman's defaults exceed what this sandbox grants), {@code --format docker} for builds (the
 * OCI format drops HEALTHCHECK). Where podman cannot run, or a stand-in image is missing, the calling test is skipped
 * and says why.
 */
final class Podman {

    static final List<String> LIMITS = List.of("--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096");
    /** The images deploy/docker/standin-images.sh makes where Docker Hub cannot be reached. */
    static final List<String> BASES = List.of("docker.io/library/maven:3.9-eclipse-temurin-17",
            "docker.io/library/eclipse-temurin:17-jre");
    static final String POSTGRES = "docker.io/library/postgres:16";
    static final String KAFKA = "docker.io/apache/kafka:3.9.1";

    record Result(int status, String output) {
    }

    private Podman() {
    }

    /** {@code podman --runtime runc ARGS}. */
    static Result podman(Duration deadline, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("podman", "--runtime", "runc"));
        command.addAll(List.of(args));
        return run(deadline, command, Map.of());
    }

    /** Any command, its output and status; a command past its deadline is killed and reported as status -1. */
    static Result run(Duration deadline, List<String> command, Map<String, String> environment)
            throws IOException, InterruptedException {
        Path output = Files.createTempFile("mcpd-podman", ".log");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            builder.environment().putAll(environment);
            Process process = builder.start();
            if (!process.waitFor(deadline.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                return new Result(-1, String.join(" ", command) + " did not end in " + deadline + ":\n"
                        + Files.readString(output, StandardCharsets.UTF_8));
            }
            return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }

    /** Skips the calling test unless podman runs containers here and every one of {@code images} is there. */
    static void assumeUsable(List<String> images) throws InterruptedException {
        Result info;
        try {
            info = podman(Duration.ofSeconds(30), "info", "--format", "{{.Host.OCIRuntime.Name}}");
        } catch (IOException e) {
            info = new Result(-1, e.getMessage());
        }
        assumeTrue(info.status() == 0, "podman cannot run here: " + info.output().strip());
        for (String image : images) {
            Result exists;
            try {
                exists = podman(Duration.ofSeconds(30), "image", "exists", image);
            } catch (IOException e) {
                exists = new Result(-1, e.getMessage());
            }
            assumeTrue(exists.status() == 0, "no image " + image + ": run deploy/docker/standin-images.sh"
                    + " (.ci/run does)");
        }
    }

    /** Builds the unchanged deploy/docker/Dockerfile from the repository root as {@code tag}. */
    static void build(String tag) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("build", "--network", "host", "--format", "docker"));
        args.addAll(LIMITS);
        args.addAll(List.of("-f", "deploy/docker/Dockerfile", "-t", tag, "."));
        Result build = podman(Duration.ofMinutes(10), args.toArray(String[]::new));
        assertEquals(0, build.status(), "podman build:\n" + build.output());
    }
}
