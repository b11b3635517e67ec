package dev.synapsehub.bench;

import dev.synapsehub.core.claim.ClaimRegistry;
import dev.synapsehub.core.state.CoordinationState;
import dev.synapsehub.core.state.StateImage;
import dev.synapsehub.journal.SnapshotCodec;
import dev.synapsehub.journal.SqliteJournal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;

/**
 * Times, in a fresh JVM, what the start's claims thread does: loading a snapshot's live claims
 * into an empty state (registry, scope index, expiry queue), then the rest of the image, each in
 * this thread's CPU (JIT and GC threads excluded, so less sensitive to other work on the machine
 * than a whole start). Built with the benchmarks (so it compiles against the code it times):
 *
 * <pre>java -Xmx4g -cp benchmarks/target/benchmarks.jar dev.synapsehub.bench.ClaimsRestoreProbe DB   # a journal no hub runs on</pre>
 */
public final class ClaimsRestoreProbe {
    private ClaimsRestoreProbe() {
    }

    public static void main(String[] args) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        byte[] body;
        try (SqliteJournal journal = SqliteJournal.open(Path.of(args[0]))) {
            body = journal.snapshots().read(journal.snapshots().list().get(0));
        }
        StateImage image = SnapshotCodec.decode(body).image();
        CoordinationState state = new CoordinationState();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long wall0 = System.nanoTime();
        StateImage.Claims claims = image.claims();
        ClaimRegistry.Restore restore = state.restoreClaimsInPieces(claims.live().size());
        for (StateImage.Held held : claims.live()) {
            restore.add(held.claim(), held.order());
        }
        restore.finish(claims.now(), claims.epochCounter(), claims.orderCounter(), claims.retained());
        long cpu1 = threads.getCurrentThreadCpuTime();
        long wall1 = System.nanoTime();
        state.restoreAllButClaims(image);
        long cpu2 = threads.getCurrentThreadCpuTime();
        long wall2 = System.nanoTime();
        System.out.printf("claims %d ms CPU (%d wall); rest %d ms CPU (%d wall)%n", (cpu1 - cpu0) / 1_000_000,
                (wall1 - wall0) / 1_000_000, (cpu2 - cpu1) / 1_000_000, (wall2 - wall1) / 1_000_000);
    }
}
