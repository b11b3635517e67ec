package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.federation.trust.FederationStore;
import dev.synapsehub.federation.trust.PeeringRecord;
import dev.synapsehub.federation.trust.ScopeGrant;
import dev.synapsehub.federation.trust.TrustFileException;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code federation_offer_request} → private {@code federation_offer} (contract A4): this hub's
 * own bundle, re-read from {@code --federation-offer FILE} on every request, so a peer's operator
 * can fetch it and compare fingerprints before importing. Nothing here grants anything.
 */
public final class OfferServer {
    private static final Logger LOG = LoggerFactory.getLogger(OfferServer.class);
    private final HubServices hub;
    private final Path offerFile;

    /** {@code offerFile} null: no offer configured. */
    public OfferServer(HubServices hub, Path offerFile) {
        this.hub = hub;
        this.offerFile = offerFile;
    }

    /** Reads and checks an offer file (start-up, and each request). */
    public static PeeringRecord read(Path file) throws TrustFileException {
        try {
            return FederationStore.parseBundle(Files.readAllBytes(file), file);
        } catch (IOException e) {
            throw new TrustFileException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** Answers one request. */
    public void handle(Request r) {
        double now = hub.clock().nowSeconds();
        if (offerFile == null) {
            hub.outbox().send(r.session(), hub.frames().error(r.sender(), "No federation offer is configured on this hub.",
                    now));
            return;
        }
        PeeringRecord offer;
        try {
            offer = read(offerFile);
        } catch (TrustFileException e) {
            LOG.warn("--federation-offer is unavailable: {}", e.getMessage());
            hub.outbox().send(r.session(), hub.frames().error(r.sender(),
                    "The federation offer on this hub is unavailable.", now));
            return;
        }
        ObjectNode f = hub.frames().envelope(r.sender(), "federation_offer", "Federation-bundle offer", now);
        ObjectNode bundle = FederationStore.bundleJson(offer, true);
        f.put("domain_id", offer.domainId());
        f.set("namespaces", bundle.get("namespaces"));
        f.set("certificate_pins", bundle.get("certificate_pins"));
        f.set("signing_key_ids", bundle.get("signing_key_ids"));
        ArrayNode grants = f.putArray("scope_grants");
        for (ScopeGrant g : offer.scopeGrants()) {
            grants.addObject().put("verb", g.verb()).put("namespace", g.namespace());
        }
        f.set("expires_at", bundle.get("expires_at"));
        f.put("revoked", offer.revoked());
        hub.outbox().send(r.session(), f);
    }
}
