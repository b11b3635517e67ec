package dev.synapsehub.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Python's {@code str.strip()}: the whitespace Java's {@code strip()} misses is trimmed too. */
class PythonWhitespaceTest {
    @Test
    void stripsWhatPythonStripsAndNothingElse() {
        assertThat(PythonWhitespace.strip("\u00A0\u2007\u202F\u0085\u001C ops\t\u3000\u205F")).isEqualTo("ops");
        assertThat(PythonWhitespace.strip("\u200Bops\uFEFF")).as("zero-width space and BOM are not whitespace")
                .isEqualTo("\u200Bops\uFEFF");
        assertThat(PythonWhitespace.strip("a\u00A0b")).isEqualTo("a\u00A0b");
        assertThat(PythonWhitespace.strip(null)).isNull();
        assertThat(PythonWhitespace.isBlank("\u00A0\u2007\u202F")).isTrue();
        assertThat(PythonWhitespace.isBlank(null)).isTrue();
        assertThat(PythonWhitespace.isBlank("\u200B")).isFalse();
    }
}
