package dev.synapsehub.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InboxTest {
    private static ObjectNode chat(long seq) {
        ObjectNode n = Frames.MAPPER.createObjectNode();
        n.put("kind", "chat");
        n.put("directed", true);
        if (seq > 0) {
            n.put("seq", seq);
        }
        return n;
    }

    @Test
    void aReplayedChatIsNotQueuedTwiceNorAfterItWasRead() throws Exception {
        Inbox inbox = new Inbox(10, null);
        assertThat(inbox.offer(chat(5), 5)).isTrue();
        assertThat(inbox.offer(chat(5), 5)).isFalse();
        assertThat(inbox.take(10, 0).items()).hasSize(1);
        assertThat(inbox.cursor()).isEqualTo(5);
        assertThat(inbox.offer(chat(5), 5)).isFalse();
        inbox.registering(); // since_seq 5: the hub replays nothing at or below it
        assertThat(inbox.offer(chat(4), 4)).isFalse();
        assertThat(inbox.offer(chat(0), 0)).isTrue();
        assertThat(inbox.offer(chat(0), 0)).isTrue();
        assertThat(inbox.take(10, 0).items()).hasSize(2);
    }

    @Test
    void aCursorKeptForAnotherHubIdIsKeptUntilALiveChatShowsItsJournalIsAnother(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Files.writeString(file, "500\n"); // written before the hub was recorded
        try (Inbox first = new Inbox(10, file)) {
            assertThat(first.cursor()).isEqualTo(500);
            first.hubIdentified("hub-a"); // taken as this hub's
            assertThat(first.cursorResets()).isZero();
            assertThat(first.registering()).isEqualTo(500);
        }
        assertThat(Files.readString(file)).isEqualTo("500\nhub_id hub-a\n");

        try (Inbox again = new Inbox(10, file)) {
            again.hubIdentified("hub-a");
            assertThat(again.registering()).as("the same hub: kept").isEqualTo(500);
        }
        try (Inbox other = new Inbox(10, file)) {
            // another id: the same hub restarted without --hub-id, or the file reused against another hub
            other.hubIdentified("hub-b");
            assertThat(other.cursorResets()).as("a restart must not replay from 0 (the recent chats are past"
                    + " the first 1,000)").isZero();
            assertThat(other.registering()).isEqualTo(500);
            other.liveSeq(3); // another journal after all: its live chat 3 is below the cursor
            assertThat(other.cursorResets()).isEqualTo(1);
            assertThat(other.offer(chat(3), 3)).as("its chat 3 is not hidden behind the other hub's 500").isTrue();
        }
        assertThat(Files.readString(file)).isEqualTo("0\nhub_id hub-b\n");
    }

    @Test
    void aLiveChatAtOrBelowTheCursorShowsTheJournalIsAnotherAndResetsIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Files.writeString(file, "500\nhub_id hub-a\n");
        try (Inbox inbox = new Inbox(10, file)) {
            inbox.hubIdentified("hub-a"); // same id (a hub given --hub-id), its journal recreated
            assertThat(inbox.registering()).isEqualTo(500);
            inbox.replayPending(0); // the registration's who_snapshot: nothing pending
            inbox.liveSeq(501);
            assertThat(inbox.cursorResets()).as("above the cursor: nothing to say").isZero();
            inbox.liveSeq(7);
            assertThat(inbox.cursorResets()).isEqualTo(1);
            assertThat(inbox.offer(chat(7), 7)).isTrue();
            assertThat(inbox.cursor()).isZero();
            inbox.liveSeq(8);
            assertThat(inbox.cursorResets()).as("logged and counted once").isEqualTo(1);
            assertThat(inbox.take(10, 0).items()).hasSize(1);
            assertThat(inbox.cursor()).isEqualTo(7);
        }
        assertThat(Files.readString(file)).isEqualTo("7\nhub_id hub-a\n");
    }

    @Test
    void beyondCapacityTheOldestIsDroppedAndCountedOnce() throws Exception {
        Inbox inbox = new Inbox(2, null);
        inbox.offer(chat(1), 1);
        inbox.offer(chat(2), 2);
        inbox.offer(chat(3), 3);
        Inbox.Batch first = inbox.take(1, 0);
        assertThat(first.items().get(0).path("seq").asLong()).isEqualTo(2);
        assertThat(first.dropped()).isEqualTo(1);
        assertThat(first.remaining()).isEqualTo(1);
        Inbox.Batch second = inbox.take(5, 0);
        assertThat(second.dropped()).isZero();
        assertThat(second.items()).hasSize(1);
        // the dropped seq is below the cursor (3) now: the next registration's replay cannot bring it
        // back, lost for good, which 'dropped' reported
        assertThat(inbox.registering()).isEqualTo(3);
        assertThat(inbox.offer(chat(1), 1)).isFalse();
    }

    @Test
    void theCursorSurvivesInItsFileAndAGarbledOneIsTreatedAsAbsent(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        inbox.offer(chat(7), 7);
        inbox.take(10, 0);
        assertThat(Files.readString(file).strip()).isEqualTo("7");
        assertThat(new Inbox(10, file).cursor()).isEqualTo(7);
        for (String garbled : new String[] {"seven", "", "\n\n", "-4", "12x\nhub_id hub-a"}) {
            Files.writeString(file, garbled); // a crash mid-write, a hand edit: treated as absent, not as a cursor
            try (Inbox fresh = new Inbox(10, file)) {
                assertThat(fresh.cursor()).as("'%s'", garbled).isZero();
                assertThat(fresh.registering()).as("'%s': no since_seq", garbled).isZero();
                fresh.take(10, 0); // the next read writes it anew, even at 0
            }
            assertThat(Files.readString(file)).as("'%s'", garbled).isEqualTo("0\n");
        }
    }

    @Test
    void itemsWhoseCursorCouldNotBeSavedStayQueued(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("nodir");
        Inbox inbox = new Inbox(10, missing.resolve("cur.cursor"));
        inbox.offer(chat(3), 3);
        assertThatThrownBy(() -> inbox.take(10, 0)).isInstanceOf(java.io.IOException.class);
        assertThat(inbox.cursor()).isZero();
        assertThat(inbox.offer(chat(3), 3)).as("still queued, so a replay is a duplicate").isFalse();
        Files.createDirectory(missing);
        Inbox.Batch batch = inbox.take(10, 0);
        assertThat(batch.items()).hasSize(1);
        assertThat(batch.items().get(0).path("seq").asLong()).isEqualTo(3);
        assertThat(Files.readString(missing.resolve("cur.cursor")).strip()).isEqualTo("3");
        assertThat(batch.acks()).as("the failed take owed nothing").containsExactly(3L);
    }

    @Test
    void theCursorNeverPassesADirectedChatStillQueued(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        // a live chat queued before the mailbox replay of an older one
        inbox.offer(chat(14), 14);
        inbox.offer(chat(13), 13);
        Inbox.Batch batch = inbox.take(1, 0, true);
        assertThat(batch.items().get(0).path("seq").asLong()).isEqualTo(14);
        assertThat(batch.remaining()).isEqualTo(1);
        assertThat(inbox.cursor()).as("13 is still unread").isEqualTo(12);
        assertThat(Files.readString(file).strip()).isEqualTo("12");
        assertThat(new Inbox(10, file).offer(chat(13), 13)).as("a restarted face gets 13 again").isTrue();

        inbox.take(1, 0, true);
        assertThat(inbox.cursor()).as("read at last").isEqualTo(14);
        assertThat(Files.readString(file).strip()).isEqualTo("14");

        // a broadcast is never replayed: holding the cursor for it would only replay directed chats read since
        inbox.offer(chat(16), 16);
        ObjectNode all = chat(15);
        all.put("directed", false);
        inbox.offer(all, 15);
        assertThat(inbox.take(1, 0, true).items().get(0).path("seq").asLong()).isEqualTo(16);
        assertThat(inbox.cursor()).isEqualTo(16);
    }

    @Test
    void aDirectedChatDroppedForLackOfRoomNoLongerHoldsTheCursor() throws Exception {
        Inbox inbox = new Inbox(2, null);
        inbox.offer(chat(5), 5);
        inbox.offer(chat(7), 7);
        inbox.offer(chat(6), 6); // 5 dropped (counted)
        inbox.take(1, 0, true);
        assertThat(inbox.cursor()).as("6 is still queued").isEqualTo(5);
        Inbox.Batch rest = inbox.take(1, 0, true);
        assertThat(rest.dropped()).isZero();
        assertThat(inbox.cursor()).isEqualTo(7);
    }

    @Test
    void aChatReadWithoutAckHoldsTheCursorBelowIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        inbox.offer(chat(2), 2);
        inbox.take(10, 0, true);
        inbox.offer(chat(4), 4);
        assertThat(inbox.take(10, 0, false).items()).hasSize(1);
        // since_seq raises the hub's watermark like an ack: the next registration must not pass seq 4
        assertThat(inbox.cursor()).isEqualTo(3);
        assertThat(Files.readString(file).strip()).isEqualTo("3");
        assertThat(inbox.offer(chat(4), 4)).as("read in this session: a replay is a duplicate").isFalse();
        ObjectNode all = chat(5);
        all.put("directed", false);
        inbox.offer(all, 5);
        assertThat(inbox.take(10, 0, true).items()).hasSize(1);
        assertThat(inbox.cursor()).as("a broadcast is not acked, so it does not release the hold").isEqualTo(3);
        assertThat(new Inbox(10, file).offer(chat(4), 4)).as("a new session gets it again").isTrue();
    }

    @Test
    void aLaterAckReleasesTheHoldOfTheChatsBelowItOnly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        inbox.offer(chat(4), 4);
        inbox.offer(chat(6), 6);
        inbox.take(10, 0, false);
        assertThat(inbox.cursor()).isEqualTo(3);
        inbox.offer(chat(8), 8);
        inbox.take(10, 0, true);
        // the hub's ack is cumulative: acking 8 counts 4 and 6 read there, so the cursor follows it
        assertThat(inbox.cursor()).isEqualTo(8);
        assertThat(Files.readString(file).strip()).isEqualTo("8");
        assertThat(new Inbox(10, file).offer(chat(6), 6)).as("acked by 8: not replayed to a new session").isFalse();

        inbox.offer(chat(10), 10);
        inbox.offer(chat(12), 12);
        inbox.offer(chat(11), 11);
        inbox.take(2, 0, false);
        inbox.take(10, 0, true);
        assertThat(inbox.cursor()).as("11 releases 10 but not 12").isEqualTo(11);
        assertThat(new Inbox(10, file).offer(chat(12), 12)).as("a new session gets 12 again").isTrue();
    }

    @Test
    void theAckOfAChatIsOwedWhileALowerDirectedChatIsStillUnread() throws Exception {
        Inbox inbox = new Inbox(10, null);
        inbox.offer(chat(14), 14); // live
        inbox.offer(chat(13), 13); // replayed after it
        Inbox.Batch first = inbox.take(1, 0, true);
        // acking 14 would count 13 read on the hub (its watermark is cumulative) before the agent saw it
        assertThat(first.acks()).isEmpty();
        assertThat(inbox.acksOwed()).isEqualTo(1);
        Inbox.Batch second = inbox.take(1, 0, true);
        assertThat(second.acks()).as("in seq order, so each moves the watermark and settles its receipt").containsExactly(13L, 14L);
        assertThat(inbox.acksOwed()).isZero();
        assertThat(inbox.cursor()).isEqualTo(14);

        ObjectNode all = chat(16);
        all.put("directed", false);
        inbox.offer(chat(17), 17);
        inbox.offer(all, 16);
        inbox.offer(chat(15), 15);
        assertThat(inbox.take(10, 0, true).acks()).as("read together: all due, broadcasts are not acked")
                .containsExactly(15L, 17L);
    }

    @Test
    void aLowerChatReadWithoutAckKeepsTheOwedAckOfAHigherOneUntilALaterAck(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        inbox.offer(chat(14), 14);
        inbox.offer(chat(13), 13);
        inbox.take(1, 0, true);
        // 13 read without an ack: sending the owed ack of 14 now would count it read on the hub
        assertThat(inbox.take(1, 0, false).acks()).isEmpty();
        assertThat(inbox.heldKept()).isEqualTo(1);
        assertThat(inbox.cursor()).isEqualTo(12);
        assertThat(Files.readString(file).strip()).isEqualTo("12");
        assertThat(new Inbox(10, file).offer(chat(13), 13)).as("a new session gets 13 again").isTrue();

        // a later read with an ack releases the hold (the agent acknowledged after reading 13)
        inbox.offer(chat(15), 15);
        assertThat(inbox.take(1, 0, true).acks()).containsExactly(14L, 15L);
        assertThat(inbox.heldKept()).isZero();
        assertThat(inbox.cursor()).isEqualTo(15);
    }

    @Test
    void heldChatsAreBoundedAndThoseForgottenStillHoldTheCursorUntilAnAckPassesThem(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        int n = Inbox.MAX_HELD + 100;
        Inbox inbox = new Inbox(n + 1, file);
        for (long seq = 1; seq <= n; seq++) { // seqs 2, 4, ..., 2n, read without an ack
            inbox.offer(chat(2 * seq), 2 * seq);
        }
        // queued behind them (a replayed chat after live ones), read with an ack below
        long middleOfForgotten = 2L * (Inbox.MAX_HELD + 50) + 1;
        inbox.offer(chat(middleOfForgotten), middleOfForgotten);
        inbox.take(n, 0, false);
        assertThat(inbox.heldKept()).isEqualTo(Inbox.MAX_HELD);
        assertThat(inbox.cursor()).isEqualTo(1);

        // an ack between held seqs releases those below it; the kept ones run out before the
        // forgotten ones (the highest were forgotten), and those still hold the cursor
        inbox.take(1, 0, true);
        assertThat(inbox.heldKept()).isZero();
        assertThat(inbox.cursor()).as("forgotten seqs above the ack may be unacked").isEqualTo(middleOfForgotten);
        assertThat(Files.readString(file).strip()).isEqualTo(String.valueOf(middleOfForgotten));
        assertThat(new Inbox(10, file).offer(chat(2L * n), 2L * n)).as("a new session gets the last one again").isTrue();

        long pastAll = 2L * n + 1;
        inbox.offer(chat(pastAll), pastAll);
        inbox.take(1, 0, true);
        assertThat(inbox.cursor()).as("an ack past the highest forgotten releases them all").isEqualTo(pastAll);
    }

    private static ObjectNode replayed(long seq) {
        ObjectNode n = chat(seq);
        n.put("replayed", true);
        return n;
    }

    @Test
    void aReplayedChatArrivingAfterAHigherLiveOneWasReadIsStillTaken(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Inbox inbox = new Inbox(10, file);
        assertThat(inbox.registering()).isZero();
        inbox.replayPending(1); // the registration's who_snapshot: one chat pending (13)
        // the hub replays after a read of its own: live 14 comes, and is read, before replayed 13
        inbox.offer(chat(14), 14);
        assertThat(inbox.take(10, 0, true).acks()).as("the replay may still bring a lower one").isEmpty();
        assertThat(inbox.cursor()).isZero();
        assertThat(inbox.offer(replayed(13), 13)).as("above the registration's since_seq and never read").isTrue();
        assertThat(inbox.replayOpen()).isFalse();
        assertThat(inbox.cursor()).as("13 unread: the cursor stays below it").isEqualTo(12);
        Inbox.Batch late = inbox.take(10, 0, true);
        assertThat(late.items()).extracting(i -> i.path("seq").asLong()).containsExactly(13L);
        assertThat(late.acks()).as("each settles its own receipt, in seq order").containsExactly(13L, 14L);
        assertThat(inbox.offer(replayed(13), 13)).as("read in this session: a duplicate").isFalse();
        assertThat(inbox.offer(chat(14), 14)).isFalse();
        assertThat(inbox.cursor()).isEqualTo(14);

        // a new registration asks from the cursor: nothing at or below it can come again
        assertThat(inbox.registering()).isEqualTo(14);
        assertThat(inbox.offer(chat(9), 9)).isFalse();
        assertThat(new Inbox(10, file).offer(chat(14), 14)).as("a restarted face starts from the saved cursor")
                .isFalse();
    }

    private static ObjectNode broadcast(long seq) {
        ObjectNode n = chat(seq);
        n.put("directed", false);
        return n;
    }

    @Test
    void aReplayedChatBelowTheSavedCursorBringsTheFileDownBeforeTheNextRead(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Files.writeString(file, "5\n");
        Inbox inbox = new Inbox(10, file);
        assertThat(inbox.registering()).isEqualTo(5);
        inbox.replayPending(0); // the hub counted none pending: a replayed chat that comes anyway is still kept
        inbox.offer(broadcast(14), 14); // live, read before the replay arrives
        inbox.take(10, 0, true);
        assertThat(Files.readString(file).strip()).isEqualTo("14");
        inbox.offer(chat(10), 10); // the replay of a directed chat sent while away
        inbox.close(); // waits for the lowering the offer queued
        // a restart before the next read would otherwise ask from 14 and never get 10 back
        assertThat(Files.readString(file).strip()).isEqualTo("9");
        assertThat(new Inbox(10, file).registering()).isEqualTo(9);
    }

    @Test
    void theOfferingThreadNeverWritesTheCursorFileAndTheLatestLoweringWins(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        Files.writeString(file, "5\n");
        ExecutorService writer = CursorFile.newWriter(); // a daemon: a failed test leaves no thread behind that it held up
        CountDownLatch release = new CountDownLatch(1);
        writer.execute(() -> {
            try {
                release.await(); // the writer thread is held up: whatever the offers write, they write themselves
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Inbox inbox = new Inbox(10, file, writer);
        inbox.registering();
        inbox.replayPending(0); // the hub counted none pending: a replayed chat that comes anyway is still kept
        inbox.offer(broadcast(14), 14);
        inbox.take(10, 0, true);
        assertThat(Files.readString(file).strip()).as("a read writes on its own thread").isEqualTo("14");

        // offer runs on a connection's event loop, which must not wait for the disk
        assertThat(inbox.offer(chat(10), 10)).isTrue();
        assertThat(inbox.offer(chat(8), 8)).isTrue();
        assertThat(Files.readString(file).strip()).isEqualTo("14");
        assertThat(inbox.cursor()).isEqualTo(7);

        release.countDown();
        inbox.close();
        assertThat(writer.isTerminated()).as("closing the inbox stops its writer").isTrue();
        assertThat(Files.readString(file).strip()).as("the later, lower value").isEqualTo("7");
        assertThat(inbox.cursorLoweringsFailed()).isZero();
    }

    @Test
    void aLoweringThatCannotBeWrittenIsCountedAndRetriedAtTheNextRead(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cursor");
        ExecutorService writer = CursorFile.newWriter();
        Inbox inbox = new Inbox(10, file, writer);
        inbox.offer(broadcast(14), 14);
        inbox.take(10, 0, true);
        assertThat(Files.readString(file).strip()).isEqualTo("14");

        Path tmp = dir.resolve("cursor.tmp");
        Files.createDirectory(tmp); // the write goes through this name: a directory there makes it fail
        inbox.offer(broadcast(16), 16);
        inbox.offer(chat(10), 10);
        writer.submit(() -> { }).get(10, TimeUnit.SECONDS); // one thread: the lowering has run
        assertThat(inbox.cursorLoweringsFailed()).isEqualTo(1);
        assertThat(Files.readString(file).strip()).as("the file keeps its value").isEqualTo("14");

        Files.delete(tmp);
        assertThat(inbox.take(1, 0, true).items()).extracting(i -> i.path("seq").asLong()).containsExactly(16L);
        assertThat(Files.readString(file).strip()).as("10 still unread").isEqualTo("9");
        inbox.close();
    }

    @Test
    void aLiveChatReadBeforeTheReplayCameMovesNeitherTheCursorNorTheAcksPastTheRegistration(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("cursor");
        Files.writeString(file, "100\n");
        Inbox inbox = new Inbox(10, file);
        assertThat(inbox.registering()).isEqualTo(100);
        inbox.replayPending(1); // 120 is pending; the replay carrying it is still on its way
        inbox.offer(chat(150), 150); // live, after the snapshot
        Inbox.Batch live = inbox.take(10, 0, true);
        assertThat(live.items()).hasSize(1);
        assertThat(live.acks()).as("an ack of 150 would count 120 read").isEmpty();
        assertThat(Files.readString(file).strip()).isEqualTo("100");
        // the connection drops before 120 came: the next registration asks from 100 again
        assertThat(inbox.registering()).isEqualTo(100);
        inbox.replayPending(2); // 120, and 150 (not acked)
        inbox.offer(replayed(120), 120);
        assertThat(inbox.offer(replayed(150), 150)).as("read already").isFalse();
        assertThat(inbox.replayOpen()).isFalse();
        Inbox.Batch replay = inbox.take(10, 0, true);
        assertThat(replay.items()).extracting(i -> i.path("seq").asLong()).containsExactly(120L);
        assertThat(replay.acks()).containsExactly(120L, 150L);
        assertThat(inbox.cursor()).isEqualTo(150);
        assertThat(Files.readString(file).strip()).isEqualTo("150");
    }

    @Test
    void liveChatsBeforeTheSnapshotCountTowardsItsPendingCount() throws Exception {
        Inbox inbox = new Inbox(10, null);
        inbox.registering();
        inbox.offer(broadcast(4), 4); // broadcasts are never pending
        inbox.offer(chat(5), 5); // live, journaled before the who_request: the count includes it
        assertThat(inbox.replayOpen()).isTrue();
        inbox.replayPending(1);
        assertThat(inbox.replayOpen()).isFalse();
        assertThat(inbox.take(10, 0, true).acks()).containsExactly(5L);
        assertThat(inbox.cursor()).isEqualTo(5);
    }

    @Test
    void whileTheReplayIsOpenTheCursorFollowsTheHighestReplayedSeq() throws Exception {
        Inbox inbox = new Inbox(10, null);
        inbox.registering();
        inbox.replayPending(3); // a third one lies beyond the replay's scan window, say: never comes
        inbox.offer(replayed(10), 10);
        inbox.offer(replayed(11), 11);
        inbox.offer(chat(20), 20);
        Inbox.Batch batch = inbox.take(10, 0, true);
        assertThat(batch.acks()).as("the replay comes in seq order: all below 11 came").containsExactly(10L, 11L);
        assertThat(inbox.cursor()).isEqualTo(11);
        assertThat(inbox.registering()).as("the next registration starts where the replay got to").isEqualTo(11);
        inbox.replayPending(0);
        assertThat(inbox.cursor()).isEqualTo(20);
    }

    @Test
    void aPendingCountNotYetReachedHoldsTheAcksHoweverLongTheReplayTakes() throws Exception {
        Inbox inbox = new Inbox(10, null);
        assertThat(inbox.registering()).isEqualTo(0);
        inbox.replayPending(1); // 10 is pending; the hub deferred its replay (busy, or a journal read failing)
        inbox.offer(chat(20), 20);
        inbox.offer(chat(21), 21);
        assertThat(inbox.take(10, 0, true).acks()).as("the replay may still bring a lower one").isEmpty();
        // however long the hub retries (the hold reads no clock), no live ack may count 10 read before it came:
        // acks are cumulative, the hub would clear 10, and a drop would then lose it
        inbox.offer(chat(22), 22);
        assertThat(inbox.take(10, 0, true).acks()).as("still held").isEmpty();
        assertThat(inbox.acksOwed()).isEqualTo(3);
        assertThat(inbox.replayOpen()).isTrue();
        assertThat(inbox.cursor()).as("the next registration gets 10 replayed").isZero();
        assertThat(inbox.replayHoldsCut()).isZero();

        assertThat(inbox.offer(replayed(10), 10)).isTrue(); // the deferred replay, at last
        assertThat(inbox.replayOpen()).isFalse();
        Inbox.Batch batch = inbox.take(10, 0, true);
        assertThat(batch.items()).extracting(i -> i.path("seq").asLong()).containsExactly(10L);
        assertThat(batch.acks()).as("the owed acks go once it was read").containsExactly(10L, 20L, 21L, 22L);
        assertThat(inbox.cursor()).isEqualTo(22);
        inbox.close();
    }

    @Test
    void theOwedAcksOfAHeldReplayStayBounded() throws Exception {
        Inbox inbox = new Inbox(100, null);
        inbox.registering();
        inbox.replayPending(1); // never reached
        long seq = 100;
        java.util.List<Long> acked = new java.util.ArrayList<>();
        for (int round = 0; round * 100 <= Inbox.MAX_OWED; round++) {
            for (int i = 0; i < 100; i++) {
                seq++;
                inbox.offer(chat(seq), seq);
            }
            acked.addAll(inbox.take(100, 0, true).acks());
            assertThat(inbox.acksOwed()).isLessThanOrEqualTo(Inbox.MAX_OWED);
        }
        assertThat(inbox.replayOpen()).isFalse();
        assertThat(acked).as("every chat read is acked once the hold ended").hasSize((int) (seq - 100));
        assertThat(inbox.acksOwed()).isZero();
        assertThat(inbox.cursor()).isEqualTo(seq);
        inbox.close();
    }

    @Test
    void takeWaitsForTheFirstItem() throws Exception {
        Inbox inbox = new Inbox(10, null);
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            inbox.offer(chat(9), 9);
        });
        t.start();
        assertThat(inbox.take(10, 10_000).items()).hasSize(1);
        t.join();
    }
}
