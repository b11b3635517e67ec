package dev.synapsehub.federation;

import dev.synapsehub.net.protocol.PrometheusText;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * One Prometheus counter family with labels (e.g. forwarded claims by owner and outcome): a
 * count per combination of label values, created on its first increment, so every sample is a
 * measured count and never a placeholder.
 */
public final class LabelledCounters {
    private final String name;
    private final String help;
    private final List<String> labels;
    private final Map<List<String>, LongAdder> counts = new ConcurrentHashMap<>();

    public LabelledCounters(String name, String help, String... labels) {
        this.name = name;
        this.help = help;
        this.labels = List.of(labels);
    }

    /** Counts one for the given label values (one per label, in order). */
    public void increment(String... values) {
        counts.computeIfAbsent(key(values), k -> new LongAdder()).increment();
    }

    /** The count for the given label values (0 before the first increment). */
    public long get(String... values) {
        LongAdder a = counts.get(key(values));
        return a == null ? 0 : a.sum();
    }

    private List<String> key(String... values) {
        if (values.length != labels.size()) {
            throw new IllegalArgumentException(name + " takes " + labels.size() + " label values, got " + values.length);
        }
        return List.of(values);
    }

    /** Appends the family's samples in a stable order (nothing while no combination was counted). */
    public void appendTo(StringBuilder s) {
        List<Map.Entry<List<String>, LongAdder>> rows = new ArrayList<>(counts.entrySet());
        rows.sort(Comparator.comparing(e -> String.join("\u0000", e.getKey())));
        for (Map.Entry<List<String>, LongAdder> e : rows) {
            StringBuilder l = new StringBuilder("{");
            for (int i = 0; i < labels.size(); i++) {
                l.append(i == 0 ? "" : ",").append(labels.get(i)).append("=\"")
                        .append(PrometheusText.escapeLabel(e.getKey().get(i))).append('"');
            }
            PrometheusText.sample(s, name, help, "counter", l.append('}').toString(), e.getValue().sum());
        }
    }
}
