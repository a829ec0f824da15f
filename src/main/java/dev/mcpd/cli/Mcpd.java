package dev.mcpd.cli;

import dev.mcpd.collector.CollectorApplication;
import dev.mcpd.config.McpdConfig;
import dev.mcpd.config.McpdVersion;
import dev.mcpd.config.Options;
import dev.mcpd.config.Role;
import dev.mcpd.relay.RelayApplication;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.ToIntFunction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code mcpd} command line: {@code mcpd [OPTIONS] COMMAND [OPTIONS]}.
 *
 * <p>The environment is passed in rather than read here and there, so a test can run any command line
 * against any environment and read what it prints.
 */
@Command(name = "mcpd", mixinStandardHelpOptions = true, versionProvider = Mcpd.Version.class,
        subcommands = {RelayCommand.class, ServeCommand.class, ConfigCommand.class},
        synopsisHeading = "Usage: ",
        customSynopsis = "mcpd [OPTIONS] COMMAND [OPTIONS]",
        description = {"Durable ingest relay for telemetry, and the collector it delivers to.", "Options may stand before or after the command."},
        footer = "Every option also reads MCPD_<NAME> (e.g. MCPD_SPOOL_DIR); a flag beats the variable.")
public final class Mcpd implements Callable<Integer> {
    static final String VERSION = McpdVersion.VERSION;
    static final int EXIT_OK = 0;
    /** Something went wrong while running. */
    static final int EXIT_FAILURE = 1;
    /** The command line or the configuration is wrong. */
    static final int EXIT_USAGE = 2;

    @Spec
    private CommandSpec spec;

    private final Map<String, String> environment;
    private final ToIntFunction<McpdConfig> relay;
    private final ToIntFunction<McpdConfig> serve;

    private Mcpd(Map<String, String> environment, ToIntFunction<McpdConfig> relay, ToIntFunction<McpdConfig> serve) {
        this.environment = Map.copyOf(environment);
        this.relay = relay;
        this.serve = serve;
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs a command line against this process's environment, stdout and stderr; returns the exit status. */
    public static int execute(String... args) {
        return execute(System.getenv(), writer(System.out), writer(System.err), args);
    }

    /** Runs a command line against the given environment and writers; returns the exit status. */
    public static int execute(Map<String, String> environment, PrintWriter out, PrintWriter err, String... args) {
        // Lambdas, not method references: a role's classes (Camel and all) load only when it runs.
        return execute(environment, out, err, config -> RelayApplication.run(config),
                config -> CollectorApplication.run(config), args);
    }

    /** As {@link #execute(Map, PrintWriter, PrintWriter, String...)}, with {@code relay} standing in for the relay. */
    static int execute(Map<String, String> environment, PrintWriter out, PrintWriter err,
                       ToIntFunction<McpdConfig> relay, String... args) {
        return execute(environment, out, err, relay, config -> CollectorApplication.run(config), args);
    }

    /** With stand-ins for both roles. */
    static int execute(Map<String, String> environment, PrintWriter out, PrintWriter err,
                       ToIntFunction<McpdConfig> relay, ToIntFunction<McpdConfig> serve, String... args) {
        OneLineErrors errors = new OneLineErrors();
        CommandLine commandLine = new CommandLine(new Mcpd(environment, relay, serve));
        CommandOptions.addTo(commandLine.getCommandSpec(), Options.ALL);
        CommandOptions.addTo(commandLine.getSubcommands().get("relay").getCommandSpec(), Options.of(Role.RELAY));
        CommandOptions.addTo(commandLine.getSubcommands().get("serve").getCommandSpec(), Options.of(Role.SERVE));
        CommandOptions.addTo(commandLine.getSubcommands().get("config").getCommandSpec(), Options.ALL);
        CommandLine spool = commandLine.getSubcommands().get("relay").getSubcommands().get("spool");
        CommandOptions.addTo(spool.getSubcommands().get("check").getCommandSpec(),
                List.of(Options.DATA, Options.SPOOL_DIR));
        // list asks the running relay for attempts: where it listens, its key, whether its listener speaks HTTPS.
        CommandOptions.addTo(spool.getSubcommands().get("list").getCommandSpec(), List.of(Options.DATA,
                Options.SPOOL_DIR, Options.LISTEN, Options.INGEST_KEY, Options.TLS_CERT, Options.TLS_KEY));
        CommandLine dead = commandLine.getSubcommands().get("relay").getSubcommands().get("dead");
        // "Options may stand before or after the command", the commands between included: relay spool --data D check.
        for (CommandLine group : List.of(dead, commandLine.getSubcommands().get("relay").getSubcommands().get("spool"))) {
            CommandOptions.addTo(group.getCommandSpec(), List.of(Options.DATA, Options.SPOOL_DIR));
        }
        for (String command : List.of("list", "show", "purge")) {
            CommandOptions.addTo(dead.getSubcommands().get(command).getCommandSpec(),
                    List.of(Options.DATA, Options.SPOOL_DIR));
        }
        // A replay must fit the spool's bound, so it takes the relay's --spool-max-bytes too.
        CommandOptions.addTo(dead.getSubcommands().get("replay").getCommandSpec(),
                List.of(Options.DATA, Options.SPOOL_DIR, Options.SPOOL_MAX_BYTES));
        commandLine.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST,
                Mcpd::commandList);
        commandLine
                .setOut(out)
                .setErr(err)
                // "--data a --data b" means b, as in most tools, not an error.
                .setOverwrittenOptionsAllowed(true)
                // "@name" is a key or a path here, never a file of arguments to expand.
                .setExpandAtFiles(false)
                .setParameterExceptionHandler(errors)
                .setExecutionExceptionHandler(errors);
        try {
            return commandLine.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** {@code mcpd} without a command has nothing to run. */
    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("mcpd: name a command: relay, serve or config (see 'mcpd --help')");
        err.flush();
        return EXIT_USAGE;
    }

    /**
     * The configuration of the command {@code leaf}: the flags written before it and after it (see
     * {@link CommandOptions#given}), then the environment. With a role, only that role's options may be written.
     */
    McpdConfig config(CommandSpec leaf, Optional<Role> role) {
        return McpdConfig.from(CommandOptions.given(leaf, role), environment);
    }

    /** The commands {@code mcpd --help} lists, the nested ones ({@code relay spool check}, …) among them. */
    private static String commandList(CommandLine.Help help) {
        StringBuilder list = new StringBuilder();
        for (String[] command : COMMANDS) {
            list.append(String.format(Locale.ROOT, "  %-20s%s%n", command[0], command[1]));
        }
        return list.toString();
    }

    private static final String[][] COMMANDS = {
        {"relay", "run the relay in the foreground"},
        {"relay spool check", "read-only fsck of the relay's spool; exit 1 when something is damaged"},
        {"relay spool list", "the oldest entries waiting, with their failed attempts (--limit N, --json)"},
        {"relay dead list", "the dead letters by sequence number (--json: one object per line)"},
        {"relay dead show SEQ", "everything kept about one (--body: its stored bytes, unchanged, to stdout)"},
        {"relay dead replay", "put back in the spool with their original key and credential (--all | SEQ...)"},
        {"relay dead purge", "delete dead letters for good (--all | --older-than DURATION | SEQ...)"},
        {"serve", "run the collector in the foreground"},
        {"config", "print the effective configuration, one line per section, and exit"}};

    /** Where {@code dead show --body} writes a body's bytes: this process's stdout, unencoded. */
    OutputStream bodyOut() {
        return System.out;
    }

    int runRelay(McpdConfig config) {
        return relay.applyAsInt(config);
    }

    int runServe(McpdConfig config) {
        return serve.applyAsInt(config);
    }

    private static PrintWriter writer(PrintStream stream) {
        // UTF-8 whatever the locale: messages contain '…', and container logs are read as UTF-8.
        return new PrintWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), true);
    }

    /** The version {@code --version} prints, on every command. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"mcpd " + VERSION};
        }
    }
}
