package dev.synapsehub.net.delivery;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The subscriber index finds exactly the declarations a change matches, and forgets replaced ones. */
class DeliveryIndexTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final DeliveryIndex<String> index = new DeliveryIndex<>();
    private final LiveClaims live = new LiveClaims();

    @Test
    void worktreesTaskPrefixesAndPathPrefixesEachSelectTheirSubscribersOnly() throws Exception {
        index.put("wt", scoped("{\"mode\":\"scoped\",\"worktrees\":[\"repo-a\",\"repo-b\"]}"));
        index.put("parser", scoped("{\"mode\":\"scoped\",\"task_prefixes\":[\"PARSER-\"]}"));
        index.put("p", scoped("{\"mode\":\"scoped\",\"task_prefixes\":[\"P\"]}"));
        index.put("exact", scoped("{\"mode\":\"scoped\",\"task_prefixes\":[\"PARSER-12\"]}"));
        index.put("src", scoped("{\"mode\":\"scoped\",\"path_prefixes\":[\"src/parser\"]}"));
        index.put("deep", scoped("{\"mode\":\"scoped\",\"path_prefixes\":[\"src/parser/lexer/Token.java\"]}"));
        index.put("nothing", scoped("\"scoped\""));

        assertThat(match("T-1", "repo-b", "docs")).containsExactly("wt");
        assertThat(match("PARSER-12", "x", "docs")).containsExactlyInAnyOrder("parser", "p", "exact");
        assertThat(match("PARSER-1", "x", "docs")).containsExactlyInAnyOrder("parser", "p");
        assertThat(match("PARSE", "x", "docs")).containsExactly("p");
        assertThat(match("T-1", "x", "src/parser")).as("a prefix at the path and one below it")
                .containsExactlyInAnyOrder("src", "deep");
        assertThat(match("T-1", "x", "src/parser/Main.java")).containsExactly("src");
        assertThat(match("T-1", "x", "src")).as("a change of a directory touches prefixes inside it")
                .containsExactlyInAnyOrder("src", "deep");
        assertThat(match("T-1", "x", "src/parserx")).as("segments, not characters").isEmpty();
        assertThat(match("T-1", "x", "lib")).isEmpty();
        assertThat(match("T-1", "x")).as("a whole-worktree change touches every path prefix")
                .containsExactlyInAnyOrder("src", "deep");
        assertThat(index.size()).isEqualTo(7);
    }

    @Test
    void aNewDeclarationReplacesTheOldAndBroadcastLeavesTheIndex() throws Exception {
        index.put("a", scoped("{\"mode\":\"scoped\",\"worktrees\":[\"w\"],\"task_prefixes\":[\"A-\"],"
                + "\"path_prefixes\":[\"src\"]}"));
        index.put("b", scoped("{\"mode\":\"scoped\",\"task_prefixes\":[\"A-\"]}"));
        index.put("a", scoped("{\"mode\":\"scoped\",\"task_prefixes\":[\"B-\"]}"));
        assertThat(match("A-1", "w", "src/x")).containsExactly("b");
        assertThat(match("B-1", "v", "lib")).containsExactly("a");

        index.put("a", Delivery.EVERYTHING);
        assertThat(index.get("a")).isNull();
        assertThat(match("B-1", "v", "lib")).isEmpty();
        index.remove("b");
        assertThat(match("A-1", "w", "src/x")).isEmpty();
        assertThat(index.size()).isZero();
        index.remove("never-there");
    }

    @Test
    void liveClaimsTouchAcrossWorktreesByPathAndWithinOneByWholeWorktreeAndLapseWithTheirLease() {
        live.put(new LiveClaims.Held("H-1", "holder", "wt-b", List.of("src/core"), 100));
        live.put(new LiveClaims.Held("W-1", "whole", "wt-w", List.of(), 100));
        live.put(new LiveClaims.Held("S-1", "short", "wt-s", List.of("src/core/Main.java"), 10));

        assertThat(touching("wt-c", 5, "src/core/Main.java")).containsExactlyInAnyOrder("holder", "short");
        assertThat(touching("wt-c", 50, "src/core/Main.java")).as("a lapsed lease touches nothing")
                .containsExactly("holder");
        assertThat(touching("wt-w", 5, "docs")).as("a whole-worktree claim touches its worktree").containsExactly("whole");
        assertThat(touching("wt-x", 5, "docs")).isEmpty();
        assertThat(touching("wt-b", 5)).as("a whole-worktree change touches its worktree's claims")
                .containsExactly("holder");

        live.put(new LiveClaims.Held("H-1", "taker", "wt-b", List.of("lib"), 100)); // a handoff that moved it
        assertThat(touching("wt-c", 5, "src/core")).containsExactly("short");
        assertThat(live.of("holder", 5)).isEmpty();
        assertThat(live.of("taker", 5)).extracting(LiveClaims.Held::taskId).containsExactly("H-1");
        live.remove("H-1");
        live.expire(50);
        assertThat(live.size()).as("released and lapsed claims are gone").isEqualTo(1);
    }

    @Test
    void declarationsAreReadStrictly() throws Exception {
        assertThat(Delivery.parse(JSON.readTree("\"broadcast\"")).delivery()).isEqualTo(Delivery.EVERYTHING);
        Delivery d = Delivery.parse(JSON.readTree("{\"mode\":\"scoped\",\"path_prefixes\":[\" ./src//parser/ \","
                + "\"src/parser\"],\"task_prefixes\":[\"A-\"]}")).delivery();
        assertThat(d.pathPrefixes()).as("normalised, duplicates dropped").containsExactly("src/parser");
        assertThat(d.taskPrefixes()).containsExactly("A-");
        for (String[] bad : new String[][] {{"\"loud\"", "delivery"}, {"{}", "delivery.mode"},
                {"{\"mode\":\"Scoped\"}", "delivery.mode"}, {"{\"mode\":\"scoped\",\"extra\":1}", "delivery.extra"},
                {"{\"mode\":\"broadcast\",\"task_prefixes\":[\"A\"]}", "delivery.task_prefixes"},
                {"{\"mode\":\"scoped\",\"worktrees\":[1]}", "delivery.worktrees"},
                {"{\"mode\":\"scoped\",\"path_prefixes\":[\"/abs\"]}", "delivery.path_prefixes"},
                {"{\"mode\":\"scoped\",\"task_prefixes\":[\"a\\u0000b\"]}", "delivery.task_prefixes"},
                {"[]", "delivery"}}) {
            Delivery.Parsed p = Delivery.parse(JSON.readTree(bad[0]));
            assertThat(p.ok()).as(bad[0]).isFalse();
            assertThat(p.field()).as(bad[0]).isEqualTo(bad[1]);
        }
        StringBuilder many = new StringBuilder("{\"mode\":\"scoped\",\"worktrees\":[");
        for (int i = 0; i <= Delivery.MAX_ENTRIES; i++) {
            many.append(i == 0 ? "" : ",").append("\"w").append(i).append('"');
        }
        assertThat(Delivery.parse(JSON.readTree(many + "]}")).ok()).as("too many entries").isFalse();
    }

    private Set<String> match(String task, String worktree, String... paths) {
        Set<String> out = new TreeSet<>();
        index.match(task, worktree, List.of(paths), out);
        return out;
    }

    private Set<String> touching(String worktree, double now, String... paths) {
        Set<String> out = new TreeSet<>();
        live.ownersTouching(worktree, List.of(paths), now, out);
        return out;
    }

    private static Delivery scoped(String json) throws Exception {
        Delivery.Parsed p = Delivery.parse(JSON.readTree(json));
        assertThat(p.ok()).as(json).isTrue();
        return p.delivery();
    }
}
