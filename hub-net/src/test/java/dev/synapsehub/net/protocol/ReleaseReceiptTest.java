package dev.synapsehub.net.protocol;

import com.fasterxml.jackson.databind.node.TextNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** R1.3: {@code freshness_seconds} is parsed as Python's {@code float(str(value))} would parse it. */
class ReleaseReceiptTest {

    private static Double freshness(String text) {
        return ReleaseReceipt.freshness(TextNode.valueOf(text));
    }

    @Test
    void aDigitStringTooLongForADoubleIsInfinityNotAStackOverflow() {
        assertThat(freshness("1".repeat(5000))).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(freshness("1".repeat(200_000))).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(freshness("1_".repeat(2500) + "1")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(freshness("0." + "1".repeat(5000))).isBetween(0.11, 0.12);
        assertThat(freshness("1e" + "9".repeat(5000))).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(freshness("-" + "1".repeat(5000))).isEqualTo(Double.NEGATIVE_INFINITY);
    }

    @Test
    void pythonFloatLiteralsParseAndOthersDoNot() {
        assertThat(freshness("12")).isEqualTo(12.0);
        assertThat(freshness(" 7 ")).isEqualTo(7.0);
        assertThat(freshness("\u00A07\u2007")).isEqualTo(7.0);
        assertThat(freshness("1e3")).isEqualTo(1000.0);
        assertThat(freshness("1_000")).isEqualTo(1000.0);
        assertThat(freshness("1.")).isEqualTo(1.0);
        assertThat(freshness(".5")).isEqualTo(0.5);
        assertThat(freshness("1.e2")).isEqualTo(100.0);
        assertThat(freshness("+1_0.2_5E+0_1")).isEqualTo(102.5);
        assertThat(freshness(" INF ")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(freshness("-Infinity")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(freshness("nan")).isNaN();
        for (String bad : new String[] {"", ".", "abc", "0x10", "1_", "_1", "1__0", "1_.5", "1._5", "1e", "1e_5",
                "1e5_", "e5", "++1", "1 2", "1d", "1f", "Infinity1", "\uFF49\uFF4E\uFF46", "\uFF0B1", "1\uFF0E5"}) {
            assertThat(freshness(bad)).as("'%s'", bad).isNull();
        }
    }

    @Test
    void unicodeDecimalDigitsCountAsPythonsFloatCountsThem() {
        assertThat(freshness("\uFF11\uFF12")).isEqualTo(12.0); // fullwidth １２
        assertThat(freshness("\u0664\u0662.\u0665")).isEqualTo(42.5); // Arabic-Indic ٤٢.٥
        assertThat(freshness("\uD835\uDFCF\uD835\uDFCE")).isEqualTo(10.0); // mathematical bold 𝟏𝟎 (astral)
        assertThat(freshness("1e\uFF12")).isEqualTo(100.0);
        assertThat(freshness("\u00B2")).isNull(); // superscript two is a digit but not a decimal
    }
}
