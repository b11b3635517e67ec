package dev.synapsehub.cli;

import dev.synapsehub.journal.SnapshotReadAhead;
import dev.synapsehub.journal.SqliteJournal;
import io.netty.util.ResourceLeakDetector;
import picocli.CommandLine;

/** Entry point of the {@code synapse-hub} command. */
public final class Main {
    private Main() {
    }

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        // before the leak detector: its Netty logger starts logback, which reads the level and format then
        chooseLogLevel(args);
        chooseLogFormat(args);
        quietLeakDetector();
        int code;
        try {
            code = run(args);
        } catch (Throwable t) {
            // an Error escapes picocli's handlers; Netty's threads would keep a dead hub's JVM up
            System.err.println("synapse-hub: fatal: " + t);
            t.printStackTrace();
            code = ExitCodes.SOFTWARE;
        }
        System.exit(code);
    }

    /**
     * Netty's leak detector samples one buffer in 128 and then records a stack trace for every
     * buffer derived from it: a sampled broadcast batch, duplicated for each of 10,000 sockets,
     * made 99 % of the hub's allocation and most of its GC pauses. Off in the command unless
     * {@code -Dio.netty.leakDetection.level} asks for it; the test suites keep Netty's default.
     */
    private static void quietLeakDetector() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
    }

    /** Runs the command line and returns its exit code (tests call this). */
    static int run(String[] args) {
        String badLevel = chooseLogLevel(args);
        if (badLevel != null) {
            System.err.println("synapse-hub: --log-level must be one of " + String.join(", ", LOG_LEVELS) + ", not '"
                    + badLevel + "'");
            return ExitCodes.USAGE;
        }
        chooseLogFormat(args);
        SnapshotReadAhead readAhead = loadJournalIfServing(args);
        CommandLine cl;
        try {
            cl = SynapseHubCommand.commandLine(args, readAhead);
        } catch (CommandLine.ParameterException e) {
            return refused(e, new java.io.PrintWriter(System.err, true));
        } catch (CommandLine.PicocliException e) {
            System.err.println("synapse-hub: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("synapse-hub: internal error: " + e);
            e.printStackTrace(line.getErr());
            return ExitCodes.SOFTWARE;
        });
        cl.setParameterExceptionHandler((e, a) -> refused(e, e.getCommandLine().getErr()));
        return cl.execute(args);
    }

    /**
     * A command line that does not parse: the error, picocli's "did you mean", and where the options
     * are. The full usage (some 400 lines) scrolled the one useful line away.
     */
    private static int refused(CommandLine.ParameterException e, java.io.PrintWriter err) {
        err.println("synapse-hub: " + e.getMessage());
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Run '" + e.getCommandLine().getCommandSpec().qualifiedName(" ") + " --help' for its options.");
        err.flush();
        return ExitCodes.USAGE;
    }

    /**
     * A durable hub start (no subcommand named, {@code --db} given) opens its journal once its
     * options are read: sqlite-jdbc's driver and library and the event codec load meanwhile on a
     * thread of their own ({@link SqliteJournal#loadLibraries}, which opens no file), beside the command line's model
     * and the configuration, so the journal open finds them loaded; and a single hub (no mesh
     * option) has its newest snapshot read ahead meanwhile ({@link SnapshotReadAhead}, read-only,
     * used only if it is the snapshot the start chooses). Daemon threads: {@code --help},
     * {@code --version} or a refused option exit without waiting for them.
     */
    static SnapshotReadAhead loadJournalIfServing(String[] args) {
        java.util.Set<String> subcommands = SynapseHubCommand.subcommandNames();
        String db = null;
        boolean mesh = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (subcommands.contains(arg)) {
                return SnapshotReadAhead.none();
            }
            if (arg.equals("--db")) {
                db = i + 1 < args.length ? args[i + 1] : null;
            } else if (arg.startsWith("--db=")) {
                db = arg.substring("--db=".length());
            }
            mesh |= arg.startsWith("--mesh-");
        }
        if (db == null) {
            // an in-memory hub opens no journal: the libraries would only take CPU from its start
            return SnapshotReadAhead.none();
        }
        Thread warmup = new Thread(SqliteJournal::loadLibraries, "synapse-journal-warmup");
        warmup.setDaemon(true);
        warmup.start();
        if (mesh) {
            return SnapshotReadAhead.none(); // a mesh node starts from its Raft log, not from this snapshot
        }
        try {
            return SnapshotReadAhead.start(java.nio.file.Path.of(db));
        } catch (java.nio.file.InvalidPathException e) {
            return SnapshotReadAhead.none(); // the option is refused when it is read
        }
    }

    /**
     * Sets the format logback reads at start-up ({@code SYNAPSE_LOG_FORMAT}, {@link LogSetup}) from
     * {@code --log-format}: logback starts before the options are parsed, so it cannot wait for them.
     * The value is checked with the options (exit 2); until then an unknown one logs as text.
     */
    static void chooseLogFormat(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String value = args[i].equals("--log-format") && i + 1 < args.length ? args[i + 1]
                    : args[i].startsWith("--log-format=") ? args[i].substring("--log-format=".length()) : null;
            if (value != null) {
                System.setProperty(LogSetup.FORMAT_VARIABLE, value.toLowerCase(java.util.Locale.ROOT));
                return;
            }
        }
    }

    /**
     * Sets the level logback reads at start-up ({@code SYNAPSE_LOG_LEVEL} in logback.xml):
     * {@code --log-level} wins; a subcommand is quiet (WARN) so its output stays readable.
     */
    private static String chooseLogLevel(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String given = args[i].equals("--log-level") && i + 1 < args.length ? args[i + 1]
                    : args[i].startsWith("--log-level=") ? args[i].substring("--log-level=".length()) : null;
            if (given != null) {
                String level = given.toUpperCase(java.util.Locale.ROOT);
                if (!LOG_LEVELS.contains(level)) {
                    return given; // logback would take an unknown name as DEBUG: refused instead
                }
                System.setProperty("SYNAPSE_LOG_LEVEL", level);
                return null;
            }
        }
        if (namesASubcommand(args) && System.getProperty("SYNAPSE_LOG_LEVEL") == null && System.getenv("SYNAPSE_LOG_LEVEL") == null) {
            System.setProperty("SYNAPSE_LOG_LEVEL", "WARN");
        }
        return null;
    }

    /**
     * Whether the command line runs a subcommand: its first word, after the options that may come
     * before one ({@code --config F}, {@code --log-level L}, {@code --log-format F}), is no option.
     */
    static boolean namesASubcommand(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (SynapseHubCommand.BEFORE_SUBCOMMAND.contains(arg)) {
                i++; // its value
            } else if (!SynapseHubCommand.BEFORE_SUBCOMMAND.contains(arg.split("=", 2)[0])) {
                return !arg.startsWith("-");
            }
        }
        return false;
    }

    /** The levels {@code --log-level} takes (any case). */
    static final java.util.List<String> LOG_LEVELS = java.util.List.of("OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE",
            "ALL");
}
