package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every path to one journal file shares its writer lock; a file with a second name is refused. */
class WriterLockLinksTest {
    @TempDir
    Path dir;

    @Test
    void aSymbolicLinkToAHeldJournalIsRefusedAndProbedAsHeld() throws Exception {
        Path journal = dir.resolve("hub.db");
        Files.writeString(journal, "");
        Path link = Files.createSymbolicLink(dir.resolve("link.db"), Path.of("hub.db"));
        assertThat(WriterLock.lockFile(link)).isEqualTo(WriterLock.lockFile(journal));
        WriterLock held = WriterLock.acquire(journal);
        try {
            assertThatThrownBy(() -> WriterLock.acquire(link)).isInstanceOf(JournalRefusedException.class)
                    .hasMessageContaining("is open in another hub");
            assertThat(WriterLock.probe(link)).isEqualTo(WriterLock.Holder.HUB);
        } finally {
            held.release();
        }
        WriterLock.acquire(link).release();
    }

    @Test
    void aJournalNotYetMadeInALinkedDirectoryIsLockedBesideItsRealName() throws Exception {
        Path real = Files.createDirectory(dir.resolve("real"));
        Path linked = Files.createSymbolicLink(dir.resolve("linked"), real);
        assertThat(WriterLock.lockFile(linked.resolve("new.db"))).isEqualTo(real.toRealPath().resolve("new.db-lock"));
        WriterLock held = WriterLock.acquire(real.resolve("new.db"));
        try {
            assertThatThrownBy(() -> WriterLock.acquire(linked.resolve("new.db")))
                    .isInstanceOf(JournalRefusedException.class).hasMessageContaining("is open in another hub");
        } finally {
            held.release();
        }
    }

    @Test
    void aJournalWithASecondNameIsRefusedToWritersNotToReadOnlyTools() throws Exception {
        Path journal = dir.resolve("hub.db");
        Files.writeString(journal, "");
        Path second = Files.createLink(dir.resolve("hard.db"), journal);
        for (Path name : new Path[] {journal, second}) {
            assertThatThrownBy(() -> WriterLock.acquire(name)).isInstanceOf(JournalRefusedException.class)
                    .hasMessageContaining("has 2 names (hard links)");
            // no hub can hold such a file, so a tool reading it (a hard-linked backup tree) may
            assertThat(WriterLock.probe(name)).isEqualTo(WriterLock.Holder.NONE);
        }
        Files.delete(second);
        WriterLock.acquire(journal).release();
    }

    @Test
    void aLinkToAJournalNotYetMadeIsLockedBesideTheFileItWillMake() throws Exception {
        Path target = dir.resolve("later.db");
        Path link = Files.createSymbolicLink(dir.resolve("link.db"), Path.of("later.db"));
        assertThat(WriterLock.lockFile(link)).isEqualTo(dir.toRealPath().resolve("later.db-lock"));
        WriterLock held = WriterLock.acquire(link);
        try {
            assertThatThrownBy(() -> WriterLock.acquire(target)).isInstanceOf(JournalRefusedException.class)
                    .hasMessageContaining("is open in another hub");
        } finally {
            held.release();
        }
    }
}
