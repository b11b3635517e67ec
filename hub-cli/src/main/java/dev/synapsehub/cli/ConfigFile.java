package dev.synapsehub.cli;

import dev.synapsehub.journal.WriterLock;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/** The {@code --config FILE} properties file: option defaults, keys named like the options. */
final class ConfigFile {
    private final Path file;
    private final Properties props;

    private ConfigFile(Path file, Properties props) {
        this.file = file;
        this.props = props;
    }

    /** The file named by {@code --config FILE} or {@code --config=FILE}, or null. */
    static Path find(String[] args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                return Path.of(args[i + 1]);
            }
            if (args[i].startsWith("--config=")) {
                return Path.of(args[i].substring("--config=".length()));
            }
        }
        return null;
    }

    /** Reads the file; an unreadable file is a usage error. */
    static ConfigFile read(Path file) {
        Properties props = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        } catch (IOException e) {
            throw new CommandLine.PicocliException("cannot read --config " + file + ": " + (e instanceof
                    java.nio.charset.CharacterCodingException ? "not UTF-8 text" : WriterLock.reason(e)), e);
        }
        return new ConfigFile(file, props);
    }

    /**
     * The default provider over this file's keys. The hub start (the top-level command) reads a
     * key by the option's name, as picocli's PropertiesDefaultProvider does; a subcommand reads
     * only keys qualified with its name ({@code synapse-hub.who.timeout}), never an unqualified
     * one: the same name means another thing there ({@code rate}, {@code timeout}), and the
     * hub's {@code db} would have become the {@code --db} an operator forgot on {@code import}.
     * A required option is never read from the file, so forgetting it stays a usage error.
     */
    CommandLine.IDefaultValueProvider defaults() {
        return arg -> {
            CommandSpec command = arg.command();
            if (command == null) {
                return null;
            }
            boolean hubStart = command.parent() == null;
            if (!hubStart && required(arg)) {
                return null;
            }
            String prefix = command.qualifiedName(".") + ".";
            for (String name : names(arg)) {
                String value = props.getProperty(prefix + name);
                if (value == null && hubStart) {
                    value = props.getProperty(name);
                }
                if (value != null) {
                    return value;
                }
            }
            return null;
        };
    }

    /**
     * A note for each option of the subcommand that ran which the command line did not give and
     * an unqualified key of this file names: that key is the hub start's, not the command's.
     */
    List<String> keysNotRead(CommandLine.ParseResult subcommand) {
        CommandSpec spec = subcommand.commandSpec();
        String command = spec.qualifiedName(" ").replaceFirst("^\\S+ ", "");
        String prefix = spec.qualifiedName(".") + ".";
        List<String> notes = new ArrayList<>();
        for (OptionSpec option : spec.options()) {
            if (subcommand.hasMatchedOption(option)) {
                continue;
            }
            for (String name : names(option)) {
                if (props.getProperty(name) != null && props.getProperty(prefix + name) == null) {
                    boolean hubReadsIt = spec.root().findOption("--" + name) != null;
                    notes.add("synapse-hub: note: --config " + file + ": '" + name + "' "
                            + (hubReadsIt ? "sets the hub start's option, not " : "is not read as ")
                            + command + "'s " + option.longestName() + " (a key for " + command + " is qualified: "
                            + prefix + name + ")");
                    break;
                }
            }
        }
        return notes;
    }

    /**
     * Whether the command declares {@code arg} required: its annotation says so, or it is a
     * parameter that must be given. Not {@link ArgSpec#required()}: that is false once a default
     * value is found (it asks this file's provider), which is how a key satisfied a required option.
     */
    private static boolean required(ArgSpec arg) {
        if (arg instanceof PositionalParamSpec positional) {
            return positional.arity().min > 0;
        }
        return arg.userObject() instanceof java.lang.reflect.AnnotatedElement element
                && element.getAnnotation(CommandLine.Option.class) != null
                && element.getAnnotation(CommandLine.Option.class).required();
    }

    /** The names a key may give an option or parameter by: its description key, then its name. */
    private static List<String> names(ArgSpec arg) {
        List<String> names = new ArrayList<>();
        if (arg.descriptionKey() != null && !arg.descriptionKey().isEmpty()) {
            names.add(arg.descriptionKey());
        }
        String name = arg instanceof OptionSpec option ? option.longestName().replaceFirst("^-+", "")
                : ((PositionalParamSpec) arg).paramLabel();
        if (name != null && !name.isEmpty()) {
            names.add(name);
        }
        return names;
    }

    /**
     * Refuses a key no option of {@code commandLine} (or of {@code everyCommand}, built only when
     * needed: the hub's start leaves the subcommands out) reads: a misspelt key would otherwise be
     * ignored and its option keep its default, where the same typo as a flag exits 2. A key that
     * qualifies a subcommand's required option is refused too: it is never read (see {@link #defaults}).
     */
    void refuseUnknownKeys(CommandLine commandLine, Supplier<CommandLine> everyCommand) {
        Keys keys = Keys.of(commandLine.getCommandSpec());
        List<String> unknown = keys.unknown(props);
        if (unknown.isEmpty()) {
            return;
        }
        CommandLine all = everyCommand.get();
        keys = Keys.of(all.getCommandSpec());
        unknown = keys.unknown(props);
        if (unknown.isEmpty()) {
            return;
        }
        List<String> problems = new ArrayList<>();
        List<String> typos = new ArrayList<>();
        for (String key : unknown) {
            String required = keys.requiredKeys().get(key);
            if (required != null) {
                problems.add("key '" + key + "' would set " + required + ", a required option, which is never read"
                        + " from a file: give it on the command line");
            } else {
                String near = closest(key, keys.suggestions());
                typos.add('\'' + key + '\'' + (near == null ? "" : " (did you mean " + near + "?)"));
            }
        }
        if (!typos.isEmpty()) {
            problems.add("unknown key" + (typos.size() > 1 ? "s " : " ") + String.join(", ", typos)
                    + "; keys are option names without the leading dashes (synapse-hub --help lists them)");
        }
        throw new CommandLine.PicocliException("--config " + file + ": " + String.join("; ", problems));
    }

    /**
     * The keys a file may hold for a command line. Known: the hub start's options by name or
     * qualified ({@code synapse-hub.port}); a subcommand's by name too (a file shared with the
     * operator commands starts the hub; the subcommand does not read them) and qualified, unless
     * the option is required. {@code requiredKeys}: such a qualified key, with the option it names.
     */
    private record Keys(Set<String> known, java.util.Map<String, String> requiredKeys, Set<String> suggestions) {
        static Keys of(CommandSpec spec) {
            Keys keys = new Keys(new HashSet<>(), new java.util.HashMap<>(), new TreeSet<>());
            keys.add(spec);
            return keys;
        }

        private void add(CommandSpec spec) {
            String prefix = spec.qualifiedName(".") + ".";
            boolean hubStart = spec.parent() == null;
            for (ArgSpec arg : spec.args()) {
                for (String name : names(arg)) {
                    known.add(name);
                    suggestions.add(name);
                    if (hubStart || !required(arg)) {
                        known.add(prefix + name);
                    } else {
                        requiredKeys.put(prefix + name, (arg instanceof OptionSpec option ? option.longestName()
                                : ((PositionalParamSpec) arg).paramLabel()) + " of "
                                + spec.qualifiedName(" ").replaceFirst("^\\S+ ", ""));
                    }
                }
            }
            for (CommandLine sub : spec.subcommands().values()) {
                add(sub.getCommandSpec());
            }
        }

        List<String> unknown(Properties props) {
            List<String> unknown = new ArrayList<>();
            for (String key : new TreeSet<>(props.stringPropertyNames())) {
                if (!known.contains(key)) {
                    unknown.add(key);
                }
            }
            return unknown;
        }
    }

    /** The known key within two edits of {@code key}, the nearest first; null when none is that close. */
    static String closest(String key, Set<String> known) {
        String best = null;
        int bestDistance = 3;
        for (String candidate : known) {
            int d = distance(key, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best;
    }

    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
