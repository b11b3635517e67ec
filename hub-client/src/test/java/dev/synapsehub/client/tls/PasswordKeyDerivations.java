package dev.synapsehub.client.tls;

import java.security.InvalidKeyException;
import java.security.Provider;
import java.security.Security;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.KeySpec;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactorySpi;

/**
 * Counts the password-based key derivations (the PBKDF2 rounds of a PKCS#12 key store) a piece of
 * code asks for: a provider first in line offers every PBE secret-key factory such a store uses,
 * counts each use and refuses it, so code that still builds a PKCS#12 store fails or shows a count.
 */
public final class PasswordKeyDerivations {
    private PasswordKeyDerivations() {
    }

    /** What runs while derivations are counted. */
    public interface Work {
        /** Runs the code under test. */
        void run() throws Exception;
    }

    /** Runs {@code work} with the refusing provider installed first; how many derivations it asked for. */
    public static int countedDuring(Work work) throws Exception {
        AtomicInteger derivations = new AtomicInteger();
        Provider refusing = new RefusingPbe(derivations);
        if (Security.insertProviderAt(refusing, 1) != 1) {
            throw new IllegalStateException("the refusing provider could not be put first");
        }
        try {
            work.run();
        } finally {
            Security.removeProvider(refusing.getName());
        }
        return derivations.get();
    }

    private static final class RefusingPbe extends Provider {
        RefusingPbe(AtomicInteger derivations) {
            super("RefusingPbe", "1", "refuses password-based key derivation (tests)");
            for (String algorithm : List.of("PBE", "PBEWithHmacSHA256AndAES_256", "PBKDF2WithHmacSHA256",
                    "PBEWithSHA1AndDESede", "PBEWithSHA1AndRC2_40")) {
                putService(new Service(this, "SecretKeyFactory", algorithm, RefusingFactory.class.getName(), null, null) {
                    @Override
                    public Object newInstance(Object constructorParameter) {
                        return new RefusingFactory(derivations);
                    }
                });
            }
        }
    }

    private static final class RefusingFactory extends SecretKeyFactorySpi {
        private final AtomicInteger derivations;

        RefusingFactory(AtomicInteger derivations) {
            this.derivations = derivations;
        }

        @Override
        protected SecretKey engineGenerateSecret(KeySpec spec) throws InvalidKeySpecException {
            derivations.incrementAndGet();
            throw new InvalidKeySpecException("no password-based key derivation here");
        }

        @Override
        protected KeySpec engineGetKeySpec(SecretKey key, Class<?> spec) throws InvalidKeySpecException {
            throw new InvalidKeySpecException("unsupported");
        }

        @Override
        protected SecretKey engineTranslateKey(SecretKey key) throws InvalidKeyException {
            throw new InvalidKeyException("unsupported");
        }
    }
}
