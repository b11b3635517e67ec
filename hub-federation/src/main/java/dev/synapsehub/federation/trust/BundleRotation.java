package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code federation rotate} (contract F2.1): your own bundle with a new expiry (now + the
 * lifetime), signing key labels and certificate pins added or retired. Every change is checked
 * before anything is written: a retired id must be in the bundle, an added one must not be, a pin
 * must be {@code sha256:<64 lowercase hex>} (the serving side compares pins as exact strings,
 * F4), and the bundle keeps at least one key and one pin (a peering without a pin can serve
 * nothing, F3). The previous file is kept before the new one replaces it, atomically.
 */
public record BundleRotation(int lifetimeDays, List<String> addSigningKeys, List<String> addPins,
                             List<String> retireSigningKeys, List<String> retirePins) {
    /** The contract's default lifetime. */
    public static final int DEFAULT_LIFETIME_DAYS = 90;
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public BundleRotation {
        addSigningKeys = trimmed(addSigningKeys);
        addPins = trimmed(addPins);
        retireSigningKeys = trimmed(retireSigningKeys);
        retirePins = trimmed(retirePins);
    }

    private static List<String> trimmed(List<String> values) {
        return values == null ? List.of() : values.stream().map(String::trim).toList();
    }

    /** {@code bundle} rotated at {@code now} (epoch seconds); refuses, changing nothing, when a rule breaks. */
    public PeeringRecord apply(PeeringRecord bundle, double now) throws TrustFileException {
        if (lifetimeDays < 1 || lifetimeDays > 3650) {
            throw new TrustFileException("--lifetime-days must be a whole number of days from 1 to 3650, got " + lifetimeDays);
        }
        if (bundle.revoked()) {
            throw new TrustFileException("bundle of '" + bundle.domainId() + "' is marked revoked; a revoked bundle is not "
                    + "rotated — write a new one");
        }
        List<String> keys = change(bundle.signingKeyIds(), addSigningKeys, retireSigningKeys, "signing key");
        for (String pin : addPins) {
            if (!pin.matches("sha256:[0-9a-f]{64}")) {
                throw new TrustFileException("--add-pin must be sha256:<64 lowercase hex digits> of the DER certificate, got '"
                        + pin + "'");
            }
        }
        List<String> pins = change(bundle.certificatePins(), addPins, retirePins, "certificate pin");
        if (keys.isEmpty()) {
            throw new TrustFileException("the rotation would leave no signing key id; add the new key before retiring the last");
        }
        if (pins.isEmpty()) {
            throw new TrustFileException("the rotation would leave no certificate pin (a peering without a pin serves "
                    + "nothing); add the new pin before retiring the last");
        }
        double expires = Math.floor(now) + lifetimeDays * 86400.0;
        return new PeeringRecord(bundle.domainId(), bundle.namespaces(), pins, keys, bundle.scopeGrants(), expires, false,
                null);
    }

    private static List<String> change(List<String> current, List<String> add, List<String> retire, String what)
            throws TrustFileException {
        List<String> out = new ArrayList<>(current);
        for (String r : retire) {
            if (r.isEmpty() || !out.remove(r)) {
                throw new TrustFileException("cannot retire " + what + " '" + r + "': the bundle has no such " + what);
            }
        }
        for (String a : add) {
            if (a.isEmpty()) {
                throw new TrustFileException("cannot add an empty " + what);
            }
            if (out.contains(a)) {
                throw new TrustFileException("cannot add " + what + " '" + a + "': the bundle already has it");
            }
            out.add(a);
        }
        return out;
    }

    /**
     * Rotates the bundle file: reads it (strictly, as {@code offer}), copies its bytes to
     * {@code backup}, then replaces it atomically (mode 0600) with the rotated bundle. Returns the
     * new bundle.
     */
    public PeeringRecord rotateFile(Path bundleFile, Path backup, double now) throws TrustFileException, IOException {
        byte[] old;
        try {
            old = Files.readAllBytes(bundleFile);
        } catch (IOException e) {
            throw new TrustFileException("cannot read bundle " + bundleFile + ": " + e.getMessage(), e);
        }
        PeeringRecord next = apply(FederationStore.parseBundle(old, bundleFile), now);
        AtomicFile.write(backup, old);
        byte[] bytes = (PRETTY.writeValueAsString(FederationStore.bundleJson(next, false)) + "\n")
                .getBytes(StandardCharsets.UTF_8);
        AtomicFile.write(bundleFile, bytes);
        return next;
    }
}
