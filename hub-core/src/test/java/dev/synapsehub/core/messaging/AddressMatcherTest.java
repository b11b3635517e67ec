package dev.synapsehub.core.messaging;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class AddressMatcherTest {
    @Test
    void shellPatterns() {
        assertThat(ShellPattern.matches("*", "")).isTrue();
        assertThat(ShellPattern.matches("proj/*", "proj/a/b")).isTrue();
        assertThat(ShellPattern.matches("*b", "a/b")).isTrue();
        assertThat(ShellPattern.matches("p?oj", "proj")).isTrue();
        assertThat(ShellPattern.matches("p?oj", "poj")).isFalse();
        assertThat(ShellPattern.matches("[ab]x", "bx")).isTrue();
        assertThat(ShellPattern.matches("[!ab]x", "bx")).isFalse();
        assertThat(ShellPattern.matches("[!ab]x", "cx")).isTrue();
        assertThat(ShellPattern.matches("[a-c]", "b")).isTrue();
        assertThat(ShellPattern.matches("[a-c]", "d")).isFalse();
        assertThat(ShellPattern.matches("[]]", "]")).isTrue();
        assertThat(ShellPattern.matches("[!]]", "a")).isTrue();
        assertThat(ShellPattern.matches("[a-]", "-")).isTrue();
        assertThat(ShellPattern.matches("[ab", "[ab")).isTrue();
        assertThat(ShellPattern.matches("Bob", "bob")).isFalse();
        assertThat(ShellPattern.matches("a*b*c", "axxbyyc")).isTrue();
        assertThat(ShellPattern.matches("a*b*c", "axxbyy")).isFalse();
        assertThat(ShellPattern.matches("", "")).isTrue();
        assertThat(ShellPattern.matches("", "a")).isFalse();
        assertThat(ShellPattern.matches("é?", "éü")).isTrue();
    }

    @Test
    void pathologicalPatternIsFast() {
        String text = "a".repeat(5000);
        long start = System.nanoTime();
        assertThat(ShellPattern.matches("*a*a*a*a*a*a*a*a*b", text)).isFalse();
        assertThat(System.nanoTime() - start).isLessThan(2_000_000_000L);
    }

    @Test
    void directedBroadcastAndParts() {
        assertThat(AddressMatcher.isBroadcast(null)).isTrue();
        assertThat(AddressMatcher.isBroadcast("  ")).isTrue();
        assertThat(AddressMatcher.isBroadcast(" all ")).isTrue();
        assertThat(AddressMatcher.isDirected("all")).isFalse();
        assertThat(AddressMatcher.isDirected("BOB")).isTrue();
        assertThat(AddressMatcher.isDirected("BOB,CAROL")).isTrue();
        assertThat(AddressMatcher.isDirected("proj")).isTrue();
        assertThat(AddressMatcher.isDirected("proj/*")).isFalse();
        assertThat(AddressMatcher.isDirected(" , ")).isFalse();
        assertThat(AddressMatcher.parts(" a, ,b ,")).containsExactly("a", "b");
    }

    @Test
    void targetsAreTrimmedAsPythonTrimsThem() {
        // U+00A0, U+2007, U+202F and U+0085 are whitespace to Python's str.strip, not to Java's
        for (char space : new char[] {'\u00a0', '\u2007', '\u202f', '\u0085'}) {
            assertThat(AddressMatcher.parts(space + "p/b" + space + "," + space + "p/c")).containsExactly("p/b", "p/c");
            assertThat(AddressMatcher.isBroadcast(String.valueOf(space))).as("U+%04X alone", (int) space).isTrue();
            assertThat(AddressMatcher.isBroadcast("all" + space)).isTrue();
            assertThat(AddressMatcher.isDirected(space + " , " + space)).isFalse();
        }
    }

    @Test
    void addressesByNameProjectAndRole() {
        List<String> none = List.of();
        assertThat(AddressMatcher.addresses("BOB", "BOB", none)).isTrue();
        assertThat(AddressMatcher.addresses("bob", "BOB", none)).isFalse();
        assertThat(AddressMatcher.addresses("ALICE, BOB", "BOB", none)).isTrue();
        assertThat(AddressMatcher.addresses("proj", "proj/claude", none)).isTrue();
        assertThat(AddressMatcher.addresses("proj/*", "proj/claude", none)).isTrue();
        assertThat(AddressMatcher.addresses("proj/*", "other/claude", none)).isFalse();
        assertThat(AddressMatcher.addresses("proj/coordinator", "proj/claude", List.of("proj/coordinator"))).isTrue();
        assertThat(AddressMatcher.addresses("proj/coord*", "x", List.of("proj/coordinator"))).isTrue();
        assertThat(AddressMatcher.addresses("all", "anyone", none)).isTrue();
        assertThat(AddressMatcher.addresses("solo", "solo", none)).isTrue();
        assertThat(AddressMatcher.addresses("", "solo", none)).isTrue();
        assertThat(AddressMatcher.projectPrefix("solo")).isEmpty();
    }

    @Test
    void sidecarsFoldToTheirOwner() {
        assertThat(AddressMatcher.logicalName("BOB-rx")).isEqualTo("BOB");
        assertThat(AddressMatcher.logicalName("BOB-pane-rx")).isEqualTo("BOB");
        assertThat(AddressMatcher.logicalName("-rx")).isEqualTo("-rx");
        RecipientSet rs = RecipientSet.resolve("BOB,proj/lead", "ALICE", List.of(
                OnlineAgent.live("ALICE"),
                new OnlineAgent("BOB-rx", List.of(), true, "wake"),
                new OnlineAgent("BOB", List.of(), false, null),
                new OnlineAgent("proj/x", List.of("proj/lead"), false, "passive"),
                OnlineAgent.live("ALICE-rx"),
                OnlineAgent.live("CAROL")));
        assertThat(rs.matched()).containsExactly("BOB", "proj/x");
        assertThat(rs.live()).containsExactly("BOB");
        assertThat(rs.stale()).containsExactly("proj/x");
        assertThat(rs.wakeCapabilities()).containsEntry("BOB", "wake").containsEntry("proj/x", "passive");
        assertThat(RecipientSet.resolve(null, "ALICE", List.of(OnlineAgent.live("ALICE"), OnlineAgent.live("B")))
                .matched()).containsExactly("B");
    }

    @Test
    void clientTimestampCoercion() {
        assertThat(ClientFields.clientTimestamp(null)).isNull();
        assertThat(ClientFields.clientTimestamp(0)).isNull();
        assertThat(ClientFields.clientTimestamp(0.0)).isNull();
        assertThat(ClientFields.clientTimestamp(Double.NaN)).isNull();
        assertThat(ClientFields.clientTimestamp(Double.POSITIVE_INFINITY)).isNull();
        assertThat(ClientFields.clientTimestamp(Double.NEGATIVE_INFINITY)).isNull();
        assertThat(ClientFields.clientTimestamp(java.math.BigInteger.TEN.pow(400))).isNull();
        assertThat(ClientFields.clientTimestamp(42)).isEqualTo(42.0);
        assertThat(ClientFields.clientTimestamp(0.5)).isEqualTo(0.5);
        assertThat(ClientFields.clientTimestamp(1_700_000_000L)).isEqualTo(1.7e9);
        assertThat(ClientFields.clientTimestamp(new java.math.BigDecimal("1700.25"))).isEqualTo(1700.25);
    }

    @Test
    void clientMsgIdNormalisation() {
        assertThat(ClientFields.clientMsgId("  retry-7  ")).isEqualTo("retry-7");
        assertThat(ClientFields.clientMsgId("")).isNull();
        assertThat(ClientFields.clientMsgId("a\nb")).isNull();
        assertThat(ClientFields.clientMsgId("a\u007fb")).isNull();
        assertThat(ClientFields.clientMsgId("é".repeat(129))).isNull();
        assertThat(ClientFields.clientMsgId("é".repeat(128))).isEqualTo("é".repeat(128));
        assertThat(ClientFields.clientMsgId(null)).isNull();
    }
}
