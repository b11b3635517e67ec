package dev.synapsehub.net.cockpit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.extension.HubExtensions;

import java.util.List;

/**
 * The cockpit's Cluster view: what the extensions report of federation peers and mesh nodes
 * ({@link dev.synapsehub.net.extension.HubExtension#cockpitStatus}). The cockpit thread looks
 * once a second and streams the status only when it changed, so an open page follows peers
 * and nodes live without asking again. A hub with neither shows no Cluster view.
 */
final class ClusterWatch {
    private final HubExtensions extensions;
    private String last;

    ClusterWatch(HubExtensions extensions) {
        this.extensions = extensions;
    }

    /** {@code {panels: [...]}}, measured now (cockpit thread). */
    ObjectNode view(double now) {
        ObjectNode o = FeedEvents.JSON.objectNode();
        ArrayNode panels = o.putArray("panels");
        extensions.cockpitStatus(now).forEach(panels::add);
        return o;
    }

    /** The kinds of panel this hub has ({@code federation}, {@code mesh}); empty on a plain hub. */
    List<String> kinds(double now) {
        return extensions.cockpitStatus(now).stream().map(p -> p.path("kind").asText()).toList();
    }

    /** Streams the status when it differs from what the open pages last got (cockpit thread). */
    void look(CockpitFeed feed, double now) {
        if (feed.streamCount() == 0) {
            last = null; // the next page opens with a fresh read anyway
            return;
        }
        ObjectNode v = view(now);
        if (v.path("panels").isEmpty()) {
            return;
        }
        String json = v.toString();
        if (!json.equals(last)) {
            last = json;
            feed.cluster(json);
        }
    }
}
