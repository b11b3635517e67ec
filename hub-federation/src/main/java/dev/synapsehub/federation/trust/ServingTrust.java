package dev.synapsehub.federation.trust;

import dev.synapsehub.client.tls.CertificatePin;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
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
 * ({@code policy_invalid}): a changed file never falls back to the allow it replaced. A changed
 * CA file refuses every peer ({@code client_ca_changed}) until it is restored or the hub is
 * restarted, because the TLS layer keeps verifying against the CA it started with.
 */
public final class ServingTrust {
    private final Path policyFile;
    private final Consumer<String> log;
    private volatile Loaded loaded;

    private record Stamp(long size, long modified, Object key) {
        static Stamp of(Path p) {
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                return new Stamp(a.size(), a.lastModifiedTime().toMillis(), a.fileKey());
            } catch (IOException e) {
                return new Stamp(-1, -1, null);
            }
        }
    }

    /** The policy in force (null while invalid), the error that made it invalid, and the stamps it was loaded from. */
    private record Loaded(ServingPolicy policy, String error, List<Stamp> stamps, Stamp caAtStart) {
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
        ServingPolicy policy = ServingPolicy.load(trust.policyFile);
        trust.loaded = new Loaded(policy, null, stamps(policy), Stamp.of(policy.clientCaFile()));
        return trust;
    }

    /** The policy loaded at start-up (its CA is the one the TLS layer verifies against), or null without one. */
    public ServingPolicy startupPolicy() {
        Loaded l = loaded;
        return l == null ? null : l.policy();
    }

    /** True when a serving policy was configured. */
    public boolean configured() {
        return policyFile != null;
    }

    /**
     * Decides one request from a peer registered as {@code sender} whose socket presented
     * {@code certificate} (null: none), at {@code now} (epoch seconds).
     */
    public PeerDecision decide(String sender, X509Certificate certificate, double now) {
        if (policyFile == null) {
            return PeerDecision.refuse("no_serving_policy");
        }
        Loaded current = current();
        if (current.policy() == null) {
            return PeerDecision.refuse(current.error().startsWith("client CA") ? "client_ca_changed" : "policy_invalid");
        }
        ServingPolicy policy = current.policy();
        ServingGrant grant = policy.grant(sender).orElse(null);
        if (grant == null) {
            return PeerDecision.refuse("unknown_peer");
        }
        if (certificate == null) {
            return PeerDecision.refuse("missing_certificate");
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
            ServingPolicy next = ServingPolicy.load(policyFile);
            List<Stamp> stamps = stamps(next);
            if (l.policy() != null && l.stamps().equals(stamps)) {
                return l;
            }
            if (!Stamp.of(next.clientCaFile()).equals(l.caAtStart())) {
                String error = "client CA " + next.clientCaFile() + " differs from the one the TLS layer loaded at "
                        + "start-up; every peer is refused until it is restored or the hub restarts";
                if (!error.equals(l.error())) {
                    log.accept(error);
                }
                loaded = new Loaded(null, error, stamps, l.caAtStart());
                return loaded;
            }
            if (l.policy() == null || !Objects.equals(l.stamps(), stamps)) {
                log.accept("serving policy " + policyFile + " reloaded: " + next.grants().size() + " grant(s)");
            }
            loaded = new Loaded(next, null, stamps, l.caAtStart());
        } catch (TrustFileException e) {
            if (!e.getMessage().equals(l.error())) {
                log.accept("serving policy no longer validates; every peer is refused until it does: " + e.getMessage());
            }
            loaded = new Loaded(null, e.getMessage(), l.stamps(), l.caAtStart());
        }
        return loaded;
    }

    private static List<Stamp> stamps(ServingPolicy p) {
        return stampsOf(p.file(), p.storeFile(), p.clientCaFile());
    }

    private static List<Stamp> stampsOf(Path policy, Path store, Path ca) {
        return List.of(Stamp.of(policy), store == null ? new Stamp(-2, -2, null) : Stamp.of(store),
                ca == null ? new Stamp(-2, -2, null) : Stamp.of(ca));
    }
}
