package dev.mcpd.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

class ByteSizeTest {

    @Test
    void plainIntegerIsBytes() {
        assertEquals(1_048_576L, ByteSize.parse("1048576"));
        assertEquals(0L, ByteSize.parse("0"));
    }

    @Test
    void binaryUnitsMultiplyBy1024() {
        assertEquals(10L, ByteSize.parse("10B"));
        assertEquals(512L * 1024, ByteSize.parse("512KiB"));
        assertEquals(16L * 1024 * 1024, ByteSize.parse("16MiB"));
        assertEquals(1024L * 1024 * 1024, ByteSize.parse("1GiB"));
        assertEquals(8L * 1024 * 1024 * 1024, ByteSize.parse("8GiB"));
    }

    @Test
    void spacesMayStandBetweenNumberAndUnit() {
        assertEquals(16L * 1024 * 1024, ByteSize.parse("16 MiB"));
        assertEquals(16L * 1024 * 1024, ByteSize.parse("16   MiB"));
    }

    @Test
    void negativeSizeIsRefusedWithOneLineSayingHowToWriteOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ByteSize.parse("-5"));
        assertEquals("\"-5\" is not a byte size: use a whole number of bytes, KiB, MiB or GiB (e.g. 16MiB)",
                e.getMessage());
    }

    @TestFactory
    Stream<DynamicTest> anythingElseIsNotAByteSize() {
        return Stream.of("", " ", "1.5MiB", "0.5", "10MB", "10kib", "10 mib", "10KB", "GiB", "MiB16", "1e6",
                        "+5", "16 MiB extra", "0x10")
                .map(text -> dynamicTest("\"" + text + "\"", () -> {
                    IllegalArgumentException e =
                            assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(text));
                    assertEquals("\"" + text + "\" is not a byte size: use a whole number of bytes, KiB, MiB or GiB"
                            + " (e.g. 16MiB)", e.getMessage());
                }));
    }

    @Test
    void sizesBeyondALongAreRefusedNotWrapped() {
        assertEquals("\"9223372036854775808\" is too large a byte size",
                assertThrows(IllegalArgumentException.class, () -> ByteSize.parse("9223372036854775808")).getMessage());
        assertEquals("\"8589934592GiB\" is too large a byte size",
                assertThrows(IllegalArgumentException.class, () -> ByteSize.parse("8589934592GiB")).getMessage());
        assertEquals(Long.MAX_VALUE, ByteSize.parse("9223372036854775807"));
    }

    @Test
    void formatUsesTheLargestUnitThatIsExactUpToMiB() {
        assertEquals("1024 MiB", ByteSize.format(ByteSize.GIB));
        assertEquals("16 MiB", ByteSize.format(16 * ByteSize.MIB));
        assertEquals("1536 KiB", ByteSize.format(1536 * ByteSize.KIB));
        assertEquals("512 KiB", ByteSize.format(512 * ByteSize.KIB));
        assertEquals("1000 bytes", ByteSize.format(1000));
        assertEquals("1 byte", ByteSize.format(1));
        assertEquals("0 bytes", ByteSize.format(0));
    }
}
