package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.CertificatePin;
import dev.synapsehub.net.tls.ClientCaTrust;
import dev.synapsehub.net.tls.FileStamp;

import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Who may pull this hub's log and forward claims to it, decided per request in the order of
 * contract F5 / F9.1: a serving policy at all, a grant for the sender, a client certificate on
 * the socket, the grant's peering in the store, the live certificate's pin (exact lowercase
 * string), then revocation, expiry, namespace and signing key of the peering.
 *
 * <p>Trust reloads without a restart: before each decision the policy, store and CA files are
 * compared (size, modification time, file key) with what was loaded. A changed policy or store
 * is re-read and checked as at start-up; while it does not validate every peer is refused
 * ({@code policy_invalid}): a changed file never falls back to the allow it replaced. The CA
 * file's content may change (rotation): the TLS layer verifies new handshakes against it as it
 * is then, and each decision verifies the socket's certificate chain against it again
 * ({@code certificate_not_trusted}), so a connection made under the old CA loses its trust with
 * it. A policy that names another CA path refuses every peer ({@code client_ca_changed}) until
 * it names the start-up path again or the hub restarts, because the TLS layer reads the path it
 * started with.
 */
public final class ServingTrust {
    private final Path policyFile;
    private final Consumer<String> log;
    /** The start-up policy's CA file as it is now; null without a policy. */
    private ClientCaTrust clientCa;
    private volatile Loaded loaded;

    /**
     * The policy in force (null while invalid), the error that made it invalid and the refusal
     * reason peers get meanwhile, and the stamps it was loaded from.
     */
    private record Loaded(ServingPolicy policy, String error, String refusal, List<Object> stamps) {
    }

    private ServingTrust(Path policyFile, Consumer<String> log) {
        this.policyFile = policyFile;
        this.log = log;
    }

    /** No policy: every peer is refused (deny by default). */
    public static ServingTrust none() {
        return new ServingTrust(null, m -> { });
    }

    /**
     * Loads the policy strictly (start-up: an invalid file is refused with the contract's text).
     *
     * @param log receives one line per reload outcome
     */
    public static ServingTrust load(Path policyFile, Consumer<String> log) throws TrustFileException {
        ServingTrust trust = new ServingTrust(policyFile.toAbsolutePath().normalize(), log);
        // stamped before the read (see reload); the store and CA are not known yet, so the first look stamps them
        List<Object> stamps = stampsOf(trust.policyFile, null, null);
        ServingPolicy policy = ServingPolicy.load(trust.policyFile);
        try {
            trust.clientCa = ClientCaTrust.watching(policy.clientCaFile());
        } catch (IllegalArgumentException e) {
            throw new TrustFileException(e.getMessage() + "; point client_ca_file at a PEM CA certificate");
        }
        trust.loaded = new Loaded(policy, null, null, stamps);
        return trust;
    }

    /** The policy loaded at start-up (its CA is the one the TLS layer verifies against), or null without one. */
    public ServingPolicy startupPolicy() {
        Loaded l = loaded;
        return l == null ? null : l.policy();
    }

    /**
     * The peers the policy last loaded grants, without looking at the files again (retention
     * asks on the writer); empty without a policy, null while the file is invalid.
     */
    public java.util.Set<String> grantedPeers() {
        if (policyFile == null) {
            return java.util.Set.of();
        }
        ServingPolicy policy = loaded.policy();
        return policy == null ? null : policy.grants().keySet();
    }

    /** True when a serving policy was configured. */
    public boolean configured() {
        return policyFile != null;
    }

    /**
     * Decides one request from a peer registered as {@code sender} whose socket presented
     * {@code chain} (leaf first; empty: none), at {@code now} (epoch seconds).
     */
    public PeerDecision decide(String sender, List<X509Certificate> chain, double now) {
        if (policyFile == null) {
            return PeerDecision.refuse("no_serving_policy");
        }
        Loaded current = current();
        if (current.policy() == null) {
            return PeerDecision.refuse(current.refusal());
        }
        ServingPolicy policy = current.policy();
        ServingGrant grant = policy.grant(sender).orElse(null);
        if (grant == null) {
            return PeerDecision.refuse("unknown_peer");
        }
        if (chain.isEmpty()) {
            return PeerDecision.refuse("missing_certificate");
        }
        X509Certificate certificate = chain.get(0);
        try {
            clientCa.verify(chain);
        } catch (CertificateException e) {
            return PeerDecision.refuse("certificate_not_trusted");
        }
        PeeringRecord record = policy.store().record(grant.domainId()).orElse(null);
        if (record == null) {
            return PeerDecision.refuse("unknown_domain");
        }
        if (!record.certificatePins().contains(CertificatePin.of(certificate).text())) {
            return PeerDecision.refuse("certificate_pin_not_accepted");
        }
        if (record.revoked()) {
            return PeerDecision.refuse("revoked_peering");
        }
        if (record.expiredAt(now)) {
            return PeerDecision.refuse("expired_peering");
        }
        if (!record.namespaces().contains(grant.namespace())) {
            return PeerDecision.refuse("namespace_not_granted");
        }
        if (!record.signingKeyIds().contains(grant.signingKeyId())) {
            return PeerDecision.refuse("signing_key_not_accepted");
        }
        return PeerDecision.allow(grant);
    }

    /** The policy in force now, reloaded first when a file changed. */
    private Loaded current() {
        Loaded l = loaded;
        ServingPolicy basis = l.policy();
        Path store = basis != null ? basis.storeFile() : null;
        if (basis != null && l.stamps().equals(stampsOf(policyFile, store, basis.clientCaFile()))) {
            return l;
        }
        synchronized (this) {
            return reload();
        }
    }

    private Loaded reload() {
        Loaded l = loaded;
        try {
            // stamped before the files are read: an edit landing during the read leaves stamps that differ from the
            // files', so the next look reloads (stamped after, it would keep the old content under the new stamp).
            // The store and CA named by the policy in force: a policy naming others differs at the next look too
            ServingPolicy basis = l.policy();
            List<Object> stamps = basis == null ? stampsOf(policyFile, null, null) : stamps(basis);
            if (basis != null && l.stamps().equals(stamps)) {
                return l; // another thread reloaded meanwhile: nothing to read
            }
            ServingPolicy next = ServingPolicy.load(policyFile);
            if (!next.clientCaFile().equals(clientCa.file())) {
                String error = "client CA " + next.clientCaFile() + " is not the file the TLS layer reads ("
                        + clientCa.file() + "); every peer is refused until the policy names it again or the hub restarts";
                if (!error.equals(l.error())) {
                    log.accept(error);
                }
                loaded = new Loaded(null, error, "client_ca_changed", stamps);
                return loaded;
            }
            if (l.policy() == null || !Objects.equals(l.stamps(), stamps)) {
                log.accept("serving policy " + policyFile + " reloaded: " + next.grants().size() + " grant(s)");
            }
            loaded = new Loaded(next, null, null, stamps);
        } catch (TrustFileException e) {
            if (!e.getMessage().equals(l.error())) {
                log.accept("serving policy no longer validates; every peer is refused until it does: " + e.getMessage());
            }
            loaded = new Loaded(null, e.getMessage(), "policy_invalid", l.stamps());
        }
        return loaded;
    }

    private static List<Object> stamps(ServingPolicy p) {
        return stampsOf(p.file(), p.storeFile(), p.clientCaFile());
    }

    private static List<Object> stampsOf(Path policy, Path store, Path ca) {
        return List.of(TrustFileStamp.of(policy), store == null ? FileStamp.NONE : TrustFileStamp.of(store),
                ca == null ? FileStamp.NONE : TrustFileStamp.of(ca));
    }
}
