package dev.synapsehub.mesh;

/**
 * The fence of a replicated record (seed 001 §2, §8): the Raft term the leader decided in (the
 * lease epoch), the leader's node id and the log index of the last record its decision saw.
 * A record whose term is not the term it was committed in, or whose base index is not the
 * last applied record, is stale and rejected on every node alike.
 */
public record FenceToken(long term, String leaderId, long baseIndex) {
    public FenceToken {
        if (term < 0 || baseIndex < 0 || leaderId == null || leaderId.isEmpty() || leaderId.contains(":")) {
            throw new IllegalArgumentException("bad fence token " + term + ":" + leaderId + ":" + baseIndex);
        }
    }

    /** {@code term:leaderId:baseIndex}. */
    public String wire() {
        return term + ":" + leaderId + ":" + baseIndex;
    }

    /** Parses {@link #wire()}. */
    public static FenceToken parse(String s) {
        String[] parts = s == null ? new String[0] : s.split(":", -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("bad fence token '" + s + "'");
        }
        return new FenceToken(Long.parseLong(parts[0]), parts[1], Long.parseLong(parts[2]));
    }
}
