package dev.mcpd.cli;

import dev.mcpd.config.ConfigException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Turns every error into one line on stderr, {@code mcpd: what is wrong}, and an exit status — never a
 * stack trace. An operator reads the line in a terminal or a container log; a trace there hides
 * the one sentence that says what to fix.
 */
final class OneLineErrors implements IParameterExceptionHandler, IExecutionExceptionHandler {

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine command = ex.getCommandLine();
        String help = " (see '" + command.getCommandSpec().qualifiedName() + " --help')";
        print(command, unmatched(ex).orElseGet(() -> lowerFirst(firstLine(ex.getMessage()))) + help);
        return Mcpd.EXIT_USAGE;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine command, ParseResult parseResult) {
        if (ex instanceof ConfigException) {
            print(command, ex.getMessage());
            return Mcpd.EXIT_USAGE;
        }
        String message = ex.getMessage() == null ? "" : ": " + firstLine(ex.getMessage());
        print(command, command.getCommandName() + " failed: " + ex.getClass().getSimpleName() + message);
        return Mcpd.EXIT_FAILURE;
    }

    /**
     * picocli calls both a misspelt command and a stray word "unmatched argument at index N"; say which it
     * is. (Unknown options keep picocli's own message, which is clear.)
     */
    private static Optional<String> unmatched(ParameterException ex) {
        if (!(ex instanceof UnmatchedArgumentException unmatched) || unmatched.getUnmatched().isEmpty()
                || unmatched.getUnmatched().get(0).startsWith("-")) {
            return Optional.empty();
        }
        String word = unmatched.getUnmatched().get(0);
        Set<String> commands = ex.getCommandLine().getSubcommands().keySet();
        if (commands.isEmpty()) {
            return Optional.of("unexpected argument '" + word + "'");
        }
        List<String> names = List.copyOf(commands);
        String choices = names.size() == 1 ? names.get(0)
                : String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
        return Optional.of("unknown command '" + word + "': use " + choices);
    }

    private static void print(CommandLine command, String line) {
        PrintWriter err = command.getErr();
        err.println("mcpd: " + line);
        err.flush();
    }

    private static String firstLine(String message) {
        return message == null ? "" : message.lines().findFirst().orElse("");
    }

    private static String lowerFirst(String text) {
        return text.isEmpty() ? text : Character.toLowerCase(text.charAt(0)) + text.substring(1);
    }
}
