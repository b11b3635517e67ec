package dev.synapsehub.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Map;

/** How {@code mesh status} shows each node's offline queue depth (seed 001 §9, §12). */
final class QueueDepths {
    private QueueDepths() {
    }

    /** {@code queue_depth}: the total over the nodes that answered (null when none did); {@code queue_depths} by node. */
    static void put(ObjectNode o, Map<String, Integer> depths) {
        Integer total = total(depths);
        if (total == null) {
            o.putNull("queue_depth");
        } else {
            o.put("queue_depth", total);
        }
        ObjectNode by = o.putObject("queue_depths");
        depths.forEach((id, d) -> {
            if (d == null) {
                by.putNull(id);
            } else {
                by.put(id, d);
            }
        });
    }

    /** E.g. {@code 3 queued (n1 0, n2 3, n3 ?)}; {@code ?} for a node that did not answer. */
    static String text(Map<String, Integer> depths) {
        Integer total = total(depths);
        StringBuilder b = new StringBuilder(total == null ? "?" : String.valueOf(total)).append(" queued (");
        String sep = "";
        for (Map.Entry<String, Integer> e : depths.entrySet()) {
            b.append(sep).append(e.getKey()).append(' ').append(e.getValue() == null ? "?" : e.getValue());
            sep = ", ";
        }
        return b.append(')').toString();
    }

    private static Integer total(Map<String, Integer> depths) {
        Integer sum = null;
        for (Integer d : depths.values()) {
            if (d != null) {
                sum = (sum == null ? 0 : sum) + d;
            }
        }
        return sum;
    }
}
