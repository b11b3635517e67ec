package dev.synapsehub.net.extension;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.protocol.HubContext;
import dev.synapsehub.net.protocol.Request;

import java.util.List;

/** The extensions a hub runs with, in order (possibly none). */
public final class HubExtensions {
    private final List<HubExtension> all;

    public HubExtensions(List<HubExtension> extensions) {
        this.all = List.copyOf(extensions);
    }

    /** No extensions. */
    public static HubExtensions none() {
        return new HubExtensions(List.of());
    }

    /** Binds each extension once. */
    public void bind(HubContext hub, ClaimService claims) {
        all.forEach(e -> e.bind(hub, claims));
    }

    /** The extension answering {@code type}, or null. */
    public HubExtension handler(String type) {
        for (HubExtension e : all) {
            if (e.handles(type)) {
                return e;
            }
        }
        return null;
    }

    /** True when no extension took the claim over. */
    public boolean claimIsLocal(Request claim) {
        for (HubExtension e : all) {
            if (!e.claimIsLocal(claim)) {
                return false;
            }
        }
        return true;
    }

    /** Lets every extension label a read reply ({@link HubExtension#labelRead}). */
    public void labelRead(ObjectNode reply) {
        all.forEach(e -> e.labelRead(reply));
    }

    /** Every extension's metrics. */
    public void appendMetrics(StringBuilder out) {
        all.forEach(e -> e.appendMetrics(out));
    }

    /** Closes every extension, last first. */
    public void close() {
        for (int i = all.size() - 1; i >= 0; i--) {
            all.get(i).close();
        }
    }
}
