package dev.synapsehub.net.wire;

import com.fasterxml.jackson.core.io.schubfach.DoubleToDecimal;

import java.math.BigDecimal;

/**
 * Formats a double exactly as Python's {@code repr(float)} does (wire contract §9): the
 * shortest digit string that round-trips (the closest to the value when several do, the even
 * one on a tie), positional when the decimal exponent is in [-4, 16), otherwise
 * {@code d[.ddd]e±XX}. This feeds the canonical JSON of signatures and idempotency digests.
 *
 * <p>The digits come from the Schubfach algorithm Jackson bundles (proven shortest and
 * closest). Its one difference from Python: when one digit suffices it may return two that
 * are closer (Java prints {@code 4.9E-324}, Python {@code 5e-324}); that case is put right here.
 */
public final class PythonFloatFormat {
    private PythonFloatFormat() {
    }

    /** Python {@code repr} of {@code value}; non-finite values print as Python's JSON encoder does. */
    public static String format(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "Infinity" : "-Infinity";
        }
        if (value == 0.0) {
            return (Double.doubleToRawLongBits(value) < 0) ? "-0.0" : "0.0";
        }
        double abs = Math.abs(value);
        Decimal d = Decimal.of(DoubleToDecimal.toString(abs));
        if (d.digits.length() == 2) {
            d = d.oneDigitIfRoundTrips(abs);
        }
        return d.python(value < 0);
    }

    /** Significant digits (no leading or trailing zeros) times 10^(exponent - digits + 1). */
    private record Decimal(String digits, int exponent) {

        /** Parses Java's rendering ({@code 0.002}, {@code 100.0}, {@code 1.7959763575882967E9}). */
        static Decimal of(String java) {
            int e = java.indexOf('E');
            String mantissa = e < 0 ? java : java.substring(0, e);
            int exponent10 = e < 0 ? 0 : Integer.parseInt(java.substring(e + 1));
            int point = mantissa.indexOf('.');
            String all = mantissa.substring(0, point) + mantissa.substring(point + 1);
            int lead = 0;
            while (lead < all.length() - 1 && all.charAt(lead) == '0') {
                lead++;
            }
            int end = all.length();
            while (end > lead + 1 && all.charAt(end - 1) == '0') {
                end--;
            }
            // the first significant digit sits (point - 1 - lead) places left of the units digit
            return new Decimal(all.substring(lead, end), exponent10 + point - 1 - lead);
        }

        /** Python takes one digit where one round-trips: the closer of the two, the even on a tie. */
        Decimal oneDigitIfRoundTrips(double abs) {
            int first = digits.charAt(0) - '0';
            Decimal down = new Decimal(Integer.toString(first), exponent);
            Decimal up = first == 9 ? new Decimal("1", exponent + 1) : new Decimal(Integer.toString(first + 1), exponent);
            boolean downFits = down.value() == abs;
            boolean upFits = up.value() == abs;
            if (!downFits && !upFits) {
                return this;
            }
            if (downFits != upFits) {
                return downFits ? down : up;
            }
            BigDecimal exact = new BigDecimal(abs);
            int order = exact.subtract(down.exact()).compareTo(up.exact().subtract(exact));
            if (order != 0) {
                return order < 0 ? down : up;
            }
            return (first % 2 == 0) ? down : up;
        }

        double value() {
            return Double.parseDouble(digits + "e" + (exponent - digits.length() + 1));
        }

        BigDecimal exact() {
            return new BigDecimal(digits + "e" + (exponent - digits.length() + 1));
        }

        String python(boolean negative) {
            StringBuilder out = new StringBuilder(26);
            if (negative) {
                out.append('-');
            }
            if (exponent >= -4 && exponent < 16) {
                if (exponent >= 0) {
                    if (digits.length() <= exponent + 1) {
                        out.append(digits).append("0".repeat(exponent + 1 - digits.length())).append(".0");
                    } else {
                        out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
                    }
                } else {
                    out.append("0.").append("0".repeat(-exponent - 1)).append(digits);
                }
                return out.toString();
            }
            out.append(digits.charAt(0));
            if (digits.length() > 1) {
                out.append('.').append(digits, 1, digits.length());
            }
            out.append('e').append(exponent < 0 ? '-' : '+');
            int absExp = Math.abs(exponent);
            if (absExp < 10) {
                out.append('0');
            }
            return out.append(absExp).toString();
        }
    }
}
