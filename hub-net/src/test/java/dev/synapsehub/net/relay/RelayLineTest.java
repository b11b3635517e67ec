package dev.synapsehub.net.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The relay-log line layout of contract A5.2, checked against the contract's own example. */
class RelayLineTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void theContractsExampleLine() throws Exception {
        ObjectNode frame = (ObjectNode) MAPPER.readTree("{\"sender\":\"P/a\",\"target\":\"all\",\"type\":\"chat\","
                + "\"payload\":\"h\u00e9llo\",\"timestamp\":1796105003.907,\"hub_id\":\"syn-0b698759\",\"msg_id\":1,"
                + "\"client_msg_id\":\"c1\",\"client_timestamp\":5.5,\"seq\":1}");
        assertThat(RelayLine.of(frame)).isEqualTo("{\"v\":2,\"i\":1,\"ty\":\"chat\",\"s\":\"P/a\",\"to\":\"all\","
                + "\"p\":\"h\\u00e9llo\",\"t\":1796105003907,\"h\":\"syn-0b698759\",\"c\":\"\",\"x\":{\"client_msg_id\":\"c1\","
                + "\"client_timestamp\":5.5,\"seq\":1}}");
    }

    @Test
    void nonChatFramesHaveMsgIdZeroNoTargetMeansAllAndNoExtrasOmitX() throws Exception {
        ObjectNode frame = (ObjectNode) MAPPER.readTree("{\"sender\":\"SynapseHub\",\"type\":\"presence_update\","
                + "\"payload\":{\"n\":[1,true,null]},\"timestamp\":2.0009,\"hub_id\":\"h\",\"channel\":\"  room \"}");
        assertThat(RelayLine.of(frame)).isEqualTo("{\"v\":2,\"i\":0,\"ty\":\"presence_update\",\"s\":\"SynapseHub\","
                + "\"to\":\"all\",\"p\":{\"n\":[1,true,null]},\"t\":2000,\"h\":\"h\",\"c\":\"room\"}");
    }
}
