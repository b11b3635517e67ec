package dev.synapsehub.net.wire;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Formats a double exactly as Python's {@code repr(float)} does (wire contract §9): the
 * shortest digit string that round-trips, positional when the decimal exponent is in
 * [-4, 16), otherwise {@code d[.ddd]e±XX}. Java's {@link Double#toString} differs.
 */
public final class PythonFloatFormat {
    private PythonFloatFormat() {
    }

    /** Python {@code repr} of {@code value}; non-finite values print as Python does. */
    public static String format(double value) {
        return format(value, true);
    }

    /** The same without the fast path: every value goes through the digit search (for tests). */
    static String formatBySearch(double value) {
        return format(value, false);
    }

    private static String format(double value, boolean fastPath) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        if (value == 0.0) {
            return (Double.doubleToRawLongBits(value) < 0) ? "-0.0" : "0.0";
        }
        boolean negative = value < 0;
        double abs = Math.abs(value);
        BigDecimal shortest = shortest(abs, fastPath);
        String digits = shortest.unscaledValue().toString();
        int trailing = 0;
        while (trailing < digits.length() - 1 && digits.charAt(digits.length() - 1 - trailing) == '0') {
            trailing++;
        }
        digits = digits.substring(0, digits.length() - trailing);
        // value = 0.digits × 10^(exp10+1) => scientific exponent:
        int exponent = digits.length() - 1 - shortest.scale() + trailing;
        StringBuilder out = new StringBuilder(24);
        if (negative) {
            out.append('-');
        }
        if (exponent >= -4 && exponent < 16) {
            if (exponent >= 0) {
                if (digits.length() <= exponent + 1) {
                    out.append(digits);
                    out.append("0".repeat(exponent + 1 - digits.length()));
                    out.append(".0");
                } else {
                    out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
                }
            } else {
                out.append("0.").append("0".repeat(-exponent - 1)).append(digits);
            }
        } else {
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits, 1, digits.length());
            }
            out.append('e').append(exponent < 0 ? '-' : '+');
            int absExp = Math.abs(exponent);
            if (absExp < 10) {
                out.append('0');
            }
            out.append(absExp);
        }
        return out.toString();
    }

    /** The shortest correctly rounded decimal that parses back to {@code abs}. */
    private static BigDecimal shortest(double abs, boolean fastPath) {
        String java = Double.toString(abs);
        int upper = Math.min(17, significantDigits(java));
        if (fastPath && upper <= 15 && abs >= 0x1p-1000) {
            // Double.toString round-trips. A normal double (kept clear of the subnormals) has
            // exactly one decimal of at most 15 significant digits that parses to it (DBL_DIG =
            // 15: such a decimal survives decimal -> double -> nearest 15-digit decimal), and the
            // shortest repr has no more digits than this one, so it is this one. Timestamps
            // (millisecond precision, 13 digits) take this path and skip the exact search below,
            // which was the hottest code of a broadcast's encoding.
            return new BigDecimal(java);
        }
        BigDecimal exact = new BigDecimal(abs);
        // Double.toString always round-trips; it is an upper bound on the digits needed.
        BigDecimal best = exact.round(new MathContext(upper, RoundingMode.HALF_EVEN));
        if (best.doubleValue() != abs) {
            best = exact.round(new MathContext(17, RoundingMode.HALF_EVEN));
            upper = 17;
        }
        // If p digits round-trip, so do p+1: search downwards for the shortest.
        for (int p = upper - 1; p >= 1; p--) {
            BigDecimal candidate = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            if (candidate.doubleValue() != abs) {
                break;
            }
            best = candidate;
        }
        return best;
    }

    private static int significantDigits(String javaRepr) {
        int end = javaRepr.indexOf('E');
        if (end < 0) {
            end = javaRepr.length();
        }
        int first = -1;
        int last = -1;
        int count = 0;
        for (int i = 0; i < end; i++) {
            char c = javaRepr.charAt(i);
            if (c < '0' || c > '9') {
                continue;
            }
            if (first < 0 && c == '0') {
                continue; // leading zeros are not significant
            }
            if (first < 0) {
                first = count;
            }
            count++;
            if (c != '0') {
                last = count;
            }
        }
        return Math.max(1, last < 0 ? 0 : last - first);
    }
}
