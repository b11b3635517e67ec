package dev.synapsehub.federation.trust;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The serving policy of contract §11.4, loaded strictly with every start-up refusal of F3:
 * which peer hubs may pull this hub's log and forward claims to it, as which federation
 * domain, checked against the federation store it names. Deny by default: without a policy
 * nothing is served.
 *
 * @param file the policy file (absolute)
 * @param storeFile the federation store it names (absolute)
 * @param clientCaFile the CA client certificates must chain to (absolute)
 */
public record ServingPolicy(Path file, Path storeFile, Path clientCaFile, Map<String, ServingGrant> grants,
                            FederationStore store) {
    /** The flag, used as the prefix of every refusal about the policy file itself. */
    public static final String FLAG = "--multihub-serving-policy:";
    /** Largest policy file read (F3). */
    public static final long MAX_BYTES = 64 * 1024;
    /** Largest client CA file read (F3). */
    public static final long MAX_CA_BYTES = 1024 * 1024;
    private static final Set<String> ROOT_FIELDS = Set.of("version", "federation_store", "client_ca_file", "grants");
    private static final Set<String> GRANT_FIELDS = Set.of("sender", "domain_id", "namespace", "signing_key_id");

    public ServingPolicy {
        grants = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(grants));
    }

    /** The grant for a peer registering as {@code sender}. */
    public Optional<ServingGrant> grant(String sender) {
        return Optional.ofNullable(grants.get(sender));
    }

    /**
     * Loads and checks {@code file}, the store and the CA it names.
     *
     * @throws TrustFileException with the contract's refusal text, the file and the fix
     */
    public static ServingPolicy load(Path file) throws TrustFileException {
        Path policyFile = file.toAbsolutePath().normalize();
        byte[] bytes = SecureFile.read(policyFile, FLAG, MAX_BYTES);
        ObjectNode root;
        try {
            root = StrictJson.object(bytes);
        } catch (StrictJson.RepeatedField e) {
            throw refusal("multi-hub serving policy repeats field '" + e.field + "'", policyFile, "keep one '"
                    + e.field + "'");
        } catch (IOException e) {
            throw refusal("multi-hub serving policy " + StrictJson.notAnObject(e), policyFile,
                    "write {\"version\": 1, \"federation_store\": ..., \"client_ca_file\": ..., \"grants\": [...]}");
        }
        Set<String> unknown = StrictJson.unknown(root, ROOT_FIELDS);
        if (!unknown.isEmpty()) {
            throw refusal("multi-hub serving policy has unknown fields: " + String.join(", ", unknown), policyFile,
                    "remove them; the fields are version, federation_store, client_ca_file, grants");
        }
        JsonNode version = root.get("version");
        if (version != null && !(version.isIntegralNumber() && version.longValue() == 1)) {
            throw refusal("unsupported multi-hub serving policy version: " + version, policyFile, "set \"version\": 1");
        }
        Set<String> missing = StrictJson.missing(root, ROOT_FIELDS);
        if (!missing.isEmpty()) {
            throw refusal("multi-hub serving policy is missing fields: " + String.join(", ", missing), policyFile,
                    "add them");
        }
        String storeName = StrictJson.text(root, "federation_store");
        String caName = StrictJson.text(root, "client_ca_file");
        if (storeName == null || caName == null) {
            throw refusal("multi-hub serving policy fields federation_store and client_ca_file must be non-empty paths",
                    policyFile, "name the files, relative to the policy's directory or absolute");
        }
        JsonNode list = root.get("grants");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw refusal("multi-hub serving policy grants must be a non-empty list", policyFile,
                    "add one {sender, domain_id, namespace, signing_key_id} per peer hub");
        }
        Map<String, ServingGrant> grants = new LinkedHashMap<>();
        int index = 0;
        for (JsonNode g : list) {
            ServingGrant grant = grant(g, index++, policyFile);
            if (grants.put(grant.sender(), grant) != null) {
                throw refusal("serving policy grants sender '" + grant.sender() + "' twice", policyFile,
                        "keep one grant per peer hub");
            }
        }
        Path dir = policyFile.getParent();
        Path storeFile = dir.resolve(storeName).normalize();
        Path caFile = dir.resolve(caName).normalize();
        FederationStore store;
        try {
            store = FederationStore.read(storeFile, "multi-hub federation store:");
        } catch (TrustFileException e) { // the contract's text, then which field named the file and how to make it
            boolean absent = !Files.exists(storeFile, LinkOption.NOFOLLOW_LINKS);
            throw new TrustFileException(e.getMessage() + " (named by federation_store in " + policyFile + (absent
                    ? ": import a peer's bundle to create it, synapse-hub federation import BUNDLE --confirmed-by YOU"
                    + " --store " + storeFile + ", or correct the path)" : ")"), e);
        }
        try {
            SecureFile.read(caFile, "multi-hub client CA:", MAX_CA_BYTES);
        } catch (TrustFileException e) {
            throw new TrustFileException(e.getMessage() + " (named by client_ca_file in " + policyFile + ")", e);
        }
        for (ServingGrant grant : grants.values()) {
            check(grant, store, storeFile, policyFile);
        }
        return new ServingPolicy(policyFile, storeFile, caFile, grants, store);
    }

    private static ServingGrant grant(JsonNode g, int index, Path policyFile) throws TrustFileException {
        if (!g.isObject()) {
            throw refusal("serving policy grants[" + index + "] must be an object", policyFile,
                    "write {sender, domain_id, namespace, signing_key_id}");
        }
        Set<String> unknown = StrictJson.unknown((ObjectNode) g, GRANT_FIELDS);
        if (!unknown.isEmpty()) {
            throw refusal("serving policy grants[" + index + "] has unknown fields: " + String.join(", ", unknown),
                    policyFile, "the fields are sender, domain_id, namespace, signing_key_id");
        }
        String[] values = new String[4];
        int i = 0;
        for (String field : List.of("sender", "domain_id", "namespace", "signing_key_id")) {
            values[i] = StrictJson.text(g, field);
            if (values[i++] == null) {
                throw refusal("serving policy grants[" + index + "] field '" + field + "' must be a non-empty string",
                        policyFile, "set it");
            }
        }
        return new ServingGrant(values[0], values[1], values[2], values[3]);
    }

    private static void check(ServingGrant grant, FederationStore store, Path storeFile, Path policyFile)
            throws TrustFileException {
        String s = grant.sender();
        PeeringRecord record = store.record(grant.domainId()).orElse(null);
        if (record == null) {
            throw refusal("serving grant '" + s + "' names unknown federation domain '" + grant.domainId() + "'",
                    policyFile, "import the peer's bundle first: synapse-hub federation import BUNDLE"
                            + " --confirmed-by YOU --store " + storeFile);
        }
        if (!record.namespaces().contains(grant.namespace())) {
            throw refusal("serving grant '" + s + "' namespace is absent from its federation peering", policyFile,
                    "the peering lists " + record.namespaces());
        }
        if (!record.signingKeyIds().contains(grant.signingKeyId())) {
            throw refusal("serving grant '" + s + "' signing key is absent from its federation peering", policyFile,
                    "the peering lists " + record.signingKeyIds());
        }
        if (record.certificatePins().isEmpty()) {
            throw refusal("serving grant '" + s + "' federation peering has no certificate pin", policyFile,
                    "re-import a bundle that lists the peer's client certificate pin");
        }
    }

    private static TrustFileException refusal(String contractText, Path file, String fix) {
        return new TrustFileException(contractText + " (in " + file + ": " + fix + ")");
    }

    /** Every grant, in file order. */
    public List<ServingGrant> grantList() {
        return new ArrayList<>(grants.values());
    }
}
