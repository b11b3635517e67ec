package dev.synapsehub.net.extension;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.protocol.Request;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

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
    public void bind(HubServices hub, ClaimService claims) {
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

    /** True when every extension admits the frame ({@link HubExtension#admits}); the first refusal answers it. */
    public boolean admits(Request request) {
        for (HubExtension e : all) {
            if (!e.admits(request)) {
                return false;
            }
        }
        return true;
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

    /** True when every extension would leave the claim to this hub's claim path now (no side effect). */
    public boolean claimResolvesLocal(Request claim) {
        for (HubExtension e : all) {
            if (!e.claimResolvesLocal(claim)) {
                return false;
            }
        }
        return true;
    }

    /** Lets every extension label a read reply ({@link HubExtension#labelRead}). */
    public void labelRead(ObjectNode reply) {
        all.forEach(e -> e.labelRead(reply));
    }

    /** Lets every extension label the reply to {@code request}. */
    public void labelRead(ObjectNode reply, Request request) {
        all.forEach(e -> e.labelRead(reply, request));
    }

    /** Runs {@code read} once every extension's {@link HubExtension#readBarrier} for {@code request} completed. */
    public <T> CompletableFuture<T> read(Request request, Supplier<CompletableFuture<T>> read) {
        CompletableFuture<Void> barrier = null;
        for (HubExtension e : all) {
            CompletableFuture<Void> b = e.readBarrier(request);
            if (b != null) {
                barrier = barrier == null ? b : barrier.thenCompose(done -> b);
            }
        }
        return barrier == null ? read.get() : barrier.thenCompose(done -> read.get());
    }

    /** Tells every extension of a committed escalation ({@link HubExtension#deadLetterEscalated}); null: none. */
    public void deadLetterEscalated(dev.synapsehub.core.event.DeadLetterEscalationEvent escalation) {
        if (escalation != null) {
            all.forEach(e -> e.deadLetterEscalated(escalation));
        }
    }

    /** True when an extension makes this hub one node of several ({@link HubExtension#presenceIsNodeLocal}). */
    public boolean presenceIsNodeLocal() {
        return all.stream().anyMatch(HubExtension::presenceIsNodeLocal);
    }

    /** Every extension's metrics. */
    public void appendMetrics(StringBuilder out) {
        all.forEach(e -> e.appendMetrics(out));
    }

    /** Every extension's {@link HubExtension#degradedReasons}, in order. */
    public List<String> degradedReasons() {
        List<String> out = new java.util.ArrayList<>();
        all.forEach(e -> out.addAll(e.degradedReasons()));
        return out;
    }

    /** Every extension's {@link HubExtension#failedReasons}, in order. */
    public List<String> failedReasons() {
        List<String> out = new java.util.ArrayList<>();
        all.forEach(e -> out.addAll(e.failedReasons()));
        return out;
    }

    /** Every extension's cockpit status ({@link HubExtension#cockpitStatus}), in order; empty for none. */
    public List<ObjectNode> cockpitStatus(double now) {
        List<ObjectNode> out = new java.util.ArrayList<>();
        for (HubExtension e : all) {
            ObjectNode status = e.cockpitStatus(now);
            if (status != null) {
                out.add(status);
            }
        }
        return out;
    }

    /** The first extension's page of cockpit list {@code list} ({@link HubExtension#cockpitRows}), or null. */
    public ObjectNode cockpitRows(String list, java.util.function.Predicate<String> matches, int offset, int limit,
                                  double now) {
        for (HubExtension e : all) {
            ObjectNode rows = e.cockpitRows(list, matches, offset, limit, now);
            if (rows != null) {
                return rows;
            }
        }
        return null;
    }

    /** Lets every extension feed {@code sink} what it applies without deciding ({@link HubExtension#tapReplicated}). */
    public void tapReplicated(java.util.function.Consumer<List<dev.synapsehub.core.journal.JournaledEvent>> sink) {
        all.forEach(e -> e.tapReplicated(sink));
    }

    /** Lets every extension tell {@code sink} when it replaced the state wholesale ({@link HubExtension#tapRestored}). */
    public void tapRestored(Runnable sink) {
        all.forEach(e -> e.tapRestored(sink));
    }

    /** Closes every extension, last first. */
    public void close() {
        for (int i = all.size() - 1; i >= 0; i--) {
            all.get(i).close();
        }
    }
}
