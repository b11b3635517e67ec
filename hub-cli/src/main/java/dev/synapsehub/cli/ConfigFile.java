package dev.synapsehub.cli;

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
            throw new CommandLine.PicocliException("cannot read --config " + file + ": " + e.getMessage(), e);
        }
        return new ConfigFile(file, props);
    }

    /** The default provider over this file's keys. */
    CommandLine.IDefaultValueProvider defaults() {
        return new CommandLine.PropertiesDefaultProvider(props);
    }

    /**
     * Refuses a key no option of {@code commandLine} (or of {@code everyCommand}, built only when
     * needed: the hub's start leaves the subcommands out) reads: a misspelt key would otherwise be
     * ignored and its option keep its default, where the same typo as a flag exits 2.
     */
    void refuseUnknownKeys(CommandLine commandLine, Supplier<CommandLine> everyCommand) {
        List<String> unknown = unknownKeys(commandLine);
        if (unknown.isEmpty()) {
            return;
        }
        CommandLine all = everyCommand.get();
        unknown = unknownKeys(all);
        if (unknown.isEmpty()) {
            return;
        }
        Set<String> known = new TreeSet<>(); // the names a suggestion may give, unqualified
        keys(all.getCommandSpec(), known, false);
        StringBuilder message = new StringBuilder("--config " + file + ": unknown key");
        message.append(unknown.size() > 1 ? "s " : " ");
        for (int i = 0; i < unknown.size(); i++) {
            String key = unknown.get(i);
            message.append(i == 0 ? "" : ", ").append('\'').append(key).append('\'');
            String near = closest(key, known);
            if (near != null) {
                message.append(" (did you mean ").append(near).append("?)");
            }
        }
        message.append("; keys are option names without the leading dashes (synapse-hub --help lists them)");
        throw new CommandLine.PicocliException(message.toString());
    }

    private List<String> unknownKeys(CommandLine commandLine) {
        Set<String> known = new HashSet<>();
        keys(commandLine.getCommandSpec(), known, true);
        List<String> unknown = new ArrayList<>();
        for (String key : new TreeSet<>(props.stringPropertyNames())) {
            if (!known.contains(key)) {
                unknown.add(key);
            }
        }
        return unknown;
    }

    /** The keys picocli's PropertiesDefaultProvider looks up for the command and its subcommands. */
    private static void keys(CommandSpec spec, Set<String> into, boolean qualified) {
        String prefix = spec.qualifiedName(".") + ".";
        for (ArgSpec arg : spec.args()) {
            List<String> names = new ArrayList<>();
            if (arg instanceof OptionSpec option) {
                names.add(option.longestName().replaceFirst("^-+", ""));
                names.add(option.descriptionKey());
            } else if (arg instanceof PositionalParamSpec positional) {
                names.add(positional.paramLabel());
                names.add(positional.descriptionKey());
            }
            for (String name : names) {
                if (name != null && !name.isEmpty()) {
                    into.add(name);
                    if (qualified) {
                        into.add(prefix + name);
                    }
                }
            }
        }
        for (CommandLine sub : spec.subcommands().values()) {
            keys(sub.getCommandSpec(), into, qualified);
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
