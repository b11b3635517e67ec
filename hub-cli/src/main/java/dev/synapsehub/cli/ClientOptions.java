package dev.synapsehub.cli;

import dev.synapsehub.client.HubClient;
import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.client.tls.ClientTls;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** How an operator subcommand reaches a hub. */
public final class ClientOptions {
    @Option(names = "--url", paramLabel = "URI", defaultValue = "${env:SYNAPSE_URI:-ws://127.0.0.1:8876}",
            description = "Hub to talk to (default: $SYNAPSE_URI or ws://127.0.0.1:8876).")
    URI url;

    @Option(names = "--name", paramLabel = "AGENT", defaultValue = "operator/cli",
            description = "Agent name to register as; claims are owned by it (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--token", description = "Connect token, for a secured hub (prefer --token-file or SYNAPSE_TOKEN).")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the connect token from this file.")
    Path tokenFile;

    // not --message-auth-key-file: a --config file shared with the hub would hand the hub's key file to every command
    @Option(names = "--sign-key-file", paramLabel = "FILE",
            description = "Sign claim, release and handoff with the message-auth key on this file's first line,"
                    + " KEY_ID:SECRET (as given to the hub's --message-auth-key, whose senders must include --name);"
                    + " else $SYNAPSE_SIGN_KEY. Needed on a hub with --require-message-auth.")
    Path signKeyFile;

    @Option(names = "--pin", paramLabel = "sha256:HEX",
            description = "For a wss:// hub: trust exactly the server certificate with this pin (sha256 of its DER "
                    + "form) instead of checking it against the system's CAs.")
    String pin;

    // above a mesh node's default commit timeout (5 s): a write or linearizable read it answers only at that
    // bound (queued, busy) must reach the command, not be reported as no answer while it was queued
    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "How long to wait for the hub (default: ${DEFAULT-VALUE}).")
    double timeoutSeconds;

    @Option(names = "--json", description = "Print the hub's reply frame as JSON instead of a summary (the exit code is the same).")
    boolean json;

    /**
     * The options' usage problem, or null: a pin that does not parse, a timeout that is not a
     * positive number, a token file that cannot be read. Checked before connecting, so each is
     * a usage error (exit 2), not a hub that cannot be reached (exit 3).
     */
    String usageProblem() {
        if (!(timeoutSeconds > 0) || !Double.isFinite(timeoutSeconds)) {
            return "--timeout must be a positive number of seconds, not " + timeoutSeconds;
        }
        if (pin != null) {
            try {
                CertificatePin.parse(pin);
            } catch (IllegalArgumentException e) {
                return "--pin " + e.getMessage();
            }
        }
        if ((token == null || token.isEmpty()) && tokenFile != null) {
            try {
                readToken(null, tokenFile);
            } catch (IOException e) {
                return "--token-file " + tokenFile + ": cannot read it (" + e.getClass().getSimpleName()
                        + (e.getMessage() == null || e.getMessage().equals(tokenFile.toString()) ? "" : ": " + e.getMessage())
                        + ")";
            }
        }
        return null;
    }

    /** Connects to {@link #url}, pinned when {@code --pin} is given. */
    HubClient connect() throws IOException {
        ClientTls tls;
        try {
            tls = pin == null ? ClientTls.NONE : ClientTls.pinned(CertificatePin.parse(pin));
        } catch (IllegalArgumentException e) {
            throw new IOException("--pin " + e.getMessage(), e);
        }
        try {
            return HubClient.connect(url, timeout(), tls);
        } catch (IOException e) {
            if ("ws".equalsIgnoreCase(url.getScheme()) && String.valueOf(e.getMessage()).contains("closed before handshake")) {
                // what a hub serving TLS does to a plain connection: say so, not only that it closed
                throw new IOException(e.getMessage() + " (a hub serving TLS closes a plain ws:// connection so: try wss://"
                        + url.getRawAuthority() + url.getRawPath() + " with --pin sha256:<its certificate's pin>)", e);
            }
            throw e;
        }
    }

    Duration timeout() {
        return Duration.ofMillis((long) (Math.max(0.1, timeoutSeconds) * 1000)); // validated by usageProblem
    }

    String token() throws IOException {
        return readToken(token, tokenFile);
    }

    /**
     * The signer of claim-family frames: the key in {@code --sign-key-file}, else in
     * $SYNAPSE_SIGN_KEY, else null (frames go unsigned).
     */
    FrameSigner signer() throws IOException {
        if (signKeyFile != null) {
            if (!Files.isRegularFile(signKeyFile)) {
                throw new IOException("--sign-key-file " + signKeyFile + ": no such file");
            }
            List<String> lines = Files.readAllLines(signKeyFile, StandardCharsets.UTF_8);
            return FrameSigner.parse(lines.isEmpty() ? "" : lines.get(0), "--sign-key-file " + signKeyFile);
        }
        String env = System.getenv("SYNAPSE_SIGN_KEY");
        return env == null || env.isBlank() ? null : FrameSigner.parse(env, "$SYNAPSE_SIGN_KEY");
    }

    /** The connect token: {@code --token}, else the first line of {@code --token-file}, else $SYNAPSE_TOKEN, else null. */
    static String readToken(String token, Path tokenFile) throws IOException {
        if (token != null && !token.isEmpty()) {
            return token;
        }
        if (tokenFile != null) {
            List<String> lines = Files.readAllLines(tokenFile, StandardCharsets.UTF_8);
            return lines.isEmpty() ? null : lines.get(0).strip();
        }
        String env = System.getenv("SYNAPSE_TOKEN");
        return env == null || env.isBlank() ? null : env.strip();
    }
}
