package dev.synapsehub.cli;

import dev.synapsehub.federation.trust.BundleRotation;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.TrustFileException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code synapse-hub federation rotate BUNDLE} (contract F2.1): your own bundle with a new expiry, keys and pins. */
@Command(name = "rotate", mixinStandardHelpOptions = true, description = {
    // the first element alone is the summary `federation --help` lists: a whole sentence
    "Rewrite your own bundle with a new expiry, adding or retiring signing key ids and certificate pins.",
    "The new expiry is now + --lifetime-days; the previous file is kept as <BUNDLE>.prev (or --backup FILE).",
    "Then run `offer` and send the new fingerprint to your peers' operators: they import the new bundle as before."})
final class FederationRotate implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "BUNDLE", description = "Your own bundle file.")
    Path bundle;

    @Option(names = "--lifetime-days", paramLabel = "DAYS", defaultValue = "90",
            description = "The new bundle expires this many days from now (default: ${DEFAULT-VALUE}).")
    int lifetimeDays;

    @Option(names = "--add-signing-key", paramLabel = "KEY_ID", description = "A signing key id to add (repeatable).")
    List<String> addKeys = new ArrayList<>();

    @Option(names = "--add-pin", paramLabel = "sha256:HEX", description = "A client certificate pin to add (repeatable).")
    List<String> addPins = new ArrayList<>();

    @Option(names = "--retire-signing-key", paramLabel = "KEY_ID", description = "A signing key id to remove (repeatable).")
    List<String> retireKeys = new ArrayList<>();

    @Option(names = "--retire-pin", paramLabel = "sha256:HEX", description = "A client certificate pin to remove (repeatable).")
    List<String> retirePins = new ArrayList<>();

    @Option(names = "--backup", paramLabel = "FILE", description = "Keep the previous bundle here instead of <BUNDLE>.prev.")
    Path backup;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Path previous = backup != null ? backup : bundle.resolveSibling(bundle.getFileName() + ".prev");
        try {
            PeeringRecord next = new BundleRotation(lifetimeDays, addKeys, addPins, retireKeys, retirePins)
                    .rotateFile(bundle, previous, System.currentTimeMillis() / 1000.0);
            out.println("rotated bundle " + bundle + "; the previous one is kept at " + previous);
            FederationCommands.printBundle(out, next);
            return ExitCodes.OK;
        } catch (TrustFileException | IOException e) {
            spec.commandLine().getErr().println("synapse-hub: " + e.getMessage());
            return ExitCodes.USAGE;
        }
    }
}
