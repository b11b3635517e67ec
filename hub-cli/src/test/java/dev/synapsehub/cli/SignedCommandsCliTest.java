package dev.synapsehub.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Operator commands sign claim, release and handoff when given a message-auth key, as a hub that requires it expects. */
class SignedCommandsCliTest {
    private final LoopbackHub hub = new LoopbackHub();

    @AfterEach
    void stop() throws Exception {
        hub.close();
    }

    @Test
    void withTheKeyClaimAndReleasePassAHubThatRequiresSignaturesAndWithoutItTheyAreRefused(@TempDir Path dir)
            throws Exception {
        hub.start("--port", "0", "--message-auth-key", "k1:supersecretvalue:operator/cli", "--require-message-auth");
        Path key = dir.resolve("cli.key");
        Files.writeString(key, "k1:supersecretvalue\n");

        CliTest.Run unsigned = CliTest.run("claim", "S-1", "--path", "src/s", "--url", hub.url());
        assertThat(unsigned.code()).as(unsigned.err()).isEqualTo(ExitCodes.REFUSED);
        assertThat(unsigned.out() + unsigned.err()).contains("missing");

        CliTest.Run signed = CliTest.run("claim", "S-1", "--path", "src/s", "--url", hub.url(),
                "--sign-key-file", key.toString());
        assertThat(signed.code()).as(signed.out() + signed.err()).isEqualTo(ExitCodes.OK);
        CliTest.Run again = CliTest.run("claim", "S-2", "--path", "src/t", "--url", hub.url(),
                "--sign-key-file", key.toString());
        assertThat(again.code()).as("a fresh nonce each time: " + again.out() + again.err()).isEqualTo(ExitCodes.OK);
        CliTest.Run released = CliTest.run("release", "S-1", "--url", hub.url(), "--sign-key-file", key.toString());
        assertThat(released.code()).as(released.out() + released.err()).isEqualTo(ExitCodes.OK);
        assertThat(CliTest.run("who", "--url", hub.url(), "--sign-key-file", key.toString()).code())
                .as("unsigned verbs go as they are").isEqualTo(ExitCodes.OK);

        Path wrong = dir.resolve("wrong.key");
        Files.writeString(wrong, "k1:not-the-secret\n");
        CliTest.Run bad = CliTest.run("claim", "S-3", "--path", "src/u", "--url", hub.url(),
                "--sign-key-file", wrong.toString());
        assertThat(bad.code()).isEqualTo(ExitCodes.REFUSED);
        assertThat(bad.out() + bad.err()).contains("bad_authentication");
    }

    @Test
    void aKeyFileThatIsNotKeyIdColonSecretIsABadCommandLine(@TempDir Path dir) throws Exception {
        hub.start("--port", "0");
        Path key = dir.resolve("cli.key");
        Files.writeString(key, "just-a-secret\n");
        CliTest.Run run = CliTest.run("claim", "S-1", "--path", "src/s", "--url", hub.url(),
                "--sign-key-file", key.toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--sign-key-file " + key).contains("expected KEY_ID:SECRET");
    }

    @Test
    void aConfigFileSharedWithTheHubDoesNotHandItsKeyFileToTheCommands(@TempDir Path dir) throws Exception {
        Path hubKeys = dir.resolve("hub-keys");
        Files.writeString(hubKeys, "# the hub's keys, one KEY_ID:SECRET:SENDERS per line\nk1:supersecretvalue:team/a\n");
        hub.start("--port", "0", "--message-auth-key-file", hubKeys.toString());
        Path config = dir.resolve("synapse-hub.properties");
        // a subcommand reads the keys qualified with its name
        Files.writeString(config, "message-auth-key-file=" + hubKeys + "\nsynapse-hub.who.url=" + hub.url()
                + "\nsynapse-hub.claim.url=" + hub.url() + "\n");
        CliTest.Run who = CliTest.run("--config", config.toString(), "who");
        assertThat(who.code()).as(who.err()).isEqualTo(ExitCodes.OK);
        CliTest.Run claim = CliTest.run("--config", config.toString(), "claim", "C-1", "--path", "src/c");
        assertThat(claim.code()).as("unsigned, as the hub does not require it: " + claim.out() + claim.err())
                .isEqualTo(ExitCodes.OK);
    }

    @Test
    void aKeyFileThatDoesNotExistIsSaidSo(@TempDir Path dir) throws Exception {
        hub.start("--port", "0");
        Path missing = dir.resolve("nope.key");
        CliTest.Run run = CliTest.run("claim", "S-1", "--path", "src/s", "--url", hub.url(), "--sign-key-file",
                missing.toString());
        assertThat(run.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(run.err()).contains("--sign-key-file " + missing + ": no such file");
        assertThat(CliTest.run("who", "--url", hub.url(), "--sign-key-file", missing.toString()).code())
                .as("only the commands that sign read the key").isEqualTo(ExitCodes.OK);
    }
}
