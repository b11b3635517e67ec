package dev.synapsehub.net.protocol;

/**
 * Rewrites Prometheus text so integral sample values carry no decimal point (contract §10:
 * {@code synapse_up 1}, not {@code 1.0}); scrapers parse either, but tools written for the
 * contract match the text.
 */
final class IntegralSamples {
    /** Beyond this a double no longer holds every integer exactly; such values stay as written. */
    private static final double EXACT = 9.007199254740992E15;

    private IntegralSamples() {
    }

    /** {@code text} with each integral sample value written as a whole number. */
    static String rewrite(CharSequence text) {
        StringBuilder out = new StringBuilder(text.length());
        int start = 0;
        while (start < text.length()) {
            int end = start;
            while (end < text.length() && text.charAt(end) != '\n') {
                end++;
            }
            out.append(line(text.subSequence(start, end).toString()));
            if (end < text.length()) {
                out.append('\n');
            }
            start = end + 1;
        }
        return out.toString();
    }

    private static String line(String line) {
        if (line.isEmpty() || line.charAt(0) == '#') {
            return line;
        }
        int valueStart = afterNameAndLabels(line);
        if (valueStart < 0) {
            return line;
        }
        int valueEnd = line.indexOf(' ', valueStart);
        if (valueEnd < 0) {
            valueEnd = line.length();
        }
        String value = line.substring(valueStart, valueEnd);
        String whole = whole(value);
        return whole == null ? line : line.substring(0, valueStart) + whole + line.substring(valueEnd);
    }

    /** Index of the first character of the value, or -1 when the line is not a sample. */
    private static int afterNameAndLabels(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        if (i < line.length() && line.charAt(i) == '{') {
            boolean quoted = false;
            for (i++; i < line.length(); i++) {
                char c = line.charAt(i);
                if (quoted && c == '\\') {
                    i++; // an escaped character inside a label value
                } else if (c == '"') {
                    quoted = !quoted;
                } else if (!quoted && c == '}') {
                    break;
                }
            }
            i++;
        }
        while (i < line.length() && line.charAt(i) == ' ') {
            i++;
        }
        return i < line.length() ? i : -1;
    }

    private static String whole(String value) {
        if (value.indexOf('.') < 0 && value.indexOf('E') < 0 && value.indexOf('e') < 0) {
            return null; // already whole, or +Inf / -Inf / NaN
        }
        double d;
        try {
            d = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            return null;
        }
        if (Double.isFinite(d) && d == Math.rint(d) && Math.abs(d) < EXACT) {
            return Long.toString((long) d);
        }
        return null;
    }
}
