package dev.synapsehub.net.identity;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

/**
 * Ed25519 as the contract's signed frames use it (identity proofs A2.2, signed cards F8): raw
 * 32-byte public keys and 64-byte signatures as strict standard base64, checked by the JDK.
 */
public final class Ed25519 {
    /** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
    private static final byte[] X509_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

    private Ed25519() {
    }

    /** The 32 raw key bytes of strict standard base64 text (canonical, padded), else null. */
    public static byte[] rawPublicKey(String base64) {
        if (base64 == null || base64.isEmpty()) {
            return null;
        }
        try {
            byte[] raw = Base64.getDecoder().decode(base64);
            if (raw.length != 32 || !Base64.getEncoder().encodeToString(raw).equals(base64)) {
                return null;
            }
            return raw;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The 64 signature bytes of standard base64 text, else null. */
    public static byte[] signature(String base64) {
        if (base64 == null || base64.isEmpty()) {
            return null;
        }
        try {
            byte[] sig = Base64.getDecoder().decode(base64);
            return sig.length == 64 ? sig : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether {@code signature} (64 bytes) is {@code rawKey}'s signature of {@code message}. */
    public static boolean verifies(byte[] rawKey, byte[] message, byte[] signature) {
        if (rawKey == null || signature == null) {
            return false;
        }
        try {
            Signature verifier = Signature.getInstance("Ed25519");
            verifier.initVerify(publicKey(rawKey));
            verifier.update(message);
            return verifier.verify(signature);
        } catch (GeneralSecurityException | RuntimeException e) {
            return false; // a key that is not a curve point, or a malformed signature: not a valid proof
        }
    }

    private static PublicKey publicKey(byte[] raw) throws GeneralSecurityException {
        byte[] der = new byte[X509_PREFIX.length + raw.length];
        System.arraycopy(X509_PREFIX, 0, der, 0, X509_PREFIX.length);
        System.arraycopy(raw, 0, der, X509_PREFIX.length, raw.length);
        return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
    }
}
