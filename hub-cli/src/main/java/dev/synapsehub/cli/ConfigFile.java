package dev.synapsehub.cli;

import picocli.CommandLine;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/** The {@code --config FILE} properties file: option defaults, keys named like the options. */
final class ConfigFile {
    private ConfigFile() {
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

    /** A default provider reading the file; an unreadable file is a usage error. */
    static CommandLine.IDefaultValueProvider defaults(Path file) {
        Properties props = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        } catch (IOException e) {
            throw new CommandLine.PicocliException("cannot read --config " + file + ": " + e.getMessage(), e);
        }
        return new CommandLine.PropertiesDefaultProvider(props);
    }
}
