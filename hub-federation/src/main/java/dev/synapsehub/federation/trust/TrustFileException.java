package dev.synapsehub.federation.trust;

/** A trust file (serving policy, federation store, client CA) that cannot be used; the message names file, field and fix. */
public final class TrustFileException extends Exception {
    public TrustFileException(String message) {
        super(message);
    }

    public TrustFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
