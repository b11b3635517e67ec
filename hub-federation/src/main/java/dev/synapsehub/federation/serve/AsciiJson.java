package dev.synapsehub.federation.serve;

import com.fasterxml.jackson.core.SerializableString;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A stored payload's bytes, all ASCII, written into a page as they are
 * ({@code JsonGenerator.writeRawValue}): the journal's UTF-8 goes to the frame with no
 * {@code String} and no second encoding per row. Only the unquoted forms exist: a raw JSON value
 * is never quoted.
 */
final class AsciiJson implements SerializableString {
    private final byte[] ascii;

    /** {@code ascii}: bytes the caller found all ASCII ({@link StoredObjectCheck.Shape#ASCII_OBJECT}). */
    AsciiJson(byte[] ascii) {
        this.ascii = ascii;
    }

    @Override
    public String getValue() {
        return new String(ascii, StandardCharsets.US_ASCII);
    }

    @Override
    public int charLength() {
        return ascii.length;
    }

    @Override
    public byte[] asUnquotedUTF8() {
        return ascii;
    }

    @Override
    public int appendUnquotedUTF8(byte[] buffer, int offset) {
        if (buffer.length - offset < ascii.length) {
            return -1; // the generator then flushes and writes asUnquotedUTF8()
        }
        System.arraycopy(ascii, 0, buffer, offset, ascii.length);
        return ascii.length;
    }

    @Override
    public int appendUnquoted(char[] buffer, int offset) {
        if (buffer.length - offset < ascii.length) {
            return -1;
        }
        for (int k = 0; k < ascii.length; k++) {
            buffer[offset + k] = (char) ascii[k];
        }
        return ascii.length;
    }

    @Override
    public int writeUnquotedUTF8(OutputStream out) throws IOException {
        out.write(ascii);
        return ascii.length;
    }

    @Override
    public int putUnquotedUTF8(ByteBuffer buffer) {
        if (buffer.remaining() < ascii.length) {
            return -1;
        }
        buffer.put(ascii);
        return ascii.length;
    }

    @Override
    public char[] asQuotedChars() {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }

    @Override
    public byte[] asQuotedUTF8() {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }

    @Override
    public int appendQuotedUTF8(byte[] buffer, int offset) {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }

    @Override
    public int appendQuoted(char[] buffer, int offset) {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }

    @Override
    public int writeQuotedUTF8(OutputStream out) {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }

    @Override
    public int putQuotedUTF8(ByteBuffer buffer) {
        throw new UnsupportedOperationException("a raw JSON value is never quoted");
    }
}
