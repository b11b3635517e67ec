package dev.synapsehub.federation;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.core.actor.CoordinationActor;
import dev.synapsehub.core.actor.Mutation;
import dev.synapsehub.core.actor.Outcome;
import dev.synapsehub.core.command.AuditRecordCommand;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

/**
 * Journals federation audit records (contract §12.4: {@code multihub_partition},
 * {@code multihub_heal}, {@code multihub_equivocation}, {@code multihub_equivocation_recovery})
 * through the actor, so they are in the hub's one journal, at FULL, in order with everything else.
 */
public final class AuditJournal {
    private static final ObjectMapper ASCII = new ObjectMapper(JsonFactory.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII).build());
    private final CoordinationActor actor;
    private final String hubId;

    public AuditJournal(CoordinationActor actor, String hubId) {
        this.actor = actor;
        this.hubId = hubId;
    }

    /** A fresh payload object. */
    public static ObjectNode payload() {
        return JsonNodeFactory.instance.objectNode();
    }

    /** Adds {@code <field>}, {@code <field>_sha256} and {@code <field>_truncated} (at most 256 characters kept). */
    public static void putIdentity(ObjectNode o, String field, String value) {
        boolean truncated = value.length() > 256;
        o.put(field, truncated ? value.substring(0, 256) : value);
        o.put(field + "_sha256", sha256(value));
        o.put(field + "_truncated", truncated);
    }

    /** Lowercase hex SHA-256 of the UTF-8 text. */
    public static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Journals one record; completes true once committed, false when the actor refused it. */
    public CompletableFuture<Boolean> record(String kind, ObjectNode payload) {
        String json;
        try {
            json = ASCII.writeValueAsString(payload);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        return actor.submit(new Mutation(new AuditRecordCommand(hubId, kind, json), null))
                .thenApply(outcome -> outcome instanceof Outcome.Decided);
    }
}
