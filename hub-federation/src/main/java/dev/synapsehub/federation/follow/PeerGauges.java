package dev.synapsehub.federation.follow;

import dev.synapsehub.net.protocol.PrometheusText;

import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * The per-peer gauges of the watch on {@code /metrics}, one family at a time (the text format
 * wants a family's samples together). A value not measured yet (no successful poll, no
 * connection) is left out rather than shown as a made-up zero.
 */
public final class PeerGauges {
    private PeerGauges() {
    }

    private record Gauge(String name, String help, Function<PeerView, Double> value) {
    }

    /** Appends every gauge for every peer in {@code views}; {@code now} decides which observed claims are live. */
    public static void appendTo(StringBuilder out, Collection<PeerView> views, double now) {
        List<Gauge> gauges = List.of(
                new Gauge("synapse_multihub_peer_cursor", "Last peer seq folded.", v -> (double) v.cursor()),
                new Gauge("synapse_multihub_peer_log_end_seq", "The peer's log end at the last successful poll.",
                        v -> v.logEnd() < 0 ? null : (double) v.logEnd()),
                new Gauge("synapse_multihub_peer_lag_events",
                        "Peer events not folded yet: log end minus cursor at the last successful poll.",
                        v -> v.logEnd() < 0 ? null : (double) v.lag()),
                new Gauge("synapse_multihub_peer_last_success_timestamp_seconds", "Time of the last successful poll.",
                        v -> v.lastSuccess() > 0 ? v.lastSuccess() : null),
                new Gauge("synapse_multihub_peer_clock_skew_seconds", "Peer clock minus this hub's at the last connection.",
                        v -> Double.isNaN(v.clockSkewSeconds()) ? null : v.clockSkewSeconds()),
                new Gauge("synapse_multihub_peer_quarantined", "1 while quarantined for equivocation.",
                        v -> v.quarantined() ? 1.0 : 0.0),
                new Gauge("synapse_multihub_peer_live_claims", "Live claims the peer's log asserts.",
                        v -> (double) v.claims().values().stream().filter(c -> c.liveAt(now)).count()));
        for (Gauge g : gauges) {
            for (PeerView v : views) {
                Double value = g.value().apply(v);
                if (value != null) {
                    PrometheusText.sample(out, g.name(), g.help(), "gauge",
                            "{peer=\"" + PrometheusText.escapeLabel(v.peer()) + "\"}", value);
                }
            }
        }
    }
}
