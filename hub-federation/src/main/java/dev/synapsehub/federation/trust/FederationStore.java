package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.wire.CanonicalJson;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The federation store of contract F2: {@code {"version": 1, "records": [...]}}, one record per
 * peer domain, each with provenance. Trust enters only by an explicit import; revocation keeps
 * the record. Written sorted by {@code domain_id}, pretty-printed, atomically, mode 0600.
 */
public final class FederationStore {
    /** Largest store file read (contract F3). */
    public static final long MAX_BYTES = 1024 * 1024;
    private static final Set<String> BUNDLE_FIELDS = Set.of("domain_id", "namespaces", "certificate_pins",
            "signing_key_ids", "scope_grants", "expires_at", "revoked");
    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Map<String, PeeringRecord> records;

    /** A store of {@code records}; a repeated domain refuses the whole store. */
    public FederationStore(List<PeeringRecord> records) throws TrustFileException {
        Map<String, PeeringRecord> byDomain = new LinkedHashMap<>();
        for (PeeringRecord r : records) {
            if (byDomain.put(r.domainId(), r) != null) {
                throw new TrustFileException("federation store names domain '" + r.domainId()
                        + "' twice; each domain may appear once — remove the older record");
            }
        }
        this.records = byDomain;
    }

    /** The empty store. */
    public static FederationStore empty() {
        try {
            return new FederationStore(List.of());
        } catch (TrustFileException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** The record of {@code domainId}, if any. */
    public Optional<PeeringRecord> record(String domainId) {
        return Optional.ofNullable(records.get(domainId));
    }

    /** Every record, sorted by domain. */
    public List<PeeringRecord> records() {
        List<PeeringRecord> out = new ArrayList<>(records.values());
        out.sort(Comparator.comparing(PeeringRecord::domainId));
        return out;
    }

    /** This store with {@code record} added or replacing the record of its domain. */
    public FederationStore with(PeeringRecord record) {
        Map<String, PeeringRecord> next = new LinkedHashMap<>(records);
        next.put(record.domainId(), record);
        try {
            return new FederationStore(new ArrayList<>(next.values()));
        } catch (TrustFileException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    // ------------------------------------------------------------------------------ reading

    /** Reads a store file with the F3 file checks; {@code role} prefixes every message. */
    public static FederationStore read(Path file, String role) throws TrustFileException {
        return parse(SecureFile.read(file, role, MAX_BYTES), file, role);
    }

    /** Reads a store file, or the empty store when it does not exist yet (the import command). */
    public static FederationStore readOrEmpty(Path file) throws TrustFileException {
        return Files.exists(file) ? read(file, "federation store:") : empty();
    }

    static FederationStore parse(byte[] bytes, Path file, String role) throws TrustFileException {
        ObjectNode root = object(bytes, file, role, "federation store");
        Set<String> unknown = StrictJson.unknown(root, Set.of("version", "records"));
        if (!unknown.isEmpty()) {
            throw new TrustFileException(role + " " + file + " has unknown fields: " + String.join(", ", unknown));
        }
        JsonNode version = root.get("version");
        if (version == null || !version.isIntegralNumber() || version.longValue() != 1) {
            throw new TrustFileException(role + " " + file + ": unsupported federation store version: " + version
                    + " — field 'version' must be the integer 1");
        }
        JsonNode list = root.get("records");
        if (list == null || !list.isArray()) {
            throw new TrustFileException(role + " " + file + ": field 'records' must be a list of peering records");
        }
        List<PeeringRecord> out = new ArrayList<>();
        int index = 0;
        for (JsonNode r : list) {
            out.add(record(r, true, role + " " + file + " records[" + index++ + "]"));
        }
        try {
            return new FederationStore(out);
        } catch (TrustFileException e) {
            throw new TrustFileException(role + " " + file + ": " + e.getMessage(), e);
        }
    }

    /** Parses a bundle (a record without provenance, contract F2.1 {@code offer}). */
    public static PeeringRecord parseBundle(byte[] bytes, Path file) throws TrustFileException {
        ObjectNode root = object(bytes, file, "bundle", "federation bundle");
        return record(root, false, "bundle " + file);
    }

    private static ObjectNode object(byte[] bytes, Path file, String role, String what) throws TrustFileException {
        try {
            return StrictJson.object(bytes);
        } catch (StrictJson.RepeatedField e) {
            throw new TrustFileException(role + " " + file + ": " + what + " repeats field '" + e.field
                    + "' — keep one");
        } catch (IOException e) {
            throw new TrustFileException(role + " " + file + " " + StrictJson.notAnObject(e), e);
        }
    }

    private static PeeringRecord record(JsonNode r, boolean withProvenance, String where) throws TrustFileException {
        if (!r.isObject()) {
            throw new TrustFileException(where + " must be a JSON object");
        }
        Set<String> allowed = new TreeSet<>(BUNDLE_FIELDS);
        if (withProvenance) {
            allowed.add("provenance");
        }
        Set<String> unknown = StrictJson.unknown((ObjectNode) r, allowed);
        if (!unknown.isEmpty()) {
            throw new TrustFileException(where + " has unknown fields: " + String.join(", ", unknown));
        }
        String domain = StrictJson.text(r, "domain_id");
        if (domain == null) {
            throw new TrustFileException(where + ": field 'domain_id' must be a non-empty string");
        }
        List<String> namespaces = list(r, "namespaces", where);
        List<String> pins = list(r, "certificate_pins", where);
        for (String pin : pins) {
            if (!pin.matches("sha256:[0-9a-fA-F]{64}")) {
                throw new TrustFileException(where + ": field 'certificate_pins' holds '" + pin
                        + "'; a pin is sha256:<64 hex digits> of the DER certificate");
            }
            // A store written by another hub may hold uppercase pins (they never match, as there);
            // a bundle being imported is refused instead of becoming a peering no certificate fits.
            if (!withProvenance && !pin.matches("sha256:[0-9a-f]{64}")) {
                throw new TrustFileException(where + ": field 'certificate_pins' holds '" + pin
                        + "'; pins are compared as exact strings, so write the hex in lowercase");
            }
        }
        List<String> keys = list(r, "signing_key_ids", where);
        List<ScopeGrant> grants = new ArrayList<>();
        JsonNode g = r.get("scope_grants");
        if (g != null && !g.isNull()) {
            if (!g.isArray()) {
                throw new TrustFileException(where + ": field 'scope_grants' must be a list of {verb, namespace}");
            }
            for (JsonNode item : g) {
                String verb = StrictJson.text(item, "verb");
                String ns = StrictJson.text(item, "namespace");
                if (verb == null || ns == null) {
                    throw new TrustFileException(where + ": every 'scope_grants' item needs non-empty 'verb' and 'namespace'");
                }
                grants.add(new ScopeGrant(verb, ns));
            }
        }
        Double expires = number(r, "expires_at", where, true);
        JsonNode revoked = r.get("revoked");
        if (revoked != null && !revoked.isNull() && !revoked.isBoolean()) {
            throw new TrustFileException(where + ": field 'revoked' must be true or false");
        }
        Provenance provenance = null;
        if (withProvenance) {
            JsonNode p = r.get("provenance");
            if (p == null || !p.isObject()) {
                throw new TrustFileException(where + ": field 'provenance' must be {source, imported_at, confirmed_by}"
                        + " — records enter the store only by `synapse-hub federation import`");
            }
            Double at = number(p, "imported_at", where + " provenance", false);
            provenance = new Provenance(p.path("source").asText(""), at, p.path("confirmed_by").asText(""));
        }
        return new PeeringRecord(domain, namespaces, pins, keys, grants, expires,
                revoked != null && revoked.asBoolean(false), provenance);
    }

    private static List<String> list(JsonNode r, String field, String where) throws TrustFileException {
        List<String> values = StrictJson.strings(r, field);
        if (values == null) {
            throw new TrustFileException(where + ": field '" + field + "' must be a list of strings");
        }
        return values;
    }

    private static Double number(JsonNode o, String field, String where, boolean nullable) throws TrustFileException {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            if (nullable) {
                return null;
            }
            throw new TrustFileException(where + ": field '" + field + "' must be a number");
        }
        if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
            throw new TrustFileException(where + ": field '" + field + "' must be a finite number (epoch seconds)"
                    + (nullable ? " or null" : ""));
        }
        return v.doubleValue();
    }

    // ------------------------------------------------------------------------------ writing

    /** The bundle object of a record (no provenance), as an offer or the fingerprint sees it. */
    public static ObjectNode bundleJson(PeeringRecord r, boolean sortIds) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("domain_id", r.domainId());
        strings(o, "namespaces", r.namespaces(), sortIds);
        strings(o, "certificate_pins", r.certificatePins(), sortIds);
        strings(o, "signing_key_ids", r.signingKeyIds(), sortIds);
        ArrayNode grants = o.putArray("scope_grants");
        for (ScopeGrant g : r.scopeGrants()) {
            grants.addObject().put("verb", g.verb()).put("namespace", g.namespace());
        }
        if (r.expiresAt() == null) {
            o.putNull("expires_at");
        } else if (r.expiresAt() == Math.rint(r.expiresAt()) && Math.abs(r.expiresAt()) < 1e15) {
            o.put("expires_at", r.expiresAt().longValue());
        } else {
            o.put("expires_at", r.expiresAt());
        }
        o.put("revoked", r.revoked());
        return o;
    }

    private static void strings(ObjectNode o, String field, List<String> values, boolean sorted) {
        ArrayNode a = o.putArray(field);
        (sorted ? values.stream().sorted() : values.stream()).forEach(a::add);
    }

    /**
     * The bundle fingerprint (F2.1): SHA-256 of the compact, key-sorted JSON of the record
     * without provenance, the three id lists sorted, {@code revoked} included.
     */
    public static String fingerprint(PeeringRecord r) {
        String canonical = CanonicalJson.write(bundleJson(r, true), true);
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.US_ASCII));
            return "sha256:" + HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes the store atomically (temp file, fsync, rename), mode 0600, sorted by domain. */
    public void write(Path file) throws IOException {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("version", 1);
        ArrayNode list = root.putArray("records");
        for (PeeringRecord r : records()) {
            ObjectNode o = bundleJson(r, false);
            if (r.provenance() != null) {
                ObjectNode p = o.putObject("provenance");
                p.put("source", r.provenance().source());
                p.put("imported_at", r.provenance().importedAt());
                p.put("confirmed_by", r.provenance().confirmedBy());
            }
            list.add(o);
        }
        AtomicFile.write(file, (PRETTY.writeValueAsString(root) + "\n").getBytes(StandardCharsets.UTF_8));
    }
}
