package dev.synapsehub.cli;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * The local addresses the load tool binds its sockets to, e.g. {@code 127.0.0.2-127.0.0.9}: one
 * source address has about 28,000 ephemeral ports towards one hub address and port, so 100,000
 * connections need at least four. Parsed from a comma-separated list of IPv4 addresses and
 * inclusive ranges; the i-th connection gets address i modulo their number.
 */
record SourceAddresses(List<InetAddress> addresses) {
    /** More addresses than any run could use: a typo like 127.0.0.1-127.255.0.0 is refused, not expanded. */
    static final int MAX_ADDRESSES = 4096;

    SourceAddresses {
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("no source address");
        }
        addresses = List.copyOf(addresses);
    }

    /** Parses {@code spec}; throws {@link IllegalArgumentException} with the reason for anything else. */
    static SourceAddresses parse(String spec) {
        List<InetAddress> out = new ArrayList<>();
        for (String item : spec.split(",", -1)) {
            String part = item.strip();
            if (part.isEmpty()) {
                throw new IllegalArgumentException("empty source address in '" + spec + "'");
            }
            int dash = part.indexOf('-');
            long from = ipv4(dash < 0 ? part : part.substring(0, dash));
            long to = dash < 0 ? from : ipv4(part.substring(dash + 1));
            if (to < from) {
                throw new IllegalArgumentException("source address range '" + part + "' ends before it starts");
            }
            if (out.size() + (to - from + 1) > MAX_ADDRESSES) {
                throw new IllegalArgumentException("more than " + MAX_ADDRESSES + " source addresses in '" + spec + "'");
            }
            for (long a = from; a <= to; a++) {
                out.add(address(a));
            }
        }
        return new SourceAddresses(out);
    }

    /** The address for the {@code i}-th connection (i ≥ 0). */
    InetAddress forConnection(int i) {
        return addresses.get(i % addresses.size());
    }

    private static long ipv4(String text) {
        String t = text.strip();
        String[] octets = t.split("\\.", -1);
        if (octets.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: '" + t + "'");
        }
        long value = 0;
        for (String o : octets) {
            if (o.isEmpty() || o.length() > 3 || !o.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException("not an IPv4 address: '" + t + "'");
            }
            int n = Integer.parseInt(o);
            if (n > 255) {
                throw new IllegalArgumentException("not an IPv4 address: '" + t + "'");
            }
            value = value << 8 | n;
        }
        return value;
    }

    private static InetAddress address(long value) {
        byte[] b = {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
        try {
            return Inet4Address.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("four bytes are always an IPv4 address", e);
        }
    }
}
