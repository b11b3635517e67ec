package dev.synapsehub.journal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The lenient epoch read from a damaged claim row's raw text. */
class EpochFloorTest {
    @Test
    void readsTheDigitsOfTheEpochMember() {
        assertThat(EpochFloor.read("{\"task_id\":\"t\",\"epoch\":42,\"version\":1}")).isEqualTo(42);
        assertThat(EpochFloor.read("{\"epoch\" :\n\t 7}")).isEqualTo(7);
        assertThat(EpochFloor.read("{\"task_id\":\"t\",\"epoch\":12")).as("truncated after the digits").isEqualTo(12);
    }

    @Test
    void takesTheHighestWhenTheMemberAppearsMoreThanOnce() {
        assertThat(EpochFloor.read("{\"epoch\":3,\"x\":{\"epoch\":9},\"epoch\":5}")).isEqualTo(9);
    }

    @Test
    void readsNothingThatIsNotAPlainEpoch() {
        assertThat(EpochFloor.read("{\"epoch\":\"77\"}")).isZero();
        assertThat(EpochFloor.read("{\"epoch\":-3}")).isZero();
        assertThat(EpochFloor.read("{\"epoch\":1e30}")).isZero();
        assertThat(EpochFloor.read("{\"epoch\":2.5}")).isZero();
        assertThat(EpochFloor.read("{\"epoch\":1234567890123456789}")).as("past 18 digits").isZero();
        assertThat(EpochFloor.read("{\"epoch\":")).isZero();
        assertThat(EpochFloor.read("{\"epoch\"")).isZero();
        assertThat(EpochFloor.read("{\"epochs\":4}")).isZero();
        assertThat(EpochFloor.read("")).isZero();
        assertThat(EpochFloor.read((String) null)).isZero();
        assertThat(EpochFloor.read((byte[]) null)).isZero();
    }

    @Test
    void textInsideAStringValueCannotPoseAsTheMember() {
        assertThat(EpochFloor.read("{\"note\":\"\\\"epoch\\\":999\",\"epoch\":2}")).isEqualTo(2);
    }

    @Test
    void onlyClaimFamilyKindsCarryAnEpoch() {
        assertThat(EpochFloor.carriesEpoch("claim")).isTrue();
        assertThat(EpochFloor.carriesEpoch("task_update")).isTrue();
        assertThat(EpochFloor.carriesEpoch("checkpoint")).isTrue();
        assertThat(EpochFloor.carriesEpoch("handoff")).isTrue();
        assertThat(EpochFloor.carriesEpoch("release")).isFalse();
        assertThat(EpochFloor.carriesEpoch("claim_denial")).isFalse();
        assertThat(EpochFloor.carriesEpoch(null)).isFalse();
    }
}
