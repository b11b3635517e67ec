package dev.synapsehub.cli;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code bench --source-addresses}: ranges and lists expand in order, nonsense is refused with its reason. */
class SourceAddressesTest {
    @Test
    void aRangeExpandsInclusivelyAndConnectionsTakeTheAddressesInTurn() throws Exception {
        SourceAddresses s = SourceAddresses.parse("127.0.0.2-127.0.0.9");
        assertThat(s.addresses()).hasSize(8);
        assertThat(s.forConnection(0)).isEqualTo(InetAddress.getByName("127.0.0.2"));
        assertThat(s.forConnection(7)).isEqualTo(InetAddress.getByName("127.0.0.9"));
        assertThat(s.forConnection(8)).isEqualTo(InetAddress.getByName("127.0.0.2"));
        assertThat(s.forConnection(100_001)).isEqualTo(InetAddress.getByName("127.0.0.3"));
    }

    @Test
    void listsAndRangesCombineAndARangeMayCrossAnOctet() throws Exception {
        SourceAddresses s = SourceAddresses.parse("127.0.0.1, 127.0.0.255-127.0.1.1");
        assertThat(s.addresses()).containsExactly(InetAddress.getByName("127.0.0.1"),
                InetAddress.getByName("127.0.0.255"), InetAddress.getByName("127.0.1.0"),
                InetAddress.getByName("127.0.1.1"));
    }

    @Test
    void nonsenseIsRefusedWithTheReason() {
        assertThatThrownBy(() -> SourceAddresses.parse("127.0.0.9-127.0.0.2")).hasMessageContaining("ends before");
        assertThatThrownBy(() -> SourceAddresses.parse("127.0.0")).hasMessageContaining("not an IPv4 address");
        assertThatThrownBy(() -> SourceAddresses.parse("127.0.0.256")).hasMessageContaining("not an IPv4 address");
        assertThatThrownBy(() -> SourceAddresses.parse("localhost")).hasMessageContaining("not an IPv4 address");
        assertThatThrownBy(() -> SourceAddresses.parse("127.0.0.1,,127.0.0.2")).hasMessageContaining("empty");
        assertThatThrownBy(() -> SourceAddresses.parse("127.0.0.0-127.255.255.255")).hasMessageContaining("more than");
    }
}
