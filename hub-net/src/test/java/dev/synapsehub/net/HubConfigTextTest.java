package dev.synapsehub.net;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The configuration's text (a log line, an exception message) never carries the connect token. */
class HubConfigTextTest {
    @Test
    void theConnectTokenIsShownAsSetAndEveryOtherComponentAsTheRecordShowsIt() {
        HubConfig c = HubConfig.builder().token("s3cret-connect-token").port(4711).hostRatePerSecond(2.5).build();
        assertThat(c.toString()).doesNotContain("s3cret").contains("token=(set)").contains("port=4711")
                .contains("hostRatePerSecond=2.5").startsWith("HubConfig[").endsWith("]");
        assertThat(HubConfig.builder().build().toString()).contains("token=null");
    }
}
