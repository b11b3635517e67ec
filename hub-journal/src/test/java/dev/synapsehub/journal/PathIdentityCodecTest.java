package dev.synapsehub.journal;

import dev.synapsehub.core.claim.Claim;
import dev.synapsehub.core.claim.ClaimStatus;
import dev.synapsehub.core.event.ClaimSnapshotEvent;
import dev.synapsehub.core.scope.PathIdentity;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim's {@code path_identity} (contract §7.7, A8) is journaled with the claim and kept in
 * snapshots (format 7), so object-id conflicts survive a restart; a foreign shape in an imported
 * row leaves the claim without one instead of making the row corrupt.
 */
class PathIdentityCodecTest {
    private final EventCodec codec = new EventCodec();

    private static Claim claim(PathIdentity identity) {
        return new Claim("T1", "p/a", "p/a", "", 1.0, 4_000_000_000.0, ClaimStatus.CLAIMED, "", "/w", List.of("a.txt"),
                1, 0, "", null, identity);
    }

    private static final PathIdentity ID = new PathIdentity("/w", "W", "ns", true,
            List.of(new PathIdentity.Row("a.txt", "/w/a.txt", "ino-7", "")));

    @Test
    void aClaimSnapshotCarriesItsIdentity() throws Exception {
        ClaimSnapshotEvent e = new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.CLAIM, claim(ID));
        String payload = codec.encode(e);
        assertThat(payload).contains("\"path_identity\":{\"version\":1,\"worktree_path\":\"/w\"")
                .contains("\"object_id\":\"ino-7\",\"object_scope\":\"\"");
        assertThat(codec.decode("claim", 1.0, payload)).contains(e);
        assertThat(codec.decode("claim", 1.0, payload.getBytes(java.nio.charset.StandardCharsets.UTF_8))).contains(e);
        ClaimSnapshotEvent plain = new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.CLAIM, claim(null));
        assertThat(codec.encode(plain)).doesNotContain("path_identity");
        assertThat(codec.decode("claim", 1.0, codec.encode(plain))).contains(plain);
    }

    @Test
    void aForeignShapeIsDroppedNotCorrupt() throws Exception {
        String payload = codec.encode(new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.CLAIM, claim(null)))
                .replace("\"quota_principal\"", "\"path_identity\":{\"version\":1,\"root\":\"dev:ino\"},\"quota_principal\"");
        Claim decoded = ((ClaimSnapshotEvent) codec.decode("claim", 1.0, payload).orElseThrow()).claim();
        assertThat(decoded.pathIdentity()).isNull();
        assertThat(decoded.taskId()).isEqualTo("T1");
    }

    @Test
    void aSnapshotKeepsTheIdentityAndTheConflictItDecides() throws Exception {
        CoordinationState state = new CoordinationState();
        state.apply(new ClaimSnapshotEvent(1.0, ClaimSnapshotEvent.Kind.CLAIM, claim(ID)));
        StateImage image = state.image();
        StateSnapshot back = SnapshotCodec.decode(SnapshotCodec.encode(new StateSnapshot(2.0, 0, 0, image)));
        assertThat(back.image()).isEqualTo(image);
        CoordinationState restored = new CoordinationState();
        restored.restore(back.image());
        Claim held = restored.claims().liveClaim("T1", 2.0).orElseThrow();
        assertThat(held.pathIdentity()).isEqualTo(ID);
        // a hard link of a.txt: another git path, the same object id
        PathIdentity alias = new PathIdentity("/w", "W", "ns", true,
                List.of(new PathIdentity.Row("b.txt", "/w/b.txt", "ino-7", "")));
        assertThat(new dev.synapsehub.core.scope.Scope("/w", List.of("b.txt"), alias).conflictsWith(held.scope()))
                .isTrue();
    }
}
