package dev.synapsehub.federation.link;

import java.io.IOException;

/**
 * Decodes one kind of reply straight from its frame's UTF-8 bytes, for replies too large to be
 * worth a Jackson tree (a peer's log page).
 */
public interface ReplyDecoder<T> {
    /** The decoded reply; throws on malformed JSON (the link then closes, as for any malformed frame). */
    T decode(byte[] utf8) throws IOException;

    /**
     * Decodes the first {@code length} bytes of {@code scratch}, which the link reuses for the
     * next frame once this returns: the reply must keep nothing of it. By default a copy is decoded.
     */
    default T decode(byte[] scratch, int length) throws IOException {
        return decode(java.util.Arrays.copyOf(scratch, length));
    }

    /** The reply's {@code type} as a tree would read it ({@code path("type").asText()}). */
    String type(T reply);
}
