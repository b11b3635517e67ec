package dev.synapsehub.federation.trust;

/** One operator grant of a serving policy (contract §11.4): the peer hub id as it registers, and what it is granted as. */
public record ServingGrant(String sender, String domainId, String namespace, String signingKeyId) {
}
