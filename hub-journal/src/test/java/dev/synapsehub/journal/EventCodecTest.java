package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.claim.GitContext;
import dev.synapsehub.core.event.ClaimDeniedEvent;
import dev.synapsehub.core.event.ClaimReleasedEvent;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.event.CoordinationEvent;
import dev.synapsehub.core.event.IdempotencyRecordedEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventCodecTest {
    private final EventCodec codec = new EventCodec();

    private static Claim claim(List<String> paths, GitContext git, String note) {
        return new Claim("task-\u00e9\u4e2d\uD83D\uDE00", "agent-\u00df", "principal-1", note, 1_700_000_000.125,
                1_700_003_600.5, ClaimStatus.INPUT_REQUIRED, "s3://bucket/\u00fc", "wt-\u00e5", paths, 42, 7,
                "ckpt-\u2603", git);
    }

    private CoordinationEvent roundTrip(CoordinationEvent event) throws Exception {
        String payload = codec.encode(event);
        assertThat(payload).as("compact ASCII-only JSON").matches("\\A[\\x20-\\x7e]*\\z").doesNotContain(": ");
        return codec.decode(event.kind(), event.ts(), payload).orElseThrow();
    }

    @Test
    void everySnapshotKindRoundTripsWithUnicodeAndGit() throws Exception {
        for (ClaimSnapshotEvent.Kind kind : ClaimSnapshotEvent.Kind.values()) {
            ClaimSnapshotEvent event = new ClaimSnapshotEvent(1_700_000_000.125, kind,
                    claim(List.of("src/\u00e9.java", "docs"), new GitContext("feat/\u00e9", "", "commit"),
                            "note \"quoted\" \\ \n\t\u0001 \uD800 lone surrogate"));
            assertThat(roundTrip(event)).isEqualTo(event);
        }
    }

    @Test
    void nullGitEmptyPathsAndRootPathStayDistinct() throws Exception {
        ClaimSnapshotEvent noPaths = new ClaimSnapshotEvent(1.5, ClaimSnapshotEvent.Kind.CLAIM, claim(List.of(), null, ""));
        ClaimSnapshotEvent root = new ClaimSnapshotEvent(1.5, ClaimSnapshotEvent.Kind.CLAIM, claim(List.of(""), null, ""));
        assertThat(codec.encode(noPaths)).contains("\"paths\":[]").contains("\"git\":null");
        assertThat(codec.encode(root)).contains("\"paths\":[\"\"]");
        assertThat(roundTrip(noPaths)).isEqualTo(noPaths);
        assertThat(roundTrip(root)).isEqualTo(root);
        assertThat(((ClaimSnapshotEvent) roundTrip(root)).claim().paths()).containsExactly("");
    }

    @Test
    void claimPayloadUsesTheContractMemberNames() {
        String payload = codec.encode(new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.HANDOFF,
                claim(List.of("a"), new GitContext("b", "main", "merge"), "n")));
        for (String member : List.of("task_id", "owner", "note", "claimed_at", "lease_expires_at", "status", "data_ref",
                "worktree", "paths", "epoch", "version", "checkpoint", "git", "branch", "base", "auto_release_on",
                "quota_principal")) {
            assertThat(payload).contains("\"" + member + "\":");
        }
        assertThat(payload).contains("\"status\":\"input_required\"");
    }

    @Test
    void releaseDenialAndIdempotencyRoundTrip() throws Exception {
        CoordinationEvent release = new ClaimReleasedEvent(2.25, "t\u00e9");
        CoordinationEvent denial = new ClaimDeniedEvent(3.5, "claim\u00e4nt", "aa", true, 3, "LEASE_LIVE", "bb", "cc");
        CoordinationEvent idem = new IdempotencyRecordedEvent(4.0, "alice\0claim\0k-\u00e9",
                "dd", "{\"type\":\"claim_ok\",\"note\":\"\u00e9\"}");
        assertThat(codec.encode(release)).isEqualTo("{\"task_id\":\"t\\u00E9\"}");
        assertThat(codec.encode(denial)).contains("\"decision\":\"deny\"").contains("\"claimant_truncated\":true")
                .contains("\"path_count\":3");
        assertThat(roundTrip(release)).isEqualTo(release);
        assertThat(roundTrip(denial)).isEqualTo(denial);
        assertThat(roundTrip(idem)).isEqualTo(idem);
    }

    @Test
    void olderPayloadWithoutQuotaPrincipalIsChargedToTheOwner() throws Exception {
        String payload = "{\"task_id\":\"t\",\"owner\":\"bob\",\"note\":\"\",\"claimed_at\":1,\"lease_expires_at\":99,"
                + "\"status\":\"working\",\"data_ref\":\"\",\"worktree\":\"\",\"paths\":[],\"epoch\":3,\"version\":1,"
                + "\"checkpoint\":\"\",\"git\":null,\"path_identity\":{\"x\":[1,2]}}";
        Claim c = ((ClaimSnapshotEvent) codec.decode("claim", 1.0, payload).orElseThrow()).claim();
        assertThat(c.principal()).isEqualTo("bob");
        assertThat(c.status()).isEqualTo(ClaimStatus.WORKING);
        assertThat(c.epoch()).isEqualTo(3);
    }

    @Test
    void referenceIdempotencyResponseObjectIsAccepted() throws Exception {
        IdempotencyRecordedEvent e = (IdempotencyRecordedEvent) codec.decode("idempotency", 1.0,
                "{\"key\":\"k\",\"response\":{\"type\":\"claim_ok\",\"epoch\":3}}").orElseThrow();
        assertThat(e.response()).isEqualTo("{\"type\":\"claim_ok\",\"epoch\":3}");
    }

    @Test
    void unknownKindsDecodeToNothingAndBadPayloadsAreCorrupt() throws Exception {
        assertThat(codec.decode("memory_compaction", 1.0, "{}")).isEmpty(); // recall is known since issue 14
        assertThat(codec.decode("sandbox_run", 1.0, "not json")).isEmpty();
        // the federation audit kinds are known since issue 12: a damaged one is corrupt, not skipped
        for (String bad : List.of("not json", "{not json}", "[]")) {
            assertThatThrownBy(() -> codec.decode("multihub_heal", 1.0, bad)).as(bad)
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
        for (String bad : List.of("not json", "[]", "{\"task_id\":", "{\"owner\":\"x\"}", "{} trailing",
                "{\"task_id\":\"t\",\"owner\":\"o\",\"epoch\":1,\"lease_expires_at\":2,\"status\":\"bogus\"}")) {
            assertThatThrownBy(() -> codec.decode("claim", 1.0, bad)).as(bad)
                    .isInstanceOf(EventCodec.CorruptPayloadException.class);
        }
        assertThatThrownBy(() -> codec.decode("release", 1.0, "{}"))
                .isInstanceOf(EventCodec.CorruptPayloadException.class);
    }

    @Test
    void decodingStoredBytesEqualsDecodingTheText() throws Exception {
        ClaimSnapshotEvent event = new ClaimSnapshotEvent(2.5, ClaimSnapshotEvent.Kind.TASK_UPDATE,
                claim(List.of("src/\u00e9.java"), new GitContext("b", "main", "merge"), "n \uD800"));
        List<String> payloads = List.of(codec.encode(event), codec.encode(new ClaimReleasedEvent(2.5, "t")),
                "{\"task_id\":\"raw \u00e9\u4e2d\"}", "\uFEFF{\"task_id\":\"bom\"}", "", "[]", "{\"task_id\":1}",
                "{\"task_id\":\"t\"} trailing");
        for (String text : payloads) {
            for (String kind : List.of("release", "claim", "task_update", "chat")) {
                byte[] utf8 = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                Object viaText;
                Object viaBytes;
                try {
                    viaText = codec.decode(kind, 2.5, text);
                } catch (EventCodec.CorruptPayloadException e) {
                    viaText = e.getMessage();
                }
                try {
                    viaBytes = codec.decode(kind, 2.5, utf8);
                } catch (EventCodec.CorruptPayloadException e) {
                    viaBytes = e.getMessage();
                }
                assertThat(viaBytes).as(kind + " " + text).isEqualTo(viaText);
            }
        }
        // invalid UTF-8 inside a string: the text path's replacement characters, not a failure
        byte[] invalid = {'{', '"', 't', 'a', 's', 'k', '_', 'i', 'd', '"', ':', '"', 'a', (byte) 0xff, '"', '}'};
        assertThat(codec.decode("release", 1.0, invalid))
                .isEqualTo(codec.decode("release", 1.0, new String(invalid, java.nio.charset.StandardCharsets.UTF_8)));
    }
}
