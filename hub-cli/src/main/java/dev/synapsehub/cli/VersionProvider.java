package dev.synapsehub.cli;

import picocli.CommandLine;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Reads the build version stamped into the jar. */
public final class VersionProvider implements CommandLine.IVersionProvider {
    /** The version string, e.g. {@code 0.1.0-SNAPSHOT}. */
    public static String version() {
        Properties props = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream("/synapse-hub-version.properties")) {
            if (in != null) {
                props.load(in);
            }
        } catch (IOException e) {
            return "unknown";
        }
        return props.getProperty("version", "unknown");
    }

    @Override
    public String[] getVersion() {
        return new String[] {"synapse-hub " + version() + " (wire protocol 2)",
                "Java " + System.getProperty("java.version")};
    }
}
