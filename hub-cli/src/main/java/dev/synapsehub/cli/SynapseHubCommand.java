package dev.synapsehub.cli;

import dev.synapsehub.journal.SnapshotReadAhead;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code synapse-hub}: with no subcommand, runs the hub; subcommands talk to one or read a journal. */
@Command(name = "synapse-hub", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        sortOptions = false, usageHelpAutoWidth = true, abbreviateSynopsis = true, footer = ExitCodes.HELP_FOOTER,
        description = {
            "Coordination hub for fleets of AI agents (wire protocol 2).",
            "",
            "Without a subcommand it runs the hub: in memory on 127.0.0.1:8876 by default, durably with --db FILE.",
            "Stop it with Ctrl-C or SIGTERM: connections close, accepted work is committed, the journal closes.",
            "If its writer thread fails it closes the same way and exits 70, for a service manager to restart it.",
            "A subcommand's options go after its name (synapse-hub who --url URI); before it only --config,"
                    + " --log-level and --log-format are taken, any other option is refused (exit 2)."},
        // the subcommands are added by commandLine(args), only when the arguments may need them
        subcommands = {})
public final class SynapseHubCommand implements Callable<Integer> {

    /**
     * The subcommands, in the order the help lists them. Picocli builds the model of every
     * subcommand it is given, by reflection over its classes: for a hub start that loaded
     * Jackson, the mesh, federation and bench classes (some 900 classes) before the first option
     * was read, so {@link #commandLine} leaves them out when no argument can reach one.
     */
    static final List<Class<?>> SUBCOMMANDS = List.of(
            OperatorCommands.Who.class, OperatorCommands.State.class, OperatorCommands.Claim.class,
            OperatorCommands.Release.class, OperatorCommands.Handoff.class,
            MessagingCommands.Send.class, MessagingCommands.Tail.class, MessagingCommands.Board.class,
            MessagingCommands.DeadLetters.class, McpCommand.class, ImportCommand.class,
            JournalCommand.class, FederationCommands.class, MeshCommand.class, BenchCommand.class,
            AutoComplete.GenerateCompletion.class);

    @Mixin
    ServeOptions serve;

    @Mixin
    FederationOptions federation;

    @Option(names = "--config", paramLabel = "FILE", order = -1,
            description = "Read option defaults from a properties file (keys are option names without dashes, "
                    + "e.g. port=8876, db=/var/lib/synapse/hub.db); a key no option reads is refused (exit 2). "
                    + "Command-line options win. Plain keys set the hub start's options; a subcommand reads only "
                    + "keys qualified with its name (synapse-hub.who.timeout=5), and no required option.")
    Path config;

    @Option(names = "--log-level", paramLabel = "LEVEL", order = -1,
            description = "Log level: OFF, ERROR, WARN, INFO (default for the hub), DEBUG, TRACE, ALL (any case; another word is "
                    + "refused); subcommands default to WARN.")
    String logLevel;

    @Spec
    CommandSpec spec;

    /** The snapshot read ahead for this start (Main), handed to the start once and then let go of. */
    private SnapshotReadAhead readAhead = SnapshotReadAhead.none();

    @Override
    public Integer call() throws Exception {
        // registered before the start, so that a SIGTERM during it is seen (StopSignal)
        if (logLevel != null) { // Main checked a command line's already; a --config file's is checked here
            String level = logLevel.strip().toUpperCase(java.util.Locale.ROOT);
            if (!Main.LOG_LEVELS.contains(level)) {
                spec.commandLine().getErr().println("synapse-hub: log-level must be one of "
                        + String.join(", ", Main.LOG_LEVELS) + ", not '" + logLevel + "'");
                return ExitCodes.USAGE;
            }
            org.slf4j.Logger root = org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            if (root instanceof ch.qos.logback.classic.Logger logback && LogSetup.configuredInCode()
                    && !logback.getLevel().toString().equals(level)) {
                root.warn("log-level {} is not used: logging started at {} before the --config file was read; give "
                        + "--log-level on the command line or set SYNAPSE_LOG_LEVEL", level, logback.getLevel());
            }
        }
        StopSignal stop = StopSignal.register();
        HubDaemon daemon = null;
        try {
            SnapshotReadAhead ahead = readAhead;
            readAhead = SnapshotReadAhead.none(); // not kept for the hub's life
            daemon = HubDaemon.start(serve, federation, stop::requested, ahead);
        } catch (HubDaemon.StoppedBeforeServing e) {
            return ExitCodes.OK; // the JVM is exiting for the signal; the journal was closed
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
            return ExitCodes.USAGE;
        } catch (dev.synapsehub.core.journal.JournalException e) {
            spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
            return ExitCodes.DATA_ERROR;
        } finally {
            if (daemon == null) {
                stop.noHub();
            }
        }
        // the close waits up to --shutdown-close-timeout for the clients' close replies: on top of the bound
        return serveUntilStopped(daemon, stop,
                WRITER_FAILURE_SHUTDOWN.plus(daemon.config().shutdownCloseTimeout()));
    }

    /**
     * How long the orderly shutdown after a writer failure may take, beyond the wait for the
     * clients' close replies, before the process halts.
     */
    static final Duration WRITER_FAILURE_SHUTDOWN = Duration.ofSeconds(15);

    /**
     * Serves until SIGTERM/Ctrl-C (after the orderly close the JVM exits with the signal's status,
     * 143 for SIGTERM) or until the writer thread fails: then the hub is closed within
     * {@code bound} (connections closed, the journal closed, nothing further accepted) and the
     * exit code is {@link ExitCodes#SOFTWARE}, so that a
     * service manager restarts it from the journal. A close that overruns the bound halts the
     * process with the same code rather than leave a hub up that cannot write.
     */
    static int serveUntilStopped(HubDaemon daemon, Duration bound) throws InterruptedException {
        return serveUntilStopped(daemon, StopSignal.register(), bound);
    }

    /** As {@link #serveUntilStopped(HubDaemon, Duration)}, with the hook registered before the start. */
    static int serveUntilStopped(HubDaemon daemon, StopSignal stop, Duration bound) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        stop.closed().thenRun(stopped::countDown);
        daemon.writerFailure().thenRun(stopped::countDown);
        stop.started(daemon);
        stopped.await();
        if (!daemon.writerFailure().isDone()) {
            return ExitCodes.OK; // the hook closed the hub
        }
        // false if a signal came as well: the hook closes the hub, and close() runs once
        stop.unregister();
        Thread closer = new Thread(() -> {
            try {
                daemon.close();
            } catch (Exception e) {
                System.err.println("synapse-hub: error during shutdown: " + e);
            }
        }, "synapse-failure-shutdown");
        closer.start();
        closer.join(bound.toMillis());
        if (closer.isAlive()) {
            System.err.println("synapse-hub: the shutdown after a writer failure took longer than " + bound
                    + "; halting");
            Runtime.getRuntime().halt(ExitCodes.SOFTWARE);
        }
        return ExitCodes.SOFTWARE;
    }

    /** Builds the command line with the {@code --config} file, if any, as the default provider. */
    static CommandLine commandLine(String[] args) {
        return commandLine(args, SnapshotReadAhead.none());
    }

    /** As {@link #commandLine(String[])}; a hub start takes its snapshot from {@code readAhead} if it read the one chosen. */
    static CommandLine commandLine(String[] args, SnapshotReadAhead readAhead) {
        Path configFile = ConfigFile.find(args);
        ConfigFile config = configFile == null ? null : ConfigFile.read(configFile);
        SynapseHubCommand hub = new SynapseHubCommand();
        hub.readAhead = readAhead;
        CommandLine hubOnly = new CommandLine(hub);
        if (config != null) {
            hubOnly.setDefaultValueProvider(config.defaults());
        }
        if (servesOnly(hubOnly, args)) {
            if (config != null) {
                // a key only a subcommand reads is no typo: the file may serve both
                config.refuseUnknownKeys(hubOnly, SynapseHubCommand::everyCommand);
            }
            return hubOnly;
        }
        CommandLine cl = everyCommand();
        if (config != null) {
            config.refuseUnknownKeys(cl, () -> cl);
            cl.setDefaultValueProvider(config.defaults()); // after the subcommands: it reaches theirs too
        }
        cl.setExecutionStrategy(parsed -> execute(parsed, config));
        return cl;
    }

    /** The options that may come before a subcommand: they apply to it too (logging, the config file). */
    static final java.util.Set<String> BEFORE_SUBCOMMAND = java.util.Set.of("--config", "--log-level", "--log-format");

    /**
     * Runs the command line as picocli's RunLast does, except that a subcommand given after hub
     * options is refused: {@code synapse-hub --port 9000 who} parsed --port as the hub start's and
     * ran who against 8876. Notes the config file's keys a subcommand does not read.
     */
    private static int execute(CommandLine.ParseResult parsed, ConfigFile config) {
        Integer help = CommandLine.executeHelpRequest(parsed);
        if (help != null) {
            return help;
        }
        if (parsed.hasSubcommand()) {
            CommandLine.ParseResult last = parsed;
            while (last.hasSubcommand()) {
                last = last.subcommand();
            }
            java.io.PrintWriter err = last.commandSpec().commandLine().getErr();
            String command = last.commandSpec().qualifiedName(" ");
            List<String> misplaced = parsed.matchedOptions().stream()
                    .map(CommandLine.Model.OptionSpec::longestName)
                    .filter(name -> !BEFORE_SUBCOMMAND.contains(name))
                    .distinct().toList();
            if (!misplaced.isEmpty()) {
                boolean one = misplaced.size() == 1;
                err.println("synapse-hub: " + String.join(", ", misplaced) + (one ? " is an option" : " are options")
                        + " of the hub start, given before the subcommand " + parsed.subcommand().commandSpec().name()
                        + ", which does not read " + (one ? "it" : "them") + "; put a subcommand's options after it ('"
                        + command + " --help' lists them)");
                err.flush();
                return ExitCodes.USAGE;
            }
            if (config != null) {
                config.keysNotRead(last).forEach(err::println);
                err.flush();
            }
        }
        return new CommandLine.RunLast().execute(parsed);
    }

    /** The command line with every subcommand. */
    private static CommandLine everyCommand() {
        CommandLine cl = new CommandLine(new SynapseHubCommand());
        for (Class<?> subcommand : SUBCOMMANDS) {
            cl.addSubcommand(subcommand);
        }
        return cl;
    }

    /** Every subcommand's name and aliases (read from the annotations, without building models). */
    static java.util.Set<String> subcommandNames() {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (Class<?> subcommand : SUBCOMMANDS) {
            Command command = subcommand.getAnnotation(Command.class);
            names.add(command.name());
            names.addAll(List.of(command.aliases()));
        }
        return names;
    }

    /**
     * Whether the command line without subcommands parses ARGS exactly as the full one would:
     * no argument names a subcommand, asks for the help (which lists them) or is an {@code @file}
     * (which could hold either), and ARGS parse without error (an error goes to the full command
     * line, so the message, its suggestions and the usage shown are the same as ever).
     */
    private static boolean servesOnly(CommandLine hubOnly, String[] args) {
        java.util.Set<String> names = subcommandNames();
        for (String arg : args) {
            if (names.contains(arg) || arg.startsWith("@") || arg.equals("--help")
                    || (arg.startsWith("-") && !arg.startsWith("--") && arg.indexOf('h') > 0)) {
                return false;
            }
        }
        try {
            CommandLine.ParseResult parsed = hubOnly.parseArgs(args);
            return !parsed.isUsageHelpRequested();
        } catch (CommandLine.ParameterException e) {
            return false;
        }
    }
}
