package dev.synapsehub.net.protocol;

/**
 * Prometheus text-format (0.0.4) samples for the figures extensions append to {@code /metrics}
 * by hand, written the way the hub's own registry writes them: metadata names the full sample
 * name ({@code _total} included for counters), integral values carry no {@code .0}.
 */
public final class PrometheusText {
    private PrometheusText() {
    }

    /** A counter sample without labels, with its HELP and TYPE lines. */
    public static void counter(StringBuilder s, String name, String help, long value) {
        sample(s, name, help, "counter", "", value);
    }

    /** A gauge sample without labels, with its HELP and TYPE lines. */
    public static void gauge(StringBuilder s, String name, String help, double value) {
        sample(s, name, help, "gauge", "", value);
    }

    /**
     * One sample; {@code labels} is empty or {@code {k="v",...}} with values escaped by
     * {@link #escapeLabel}. HELP and TYPE are written once per name, so a labelled family can be
     * appended sample by sample.
     */
    public static void sample(StringBuilder s, String name, String help, String type, String labels, double value) {
        if (s.indexOf("# TYPE " + name + " ") < 0) {
            s.append("# HELP ").append(name).append(' ').append(help).append('\n');
            s.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        }
        s.append(name).append(labels).append(' ');
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            s.append((long) value);
        } else {
            s.append(value);
        }
        s.append('\n');
    }

    /** A label value with backslash, quote and newline escaped. */
    public static String escapeLabel(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
