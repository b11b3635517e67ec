package dev.synapsehub.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.synapsehub.net.auth.MessageAuthenticator;
import dev.synapsehub.net.wire.CanonicalJson;
import dev.synapsehub.net.wire.PythonFloatFormat;
import dev.synapsehub.net.wire.WireJson;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Vectors computed independently with CPython 3.11 (offline, pasted here):
 * <pre>
 * for f in floats: print(repr(f), f.hex())
 * canon = lambda o: json.dumps(o, sort_keys=True, separators=(",",":"), ensure_ascii=False)
 * hmac.new(b"s3cret", canon(frame).encode(), hashlib.sha256).hexdigest()
 * hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",",":")).encode()).hexdigest()
 * </pre>
 */
class WireFormatTest {
    private final WireJson json = new WireJson(64);

    @Test
    void floatsPrintLikePythonRepr() {
        assertThat(PythonFloatFormat.format(1.0)).isEqualTo("1.0");
        assertThat(PythonFloatFormat.format(0x1.a36e2eb1c432dp-14)).isEqualTo("0.0001");
        assertThat(PythonFloatFormat.format(0x1.1c37937e08000p+53)).isEqualTo("1e+16");
        assertThat(PythonFloatFormat.format(0x1.4f8b588e368f1p-17)).isEqualTo("1e-05");
        assertThat(PythonFloatFormat.format(0x1.0c6f7a0b5ed8dp-22)).isEqualTo("2.5e-07");
        assertThat(PythonFloatFormat.format(0x1.1eb2d66005835p+997)).isEqualTo("1.5e+300");
        assertThat(PythonFloatFormat.format(0x1.81cd6c8b43958p+13)).isEqualTo("12345.678");
        assertThat(PythonFloatFormat.format(0x1.c6bf526340000p+49)).isEqualTo("1000000000000000.0");
        assertThat(PythonFloatFormat.format(-0.0)).isEqualTo("-0.0");
        assertThat(PythonFloatFormat.format(0x1.999999999999ap-4)).isEqualTo("0.1");
        assertThat(PythonFloatFormat.format(0x1.ac31b28b92e0bp+30)).isEqualTo("1795976354.8934352");
        assertThat(PythonFloatFormat.format(0x1.b69b4ba630f35p+56)).isEqualTo("1.2345678901234568e+17");
        assertThat(PythonFloatFormat.format(0x0.0000000000001p-1022)).isEqualTo("5e-324");
        assertThat(PythonFloatFormat.format(0x1.fffffffffffffp+1023)).isEqualTo("1.7976931348623157e+308");
        assertThat(PythonFloatFormat.format(0x1.3333333333334p-2)).isEqualTo("0.30000000000000004");
        assertThat(PythonFloatFormat.format(100.0)).isEqualTo("100.0");
        assertThat(PythonFloatFormat.format(0x1.593f248725119p-32)).isEqualTo("3.14e-10");
        assertThat(PythonFloatFormat.format(-2.5)).isEqualTo("-2.5");
    }

    @Test
    void hmacOverCanonicalJsonMatchesPythonVector() {
        String text = "{\"sender\":\"p/alpha\",\"target\":\"System\",\"type\":\"CLAIM\",\"payload\":\"T-1\","
                + "\"timestamp\":1795976354.5,\"task_id\":\"T-1\",\"ttl_seconds\":60.0,"
                + "\"paths\":[\"src/\\u00e4.py\",\"a\\u007f\\n\"],"
                + "\"extra\":{\"z\":1,\"\\ue000\":2,\"\\ud83d\\ude00\":3},"
                + "\"auth\":{\"alg\":\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n-123\",\"sequence\":1,"
                + "\"timestamp\":1795976354.25,\"value\":\"ignored\"},\"token\":\"never-signed\"}";
        ObjectNode frame = (ObjectNode) json.parse(text);
        String canonical = MessageAuthenticator.canonicalBytes(frame);
        // code-point order puts U+E000 before U+1F600 (UTF-16 order would not)
        assertThat(canonical).contains("\"extra\":{\"z\":1,\"\ue000\":2,\"\ud83d\ude00\":3}");
        assertThat(canonical).startsWith("{\"auth\":{\"alg\":\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n-123\","
                + "\"sequence\":1,\"timestamp\":1795976354.25},");
        assertThat(MessageAuthenticator.mac("s3cret", canonical))
                .isEqualTo("a348c4344c5bce1994c9de4d81de3bc39ffea8b845a72ef7a535fe47d36a13e6");
    }

    @Test
    void aNegativeZeroFloatIsSignedAsPythonReadsIt() {
        // python: o = json.loads(text); del o["auth"]["value"]; hmac over canon(o) as above
        String text = "{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"T-0.5\",\"z\":-0.0,"
                + "\"q\":[1,-0e0,{\"r\":-0.000E+3}],\"d\":-0.0,\"d\":0.0,\"i\":-0,\"u\":-1e-400,"
                + "\"auth\":{\"alg\":\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n-1\",\"sequence\":1,"
                + "\"timestamp\":1795976354.25,\"value\":\"x\"}}";
        ObjectNode frame = (ObjectNode) json.parse(text);
        String canonical = MessageAuthenticator.canonicalBytes(frame);
        assertThat(canonical).isEqualTo("{\"auth\":{\"alg\":\"hmac-sha256\",\"kid\":\"k1\",\"nonce\":\"n-1\","
                + "\"sequence\":1,\"timestamp\":1795976354.25},\"d\":0.0,\"i\":0,\"q\":[1,-0.0,{\"r\":-0.0}],"
                + "\"sender\":\"p/alpha\",\"task_id\":\"T-0.5\",\"type\":\"claim\",\"u\":-0.0,\"z\":-0.0}");
        assertThat(MessageAuthenticator.mac("s3cret", canonical))
                .isEqualTo("be90456735806241cbbe615b96eaf708f487b027b36bd58d16671d6600df8559");
        // a later member of the same name that is no zero keeps its value
        assertThat(json.parse("{\"a\":[-0.0],\"a\":{\"0\":0.5},\"b\":-0.0,\"b\":[2]}").toString())
                .isEqualTo("{\"a\":{\"0\":0.5},\"b\":[2]}");
    }

    @Test
    void idempotencyDigestIsAsciiEscapedSortedSha256() throws Exception {
        JsonNode d = json.parse("{\"sender\":\"p/alpha\",\"type\":\"claim\",\"task_id\":\"T-1\","
                + "\"note\":\"caf\\u00e9\",\"idem_key\":\"k\",\"ttl_seconds\":1e16,\"n\":5.0}");
        String canonical = CanonicalJson.write(d, true);
        assertThat(canonical).isEqualTo("{\"idem_key\":\"k\",\"n\":5.0,\"note\":\"caf\\u00e9\",\"sender\":\"p/alpha\","
                + "\"task_id\":\"T-1\",\"ttl_seconds\":1e+16,\"type\":\"claim\"}");
        String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(canonical.getBytes(StandardCharsets.US_ASCII)));
        assertThat(hex).isEqualTo("16b27fc5f31d2b212ab4880751845f80e222165b41387c438bb90705e2d30e83");
    }

    @Test
    void strictDecoderRefusesWhatTheContractCallsMalformed() {
        assertThat(json.parse("{\"a\":NaN}")).isNull();
        assertThat(json.parse("{\"a\":Infinity}")).isNull();
        assertThat(json.parse("{\"a\":1e400}")).isNull();
        assertThat(json.parse("{\"a\":" + "9".repeat(5000) + "}")).isNull();
        assertThat(json.parse("{} trailing")).isNull();
        assertThat(json.parse("")).isNull();
        assertThat(json.parse(new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xff, '"', '}'})).isNull();
        assertThat(json.parse("[".repeat(64) + "]".repeat(64))).isNotNull();
        assertThat(json.parse("[".repeat(65) + "]".repeat(65))).isNull();
        assertThat(json.parse("{\"a\":5.0}").get("a").isFloatingPointNumber()).isTrue();
    }
}
