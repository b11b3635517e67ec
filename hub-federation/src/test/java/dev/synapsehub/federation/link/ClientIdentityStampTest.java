package dev.synapsehub.federation.link;

import dev.synapsehub.federation.testing.Pki;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Changes to the client identity files that keep size, modification time and file key are
 * noticed too: a key handed to another owner ({@code chown}), and a rewrite in place whose
 * modification time was set back (only the inode change time tells).
 */
class ClientIdentityStampTest {
    @TempDir
    Path dir;
    Path key;
    final List<String> log = new CopyOnWriteArrayList<>();
    ClientIdentity identity;

    @BeforeEach
    void identity() throws Exception {
        Pki.HubCerts a = new Pki(dir).hub("hub-a");
        key = a.clientFiles().key();
        // checked only by checkNow() here (the watcher's hourly check never comes during the test)
        identity = ClientIdentity.watching(a.clientFiles().cert(), key, log::add, 3_600_000, ClientIdentity::stampOf);
    }

    @org.junit.jupiter.api.AfterEach
    void close() {
        identity.close();
    }

    @Test
    void aKeyGivenToAnotherOwnerIsCheckedAgainAndRefused() throws Exception {
        identity.current(); // validates as written
        FileTime modified = Files.getLastModifiedTime(key);
        UserPrincipal other;
        try {
            other = key.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(key, other); // needs root (the test runs as root here); else skipped below
        } catch (java.io.IOException notPermitted) {
            other = null;
        }
        assumeTrue(other != null && other.equals(Files.getOwner(key, LinkOption.NOFOLLOW_LINKS)),
                "changing a file's owner needs root");
        Files.setLastModifiedTime(key, modified);

        identity.checkNow(); // the watcher's check
        assertThatThrownBy(identity::current).as("checked again: refused, the key is not this hub's user's")
                .hasMessageContaining("is owned by uid");
        assertThat(log).anyMatch(l -> l.contains("no longer validates"));
    }

    @Test
    void aRewriteInPlaceWithItsModificationTimeSetBackIsCheckedAgain() throws Exception {
        Object before = identity.current();
        FileTime modified = Files.getLastModifiedTime(key);
        byte[] bytes = Files.readAllBytes(key);
        Thread.sleep(20); // the change time has at least millisecond resolution here
        Files.write(key, bytes, StandardOpenOption.TRUNCATE_EXISTING); // same inode, same size
        Files.setLastModifiedTime(key, modified);
        assumeTrue(Files.getAttribute(key, "unix:ctime", LinkOption.NOFOLLOW_LINKS) != null, "no unix:ctime");

        identity.checkNow(); // the watcher's check
        assertThat(identity.current()).as("a new stamp: links reconnect").isNotEqualTo(before);
        assertThat(log).anyMatch(l -> l.contains("client identity changed"));
    }
}
